"""The review app end to end in a real browser: Debian's Chromium, driven by Playwright.

The browser is the system's `/usr/bin/chromium` (`$RECON_CHROMIUM` to point elsewhere),
launched headless; no browser is downloaded (`make test` installs Debian's `chromium` when it
is missing). A missing browser fails this test: it is never skipped.

The test signs in, filters the queue, opens a break, confirms a candidate, resolves a break
with a note, reopens it, and checks that the audit log and the next run agree. It saves
screenshots of the queue and a break page at 1400, 800 and 390 px in
build/review-screenshots/.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from recon.reconciliation import audit
from recon.reconciliation.decisions import load_decisions, load_history
from recon.reconciliation.manual import load_manual_matches
from recon.review.app import ReviewSettings, create_app

from .conftest import PASSWORDS, ReviewWorld, add_parts, add_users, serve, uid

CHROMIUM = os.environ.get("RECON_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SHOTS = Path(__file__).resolve().parents[2] / "build" / "review-screenshots"


WIDTHS = (1400, 800, 390)  # a desk, a half screen, a phone


def _shoot(page: Page, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        # nothing may stick out sideways: the page scrolls down, never right
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} at {width} px is {overflow} px too wide"
    page.set_viewport_size({"width": 1400, "height": 900})


@contextmanager
def _browser(rworld: ReviewWorld) -> Iterator[tuple[str, Page]]:
    """(base URL, a page of headless Chromium) on the review app over `rworld`."""
    assert shutil.which(CHROMIUM) or Path(CHROMIUM).is_file(), (
        f"{CHROMIUM} is missing: `make test` installs Debian's chromium "
        "(apt-get install -y chromium), or set RECON_CHROMIUM"
    )
    app = create_app(rworld.data, settings=ReviewSettings.load(rworld.data))
    with serve(app) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(15_000)
            yield base, page
        finally:
            browser.close()


@pytest.mark.slow
def test_review_in_a_real_browser(rworld: ReviewWorld) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    add_users(rworld.data)
    with _browser(rworld) as (base, page):
        # sign in
        page.goto(base + "/")
        expect(page).to_have_url(f"{base}/login?next=%2F")
        page.fill("input[name=name]", "ana")
        page.fill("input[name=password]", "wrong password")
        page.click("button[type=submit]")
        expect(page.locator(".error")).to_contain_text("Usuário ou senha errados")
        page.fill("input[name=password]", PASSWORDS["ana"])
        page.click("button[type=submit]")
        expect(page.locator("[data-testid=who]")).to_have_text("ana · approver")
        expect(page.locator("tr[data-break-id]")).to_have_count(3)
        _shoot(page, "queue")

        # filter: the ambiguous matches, then open the break
        page.select_option("select[name=category]", "ambiguous_match")
        page.click("form.filters button[type=submit]")
        expect(page.locator("tr[data-break-id]")).to_have_count(1)
        assert "category=ambiguous_match" in page.url
        page.click(f"tr[data-break-id='{rworld.ambiguous}'] td.reason a")
        expect(page).to_have_url(f"{base}/breaks/{rworld.ambiguous}?category=ambiguous_match")
        _shoot(page, "break")

        # confirm one candidate
        page.check(f"input[name=intent_id][value='{uid(2)}']")
        page.fill("[data-testid=confirm-form] input[name=note]", "payer confirmed by phone")
        page.click("[data-testid=confirm-form] button[type=submit]")
        expect(page.locator(".done").first).to_contain_text("Candidato confirmado")

        # resolve the unexplained credit with a note, then reopen it
        page.goto(base + "/?q=maria")
        expect(page.locator("tr[data-break-id]")).to_have_count(1)
        page.click(f"tr[data-break-id='{rworld.stranger}'] td.reason a")
        page.fill("[data-testid=resolve-form] textarea", "returned to the payer, FIN-7")
        page.click("[data-testid=resolve-form] button[type=submit]")
        expect(page.locator("[data-testid=decision]")).to_contain_text("resolvida por ana")
        page.goto(base + "/")
        expect(page.locator("tr[data-break-id]")).to_have_count(2)
        page.goto(f"{base}/breaks/{rworld.stranger}")
        page.fill("[data-testid=reopen-form] textarea", "the return bounced")
        page.click("[data-testid=reopen-form] button[type=submit]")
        expect(page.locator("[data-testid=decision]")).to_have_text("aberta, sem decisão")
        expect(page.locator("[data-testid=decisions]")).to_contain_text("the return bounced")
        expect(page.locator("[data-testid=decisions]")).to_contain_text("FIN-7")
        # a bad form: a clear message, nothing written
        before = audit.audit_path(rworld.data).read_text()
        page.evaluate("document.querySelector('[data-testid=resolve-form] textarea')"
                      ".removeAttribute('required')")  # fmt: skip
        page.click("[data-testid=resolve-form] button[type=submit]")
        expect(page.locator("[data-testid=error]")).to_contain_text("write a note")
        assert audit.audit_path(rworld.data).read_text() == before
        _shoot(page, "break-history")

    # the audit log and the next run agree
    assert audit.verify(rworld.data).ok
    entries = audit.read_entries(rworld.data)
    assert [(e["action"], e["by"]) for e in entries] == [
        ("confirm_match", "ana"), ("resolve", "ana"), ("reopen", "ana")
    ]  # fmt: skip
    assert entries[0]["after"] == {"line_id": rworld.credit_line, "intent_id": uid(2)}
    second = rworld.rerun("20261102T200000000000Z-0002")
    matches = pq.read_table(second.matches_path).to_pylist()
    assert [(m["intent_id"], m["line_id"], m["rule"]) for m in matches] == [
        (uid(2), rworld.credit_line, "manual")
    ]
    open_now = {r["break_id"] for r in pq.read_table(second.exceptions_path).to_pylist()}
    assert rworld.stranger in open_now  # reopened: open again
    assert rworld.ambiguous not in open_now  # the confirmed candidate settled it
    assert load_decisions(rworld.data) == {}
    assert [d.action for d in load_history(rworld.data)[rworld.stranger]] == ["resolve", "reopen"]
    for name in ("queue", "break", "break-history"):
        for width in WIDTHS:
            assert (SHOTS / f"{name}-{width}.png").stat().st_size > 5_000


def _sign_in(page: Page, base: str, name: str) -> None:
    page.goto(base + "/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORDS[name])
    page.click("button[type=submit]")
    expect(page.locator("[data-testid=who]")).to_contain_text(name)


@pytest.mark.slow
def test_pair_by_hand_and_undo_in_a_real_browser(rworld: ReviewWorld) -> None:
    """A missing credit paired with the unexplained credit; the next run matches them."""
    add_users(rworld.data)
    with _browser(rworld) as (base, page):
        _sign_in(page, base, "rita")
        page.goto(f"{base}/breaks/{rworld.missing}")
        form = page.locator("[data-testid=pair-form]")
        expect(form).to_contain_text("MARIA DA SILVA")
        form.locator("input[name=line_id]").check()
        form.locator("textarea[name=note]").fill("paid from her own account, R$ 1.146,56 to return")
        form.locator("button[type=submit]").click()
        expect(page.locator(".done").first).to_contain_text("Pareado")
        expect(page.locator("[data-testid=unpair-form]")).to_contain_text("rita")
        SHOTS.mkdir(parents=True, exist_ok=True)
        _shoot(page, "break-paired")
        second = rworld.rerun("20261102T200000000000Z-0002")
        matches = pq.read_table(second.matches_path).to_pylist()
        assert (uid(3), "manual") in {(m["intent_id"], m["rule"]) for m in matches}
        rows = pq.read_table(second.exceptions_path).to_pylist()
        open_now = {r["break_id"] for r in rows}
        assert rworld.missing not in open_now and rworld.stranger not in open_now
        # the rest stays a break of its kind: R$ 1.234,56 for R$ 88,00
        assert [(r["category"], r["intent_id"]) for r in rows if r["intent_id"] == uid(3)] == [
            ("onramp_overpaid", uid(3))
        ]
        # the closed filter finds the paired break after the run, with who and why
        page.goto(base + "/")
        page.select_option("select[name=decision]", "closed")
        page.click("form.filters button[type=submit]")
        assert "decision=closed" in page.url
        row = page.locator(f"tr[data-break-id='{rworld.missing}']")
        expect(row.locator("[data-testid=closed]")).to_contain_text("pareada por rita")
        expect(row.locator("[data-testid=closed]")).to_contain_text("her own account")
        _shoot(page, "queue-closed")
        # undo from the same page: the next run has both breaks again
        page.goto(f"{base}/breaks/{rworld.missing}")
        page.fill("[data-testid=unpair-form] input[name=note]", "wrong payer after all")
        page.click("[data-testid=unpair-form] button[type=submit]")
        expect(page.locator(".done").first).to_contain_text("Pareamento desfeito")
    third = rworld.rerun("20261102T210000000000Z-0003")
    open_now = {r["break_id"] for r in pq.read_table(third.exceptions_path).to_pylist()}
    assert {rworld.missing, rworld.stranger} <= open_now
    assert [e["action"] for e in audit.read_entries(rworld.data)] == ["pair", "unpair"]


def _no_serious_violation(page: Page, what: str) -> None:
    """axe-core (bundled by axe-playwright-python, injected from disk: nothing fetched) finds
    no serious or critical accessibility violation on the page."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    bad = [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(n["target"][0] for n in v["nodes"][:3])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not bad, f"{what}: " + " | ".join(bad)


@pytest.mark.slow
def test_the_desk_in_a_real_browser(rworld: ReviewWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bulk resolve under four-eyes, the approver's inbox, the closed filter after the next
    run, the keyboard path to the first break, pt-BR and English, and axe-core on every page
    (the queue, a break, sign-in and the report)."""
    from recon.report import render

    SHOTS.mkdir(parents=True, exist_ok=True)
    add_users(rworld.data)
    rworld.data.config_path.write_text("[review]\nfour_eyes_p1 = true\n", encoding="utf-8")
    with _browser(rworld) as (base, page):
        page.goto(base + "/login")
        assert page.get_attribute("html", "lang") == "pt-BR"
        _no_serious_violation(page, "sign-in")
        _sign_in(page, base, "rita")
        # the keyboard: the first Tab reaches the skip link, Enter lands on the first break
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "skip"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.hasAttribute('data-row-link')")
        page.keyboard.press("j")
        second = page.evaluate("document.activeElement.closest('tr').dataset.breakId")
        assert second == page.locator("tr[data-break-id]").nth(1).get_attribute("data-break-id")
        _no_serious_violation(page, "queue")
        # bulk: the P1 and the P2 ticked, one note; the P1 waits for a second approver
        for bid in (rworld.missing, rworld.stranger):
            page.check(f"tr[data-break-id='{bid}'] input[name=break_id]")
        page.fill("[data-testid=bulk-form] input[name=note]", "conferido com o banco")
        page.click("[data-testid=bulk-form] button[value=resolve]")
        done = page.locator("[data-testid=done]")
        expect(done).to_contain_text("1 divergência resolvida.")
        expect(done).to_contain_text("1 resolução P1 aguarda um segundo aprovador")
        expect(page.locator("tr[data-break-id]")).to_have_count(2)
        page.click("header form button")  # sign out
        # the approver sees first what waits for her, and approves it from there
        _sign_in(page, base, "ana")
        inbox = page.locator("[data-testid=inbox]")
        expect(inbox).to_contain_text("1 aguarda sua aprovação")
        expect(inbox).to_contain_text("pedido por rita")
        _shoot(page, "queue-inbox")
        inbox.locator("a").first.click()
        expect(page.locator("[data-testid=approve-form]")).to_contain_text("conferido com o banco")
        _no_serious_violation(page, "break page")
        page.click("[data-testid=approve-form] button[type=submit]")
        expect(page.locator(".done").first).to_contain_text("Aprovada e resolvida")
        page.goto(base + "/")
        expect(page.locator("[data-testid=inbox]")).to_have_count(0)
        # the next run leaves both out; the closed filter still finds them, who and why
        run = rworld.rerun("20261102T200000000000Z-0002")
        page.goto(base + "/")
        page.select_option("select[name=decision]", "closed")
        page.click("form.filters button[type=submit]")
        closed = page.locator("[data-testid=closed]")
        expect(closed).to_have_count(2)
        expect(page.locator(f"tr[data-break-id='{rworld.missing}']")).to_contain_text(
            "aprovada por ana"
        )
        expect(page.locator(f"tr[data-break-id='{rworld.stranger}']")).to_contain_text(
            "resolvida por rita"
        )
        _shoot(page, "queue-closed-after-run")
        # the report of that run, as a file: no serious violation, no sideways scroll
        report = render(run.path, charts=False)
        page.goto(report.as_uri())
        _no_serious_violation(page, "report")
        _shoot(page, "report")
    # English when the person chose it
    monkeypatch.setenv("RECON_LANG", "en")
    with _browser(rworld) as (base, page):
        _sign_in(page, base, "ana")
        assert page.get_attribute("html", "lang") == "en"
        expect(page.locator("table.queue")).to_contain_text("Ambiguous match")
        expect(page.locator("[data-testid=total]")).to_contain_text("1 break matches")
        _no_serious_violation(page, "queue in English")
    for name in ("queue-inbox", "queue-closed-after-run", "report"):
        for width in WIDTHS:
            assert (SHOTS / f"{name}-{width}.png").stat().st_size > 5_000


@pytest.mark.slow
def test_pair_in_parts_with_a_difference_and_undo_in_a_real_browser(rworld: ReviewWorld) -> None:
    """Two credits for one onramp: the page sums the ticked lines and asks why the amounts
    differ before pairing; the pair shows the sum and the difference, the next run matches
    both lines and keeps the rest as an underpayment, and one click undoes both."""
    five, two = add_parts(rworld)
    add_users(rworld.data)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _browser(rworld) as (base, page):
        _sign_in(page, base, "rita")
        page.goto(f"{base}/breaks/{rworld.missing}")
        form = page.locator("[data-testid=pair-form]")
        summary = form.locator("[data-testid=pair-sum]")
        expect(summary).to_be_hidden()
        form.locator(f"input[value='{five}']").check()
        form.locator(f"input[value='{two}']").check()
        expect(summary).to_be_visible()
        expect(summary).to_contain_text("R$ 80,00")
        expect(summary).to_contain_text("−R$ 8,00")
        expect(summary).to_contain_text("explique na nota")
        _shoot(page, "break-pair-parts")
        # no note: the browser asks for one and nothing is sent
        form.locator("button[type=submit]").click()
        assert page.url.endswith(f"/breaks/{rworld.missing}")
        assert not load_manual_matches(rworld.data)
        form.locator("textarea[name=note]").fill("dois PIX do irmão; faltam R$ 8,00")
        form.locator("button[type=submit]").click()
        expect(page.locator(".done").first).to_contain_text("Pareado")
        expect(page.locator("[data-testid=pair-total]")).to_have_text("R$ 80,00")
        expect(page.locator("[data-testid=pair-difference]")).to_have_text("−R$ 8,00")
        expect(page.locator("[data-testid=paired-card]")).to_contain_text("Pago a menor")
        _shoot(page, "break-paired-parts")
        second = rworld.rerun("20261102T200000000000Z-0002")
        matches = pq.read_table(second.matches_path).to_pylist()
        assert {(m["line_id"], m["rule"]) for m in matches if m["intent_id"] == uid(3)} == {
            (five, "manual"), (two, "manual"),
        }  # fmt: skip
        rows = pq.read_table(second.exceptions_path).to_pylist()
        assert [(r["category"], r["actual_cents"]) for r in rows if r["intent_id"] == uid(3)] == [
            ("onramp_underpaid", 8_000)
        ]
        # undo from the underpayment's page: both lines go back
        [under] = [r["break_id"] for r in rows if r["category"] == "onramp_underpaid"]
        page.goto(f"{base}/breaks/{under}")
        undo = page.locator("[data-testid=unpair-form]")
        expect(undo.locator("button[type=submit]")).to_contain_text("todos os 2")
        undo.locator("input[name=note]").fill("era outro pedido")
        undo.locator("button[type=submit]").click()
        expect(page.locator(".done").first).to_contain_text("Pareamento desfeito")
    assert load_manual_matches(rworld.data) == []
    third = rworld.rerun("20261102T210000000000Z-0003")
    open_now = {r["break_id"] for r in pq.read_table(third.exceptions_path).to_pylist()}
    assert rworld.missing in open_now


@pytest.mark.slow
def test_a_suggestion_paired_in_one_click_in_a_real_browser(rworld: ReviewWorld) -> None:
    """A credit of the missing onramp's amount from a payer whose name does not fit: the break
    page suggests it with why it was not paired; one click pairs them; the next run matches
    them (rule manual). The page with suggestions passes the accessibility check."""
    from recon.testing.handbuilt import T0, World, line

    other = line(31, amount=8_800, at=T0 + timedelta(minutes=20), name="JOSE ESTRANHO", doc=None)
    World(rworld.data).statement([other], batch="suggested")
    rworld.rerun("20261102T193000000000Z-0001")
    add_users(rworld.data)
    with _browser(rworld) as (base, page):
        _sign_in(page, base, "rita")
        page.goto(f"{base}/breaks/{rworld.missing}")
        first = page.locator("[data-testid=suggestion]").first
        expect(first).to_have_attribute("data-line-id", other["line_id"])
        expect(first.locator("[data-testid=differences]")).to_contain_text(
            "nome do pagador 'JOSE ESTRANHO' vs 'CARLA DIAS'"
        )
        _no_serious_violation(page, "a break page with suggestions")
        SHOTS.mkdir(parents=True, exist_ok=True)
        _shoot(page, "break-suggestions")
        first.locator("button[type=submit]").click()
        expect(page.locator(".done").first).to_contain_text("Pareado")
        expect(page.locator("[data-testid=paired-card]")).to_contain_text("sugestão 1 aceita")
    [made] = load_manual_matches(rworld.data)
    assert (made.intent_id, made.line_id) == (uid(3), other["line_id"])
    again = rworld.rerun("20261102T200000000000Z-0002")
    matches = pq.read_table(again.matches_path).to_pylist()
    assert (uid(3), other["line_id"], "manual") in {
        (m["intent_id"], m["line_id"], m["rule"]) for m in matches
    }
