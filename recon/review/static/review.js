// recon review: the only script. Everything works without it; it adds copying an id,
// ticking every break of a page, and the keyboard shortcuts each page lists.
"use strict";

document.addEventListener("click", (event) => {
  const el = event.target.closest("[data-copy]");
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.dataset.copy).then(() => {
    el.classList.add("copied");
    el.setAttribute("title", el.dataset.copy);
  });
});

// a skip link moves the focus to its target (the first break's link, or the actions)
document.addEventListener("click", (event) => {
  const skip = event.target.closest("a.skip");
  if (!skip) return;
  const target = document.querySelector(skip.getAttribute("href"));
  if (!target) return;
  event.preventDefault();
  const first = target.querySelector("a[data-row-link]") || target;
  first.focus();
});

document.addEventListener("change", (event) => {
  const all = event.target.closest("[data-check-all]");
  if (!all) return;
  const form = all.dataset.checkAll;
  document.querySelectorAll(`input[type=checkbox][form="${form}"]`).forEach((box) => {
    box.checked = all.checked;
  });
});

function rowLinks() {
  return Array.from(document.querySelectorAll("a[data-row-link]"));
}

function moveInQueue(step) {
  const links = rowLinks();
  if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = links[Math.min(links.length - 1, Math.max(0, at < 0 ? 0 : at + step))];
  document.querySelectorAll("tr.current").forEach((tr) => tr.classList.remove("current"));
  next.closest("tr").classList.add("current");
  next.focus();
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target.closest("input, textarea, select, [contenteditable]");
  if (typing) return;
  const key = event.key;
  const links = rowLinks();
  if (links.length && (key === "j" || key === "k")) {
    event.preventDefault();
    moveInQueue(key === "j" ? 1 : -1);
    return;
  }
  if (links.length && key === "x") {
    const row = document.activeElement.closest("tr");
    const box = row && row.querySelector("input[type=checkbox]");
    if (box) {
      event.preventDefault();
      box.checked = !box.checked;
    }
    return;
  }
  const el = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
  if (!el) return;
  event.preventDefault();
  if (el.matches("input, textarea, select")) el.focus();
  else el.click();
});

// Pair by hand: the sum of the ticked lines and its difference with the intent's amount,
// shown while they are ticked (the server says the same once paired).
document.addEventListener("change", (event) => {
  const form = event.target.closest("[data-testid=pair-form]");
  const out = form && form.querySelector("[data-testid=pair-sum]");
  if (!out) return;
  const brl = (cents) => (cents < 0 ? "−" : "") + new Intl.NumberFormat("pt-BR", {
    style: "currency", currency: "BRL",
  }).format(Math.abs(cents) / 100).replace(/\u00a0/g, " ");
  const ticked = [...form.querySelectorAll("input[name=line_id]:checked")];
  const sum = ticked.reduce((total, box) => total + Number(box.dataset.cents), 0);
  const difference = sum - Number(out.dataset.expected);
  out.querySelector("[data-sum]").textContent = brl(sum);
  out.querySelector("[data-difference]").textContent = brl(difference);
  out.querySelector("[data-when-different]").hidden = difference === 0;
  out.hidden = ticked.length === 0;
});
