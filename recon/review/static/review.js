// recon review: the only script. Click an id to copy its full value.
document.addEventListener("click", (event) => {
  const el = event.target.closest("[data-copy]");
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.dataset.copy).then(() => {
    el.classList.add("copied");
    el.setAttribute("title", "copied: " + el.dataset.copy);
  });
});
