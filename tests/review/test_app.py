"""The review app over a hand-built world: the queue, the break page, actions, CSRF, roles."""

from __future__ import annotations

import io

import httpx
import pyarrow.parquet as pq
import pytest

from recon.config import DataDir
from recon.reconciliation import audit
from recon.reconciliation.decisions import load_decisions, load_history
from recon.reconciliation.manual import load_manual_matches

from .conftest import ReviewWorld, add_parts, add_users, csrf, listed, sign_in, uid


def _open_ids(rworld: ReviewWorld) -> set[str]:
    from recon import catalog

    con = catalog.connect(rworld.data)
    return {r[0] for r in con.execute("SELECT break_id FROM recon_exceptions").fetchall()}


def test_the_queue_lists_exactly_the_open_breaks(rworld: ReviewWorld, open_app) -> None:
    c = open_app(rworld.data)
    page = c.get("/")
    assert page.status_code == 200
    assert set(listed(page.text)) == _open_ids(rworld) and len(listed(page.text)) == 3
    # most urgent first: the P1 before the P2 before the P3
    assert listed(page.text) == [rworld.missing, rworld.stranger, rworld.ambiguous]
    assert "/static/review.css" in page.text and "http" not in page.text.split("<body>")[0]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"category": "ambiguous_match"}, ["ambiguous"]),
        ({"priority": "P1"}, ["missing"]),
        ({"priority": "p2"}, ["stranger"]),
        ({"state": "new"}, ["missing", "stranger", "ambiguous"]),
        ({"state": "persisting"}, []),
        ({"min_age": "1"}, []),
        ({"max_age": "0"}, ["missing", "stranger", "ambiguous"]),
        ({"coverage": "covered"}, ["missing", "stranger", "ambiguous"]),
        ({"coverage": "not_covered"}, []),
        ({"assignee": "-"}, ["missing", "stranger", "ambiguous"]),
        ({"q": uid(3)}, ["missing"]),
        ({"q": uid(3)[:8].upper()}, ["missing"]),
        ({"q": "maria da"}, ["stranger"]),
        ({"q": "1.234,56"}, ["stranger"]),
        ({"q": "1234.56"}, ["stranger"]),
        ({"q": "R$ 1.234,56"}, ["stranger"]),
        ({"q": "88,00"}, ["missing"]),
        ({"q": "E18236120202611021300"}, ["stranger", "ambiguous"]),
        ({"sort": "-amount"}, ["ambiguous", "missing", "stranger"]),
        ({"sort": "amount"}, ["stranger", "missing", "ambiguous"]),
        ({"sort": "category"}, ["ambiguous", "missing", "stranger"]),
        ({"per_page": "1"}, ["missing"]),
        ({"per_page": "1", "page": "2"}, ["stranger"]),
        ({"per_page": "1", "page": "99"}, ["ambiguous"]),  # past the end: the last page
        ({"status": "resolved"}, []),
    ],
)
def test_filters_search_sort_and_pages(rworld: ReviewWorld, open_app, params, expected) -> None:
    c = open_app(rworld.data)
    page = c.get("/", params=params)
    assert page.status_code == 200, page.text[:400]
    assert listed(page.text) == [getattr(rworld, name) for name in expected]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"category": "nope"}, "unknown category"),
        ({"priority": "P9"}, "priority must be P1, P2 or P3"),
        ({"min_age": "x"}, "min_age must be a whole number"),
        ({"min_age": "5", "max_age": "2"}, "above max_age"),
        ({"per_page": "0"}, "per_page must be between 1 and 100000"),
        ({"sort": "evil"}, "sort must be one of"),
        ({"status": "gone"}, "decision must be one of"),
        ({"decision": "gone"}, "decision must be one of"),
        ({"assignee": "a b"}, "is not a user name"),
        ({"q": "x" * 201}, "longer than 200"),
    ],
)
def test_a_bad_filter_is_a_clear_400(rworld: ReviewWorld, open_app, params, message) -> None:
    page = open_app(rworld.data).get("/", params=params)
    assert page.status_code == 400
    assert message in page.text.replace("&#39;", "'")


def test_the_break_page_shows_evidence_and_candidates(rworld: ReviewWorld, open_app) -> None:
    c = open_app(rworld.data)
    page = c.get(f"/breaks/{rworld.ambiguous}")
    assert page.status_code == 200
    text = page.text
    assert uid(1) in text and uid(2) in text  # both candidates, to choose from
    assert "extrato.csv, linha 1 (csv)" in text  # the line with its source file and line
    assert "R$ 50,00" in text and "JOAO PEREIRA" in text
    missing = c.get(f"/breaks/{rworld.missing}").text
    assert "ORD-3" in missing and "completed" in missing  # the intent as the snapshot showed it
    assert c.get("/breaks/0123456789abcdef").status_code == 404
    assert c.get("/breaks/not-a-break").status_code == 404
    assert c.get("/breaks/..%2Fetc").status_code in (404, 405)


def _state(rworld: ReviewWorld) -> tuple[str, str, str]:
    paths = [audit.audit_path(rworld.data), rworld.data.root / "decisions.csv",
             rworld.data.root / "manual_matches.csv"]  # fmt: skip
    return tuple(p.read_text() if p.exists() else "" for p in paths)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("action", "form"),
    [
        ("assign", {"assignee": "ana"}),
        ("comment", {"note": "x"}),
        ("resolve", {"note": "paid"}),
        ("confirm", {"intent_id": uid(2)}),
    ],
)
def test_a_post_without_its_csrf_token_changes_nothing(
    rworld: ReviewWorld, open_app, action, form
) -> None:
    c = open_app(rworld.data)
    real = csrf(c)  # the client has a session
    before = _state(rworld)
    target = rworld.ambiguous if action == "confirm" else rworld.stranger
    r = c.post(f"/breaks/{target}/{action}", data=form)
    assert r.status_code == 403
    r = c.post(f"/breaks/{target}", data={**form, "action": action})
    assert r.status_code == 403
    r = c.post(f"/breaks/{target}/{action}", data={**form, "csrf_token": real[:-2] + "xx"})
    assert r.status_code == 403
    # another session's token is not this session's
    other = open_app(rworld.data)
    r = other.post(f"/breaks/{target}/{action}", data={**form, "csrf_token": real})
    assert r.status_code == 403
    assert _state(rworld) == before


def test_actions_are_audited_and_the_next_run_agrees(rworld: ReviewWorld, open_app) -> None:
    c = open_app(rworld.data)
    token = csrf(c)

    def post(bid: str, action: str, **form: str) -> str:
        r = c.post(f"/breaks/{bid}/{action}", data={**form, "csrf_token": token})
        assert r.status_code == 303, r.text[:500]
        return r.headers["location"]

    assert post(rworld.stranger, "assign", assignee="ana").endswith("done=assigned")
    r = c.post(f"/breaks/{rworld.stranger}",
               data={"action": "comment", "note": "asked the bank", "csrf_token": token})  # fmt: skip
    assert r.status_code == 303
    post(rworld.ambiguous, "confirm", intent_id=uid(2), note="payer confirmed")
    post(rworld.stranger, "resolve", note="returned to the payer")
    post(rworld.missing, "resolve", note="customer paid in cash")  # P1, approver, no four-eyes
    post(rworld.missing, "reopen", note="cash never arrived")
    page = c.get("/", params={"assignee": "ana", "status": "all"})
    assert listed(page.text) == [rworld.stranger]
    assert listed(c.get("/").text) == [rworld.missing, rworld.ambiguous]  # resolved one left
    assert listed(c.get("/?status=resolved").text) == [rworld.stranger]
    entries = audit.read_entries(rworld.data)
    assert [e["action"] for e in entries] == [
        "assign", "comment", "confirm_match", "resolve", "resolve", "reopen"
    ]  # fmt: skip
    assert audit.verify(rworld.data).ok
    history = c.get(f"/breaks/{rworld.missing}").text
    assert "customer paid in cash" in history and "cash never arrived" in history

    second = rworld.rerun("20261102T200000000000Z-0002")
    matches = pq.read_table(second.matches_path).to_pylist()
    assert [(m["intent_id"], m["line_id"], m["rule"]) for m in matches] == [
        (uid(2), rworld.credit_line, "manual")
    ]
    open_now = {
        r["break_id"]: r["category"] for r in pq.read_table(second.exceptions_path).to_pylist()
    }
    assert rworld.stranger not in open_now  # resolved in the app: decided in the run
    assert rworld.missing in open_now  # reopened in the app: open in the run
    assert rworld.ambiguous not in open_now  # the confirmed candidate settled it
    assert "onramp_missing_credit" in open_now.values()  # uid(1) now has no credit
    assert [d["break_id"] for d in second.summary.decided_breaks] == [rworld.stranger]
    assert set(load_decisions(rworld.data)) == {rworld.stranger}


@pytest.mark.parametrize(
    ("bid", "action", "form", "message"),
    [
        ("stranger", "resolve", {"note": "   "}, "write a note"),
        ("stranger", "comment", {"note": ""}, "write a note"),
        ("stranger", "comment", {"note": "x" * 2001}, "longer than 2000"),
        ("stranger", "reopen", {"note": "why"}, "not resolved"),
        ("stranger", "assign", {"assignee": "a;b"}, "is not a user name"),
        ("stranger", "assign", {"assignee": ""}, "already unassigned"),
        ("stranger", "confirm", {"intent_id": uid(1)}, "only an ambiguous match"),
        ("ambiguous", "confirm", {"intent_id": uid(3)}, "is not one of this line"),
        ("ambiguous", "confirm", {}, "choose one of the candidates"),
        ("stranger", "approve", {}, "no resolution of this break waits"),
        ("stranger", "delete", {}, "unknown action"),
    ],
)
def test_bad_input_is_a_clear_message_and_changes_nothing(
    rworld: ReviewWorld, open_app, bid, action, form, message
) -> None:
    c = open_app(rworld.data)
    token = csrf(c)
    before = _state(rworld)
    r = c.post(f"/breaks/{getattr(rworld, bid)}/{action}", data={**form, "csrf_token": token})
    assert r.status_code in (400, 404)
    assert message in r.text.replace("&#39;", "'")
    assert _state(rworld) == before


def test_sign_in_roles_and_four_eyes(rworld: ReviewWorld, open_app) -> None:
    add_users(rworld.data)
    c = open_app(rworld.data, four_eyes=True)
    r = c.get("/")
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    token = csrf(c, "/login")
    bad = c.post("/login", data={"name": "ana", "password": "wrong", "csrf_token": token})
    assert bad.status_code == 400 and "Usuário ou senha errados" in bad.text
    nobody = c.post("/login", data={"name": "zed", "password": "x", "csrf_token": token})
    assert nobody.status_code == 400
    assert c.post("/login", data={"name": "ana", "password": "approver-pass-1"}).status_code == 403

    def act(client, bid: str, action: str, **form: str):
        return client.post(f"/breaks/{bid}/{action}", data={**form, "csrf_token": csrf(client)})

    viewer = open_app(rworld.data, four_eyes=True)
    sign_in(viewer, "vera")
    assert set(listed(viewer.get("/").text)) == _open_ids(rworld)
    before = _state(rworld)
    r = act(viewer, rworld.stranger, "comment", note="hello")
    assert r.status_code == 403 and "cannot comment" in r.text
    assert _state(rworld) == before

    reviewer = open_app(rworld.data, four_eyes=True)
    sign_in(reviewer, "rita")
    assert act(reviewer, rworld.stranger, "resolve", note="fine").status_code == 303  # a P2
    # a P1 with four-eyes: a request, then a different approver
    assert (
        act(reviewer, rworld.missing, "resolve", note="paid in cash")
        .headers["location"]
        .endswith("done=requested")
    )
    assert rworld.missing not in load_decisions(rworld.data)
    r = act(reviewer, rworld.missing, "approve")
    assert r.status_code == 403  # a reviewer cannot approve

    ana = open_app(rworld.data, four_eyes=True)
    sign_in(ana, "ana")
    pending = ana.get("/?status=pending").text
    assert "aguardando aprovação" in pending and "1 aguarda sua aprovação" in pending
    assert act(ana, rworld.missing, "approve").headers["location"].endswith("done=approved")
    decided = load_decisions(rworld.data)[rworld.missing]
    assert decided.decided_by == "ana" and "requested by rita, approved by ana" in decided.note

    # the one who asked cannot approve their own request
    assert act(ana, rworld.missing, "reopen", note="again").status_code == 303
    assert act(ana, rworld.missing, "resolve", note="paid").status_code == 303
    r = act(ana, rworld.missing, "approve")
    assert r.status_code == 400 and "a different approver must approve" in r.text
    bia = open_app(rworld.data, four_eyes=True)
    sign_in(bia, "bia")
    assert act(bia, rworld.missing, "approve").status_code == 303
    assert [h.decided_by for h in load_history(rworld.data)[rworld.missing]] == [
        "ana",
        "ana",
        "bia",
    ]
    assert audit.verify(rworld.data).ok
    # sign out: the session is gone
    assert bia.post("/logout", data={"csrf_token": csrf(bia)}).status_code == 303
    assert bia.get("/").status_code == 303


def test_a_forged_session_cookie_is_a_new_anonymous_session(rworld: ReviewWorld, open_app) -> None:
    add_users(rworld.data)
    c = open_app(rworld.data)
    sign_in(c, "ana")
    cookie = c.cookies.get("recon_review")
    body, sig = cookie.split(".")
    import base64
    import json

    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["user"] = "bia"
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    c.cookies.set("recon_review", f"{forged}.{sig}")
    assert c.get("/").status_code == 303  # back to sign-in


def test_the_session_secret_file_is_private(rworld: ReviewWorld, open_app) -> None:
    open_app(rworld.data)
    secret = rworld.data.root / "review" / "secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    assert len(secret.read_text().strip()) == 64


def test_manual_matches_csv_written_by_the_app(rworld: ReviewWorld, open_app) -> None:
    c = open_app(rworld.data)
    token = csrf(c)
    c.post(f"/breaks/{rworld.ambiguous}/confirm", data={"intent_id": uid(1), "csrf_token": token})
    [m] = load_manual_matches(rworld.data)
    assert (m.intent_id, m.line_id, m.break_id) == (uid(1), rworld.credit_line, rworld.ambiguous)
    page = c.get(f"/breaks/{rworld.ambiguous}").text
    assert "a próxima execução o concilia" in page
    assert io.StringIO(page)  # rendered


def test_the_queue_as_json(rworld: ReviewWorld, open_app) -> None:
    c = open_app(rworld.data)
    body = c.get("/", params={"per_page": "2"}, headers={"accept": "application/json"}).json()
    assert (body["total"], body["pages"], body["per_page"]) == (3, 2, 2)
    assert [b["break_id"] for b in body["breaks"]] == [rworld.missing, rworld.stranger]
    assert body["breaks"][1]["actual_cents"] == 123_456
    assert c.get("/?format=json&priority=P7").status_code == 400


def test_a_demo_data_dir_lists_exactly_recon_exceptions(tmp_path, open_app) -> None:
    """The sandbox's demo world, reconciled: the app lists the same breaks as the view."""
    from recon import catalog
    from recon.ops.demo import ensure_demo_data

    data = ensure_demo_data(tmp_path / "demo", seed=3, days=3, intents_per_day=60)
    con = catalog.connect(data)
    want = sorted(r[0] for r in con.execute("SELECT break_id FROM recon_exceptions").fetchall())
    assert want
    c = open_app(data)
    seen: list[str] = []
    page = 1
    while True:  # page through the queue as a person would, 10 at a time
        html = c.get("/", params={"per_page": "10", "page": str(page)}).text
        seen += listed(html)
        if 'rel="next"' not in html:
            break
        page += 1
    assert sorted(seen) == want and len(seen) == len(set(seen))
    body = c.get("/?format=json&per_page=100000").json()
    assert sorted(b["break_id"] for b in body["breaks"]) == want
    # every break page opens
    for bid in want[:5]:
        assert c.get(f"/breaks/{bid}").status_code == 200


def test_coverage_filter_tells_covered_from_not_covered(data_dir, open_app) -> None:
    """A credit booked after the end of the period the statements cover is not covered."""
    from datetime import timedelta

    from recon.reconciliation import ReconcileSettings, reconcile
    from recon.testing.handbuilt import T0, World, intent, line

    from .conftest import AS_OF

    world = World(data_dir)
    world.snapshot([intent(3, amount=8_800, client_reference="ORD-3")], AS_OF)
    world.statement([line(9, amount=123_456, name="MARIA DA SILVA", doc=None)],
                    covers=(T0 - timedelta(days=30), T0 + timedelta(minutes=5)))  # fmt: skip
    result = reconcile(data_dir, settings=ReconcileSettings(), run_id="20261102T190000000000Z-0001")
    rows = {r["category"]: r["break_id"] for r in pq.read_table(result.exceptions_path).to_pylist()}
    c = open_app(data_dir)
    assert listed(c.get("/?coverage=not_covered").text) == [rows["unmatched_credit"]]
    covered = listed(c.get("/?coverage=covered").text)
    assert rows["unmatched_credit"] not in covered and set(covered) == set(rows.values()) - {
        rows["unmatched_credit"]
    }


def test_an_empty_data_dir_shows_an_empty_queue(data_dir, open_app) -> None:
    c = open_app(data_dir)
    page = c.get("/")
    assert page.status_code == 200 and "nenhuma ainda" in page.text and listed(page.text) == []
    assert c.get("/?format=json").json()["total"] == 0
    assert c.get("/breaks/0123456789abcdef").status_code == 404


def test_exports_of_the_current_filter(rworld: ReviewWorld, open_app) -> None:
    import zipfile

    c = open_app(rworld.data)
    r = c.get("/export.csv", params={"priority": "P2"})
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    text = r.content.decode("utf-8-sig")
    assert r.content.startswith(b"\xef\xbb\xbf")
    lines = text.strip().split("\r\n")
    assert len(lines) == 2 and ";" in lines[0]
    assert rworld.stranger in lines[1] and "1234,56" in lines[1]
    r = c.get("/export.xlsx", params={"q": "joao"})
    assert r.status_code == 200 and r.content[:2] == b"PK"
    with zipfile.ZipFile(io.BytesIO(r.content)) as book:
        names = book.namelist()
        shared = (
            book.read("xl/sharedStrings.xml").decode() if "xl/sharedStrings.xml" in names else ""
        )
        sheet = book.read("xl/worksheets/sheet1.xml").decode()
    assert rworld.ambiguous in shared + sheet and rworld.missing not in shared + sheet
    assert c.get("/export.pdf").status_code == 404
    assert c.get("/export.csv", params={"priority": "P9"}).status_code == 400


def test_pair_route_takes_several_lines_shows_their_sum_and_undoes_them_all(
    rworld: ReviewWorld, open_app
) -> None:
    """POST /breaks/<id>/pair with `line_id` twice: one payment in parts; the break page shows
    each line, the sum, the amount expected and the difference, and which break the rest
    stays; undoing one line undoes the pair."""
    five, two = add_parts(rworld)
    c = open_app(rworld.data)
    page = c.get(f"/breaks/{rworld.missing}").text
    assert f'value="{five}" data-cents="5500"' in page and 'data-testid="pair-sum"' in page
    r = c.post(f"/breaks/{rworld.missing}/pair",
               data={"line_id": [five, two], "note": "", "csrf_token": csrf(c)})  # fmt: skip
    assert (
        r.status_code == 400 and "write a note" in r.text and not load_manual_matches(rworld.data)
    )
    r = c.post(f"/breaks/{rworld.missing}/pair",
               data={"line_id": [five, two], "note": "two PIX; R$ 8,00 owed",
                     "csrf_token": csrf(c)})  # fmt: skip
    assert r.status_code == 303 and r.headers["location"].endswith("done=paired")
    page = c.get(f"/breaks/{rworld.missing}").text
    card = page[page.index('data-testid="paired-card"') :]
    for text in ("R$ 55,00", "R$ 25,00", "R$ 80,00", "R$ 88,00", "−R$ 8,00", "Pago a menor"):
        assert text in card, text
    assert "Desfazer o pareamento (todos os 2 lançamentos)" in card
    r = c.post(f"/breaks/{rworld.missing}/unpair",
               data={"line_id": two, "note": "wrong payer", "csrf_token": csrf(c)})  # fmt: skip
    assert r.status_code == 303 and load_manual_matches(rworld.data) == []
    actions = [(e["action"], e["after"]["line_id"]) for e in audit.read_entries(rworld.data)]
    assert actions == [("pair", five), ("pair", two), ("unpair", two), ("unpair", five)]


def test_pair_route_pairs_a_devolucao_a_payout_and_a_line_with_its_intent(
    data_dir: DataDir, open_app
) -> None:
    """Every direction through POST /breaks/<id>/pair: the devolução a refunded onramp lacks,
    the debit a missing payout lacks, and the onramp an unexplained credit belongs to."""
    from recon.testing.handbuilt import World
    from tests.reconciliation.helpers import exception_rows, run
    from tests.reconciliation.test_pair_parts import build

    world = World(data_dir)
    rows = exception_rows(build(world))
    by = {(r["category"], r["actual_cents"] if r["intent_id"] is None else r["intent_id"]): r
          for r in rows}  # fmt: skip
    c = open_app(data_dir)

    def pair(bid: str, **form: str) -> httpx.Response:
        return c.post(f"/breaks/{bid}/pair", data={**form, "csrf_token": csrf(c)})

    refund, devolucao = by[("refund_missing", uid(2))], by[("unmatched_debit", 5_000)]
    page = c.get(f"/breaks/{refund['break_id']}").text
    assert f'value="{devolucao["line_id"]}"' in page
    assert pair(refund["break_id"], line_id=devolucao["line_id"], note="sent").status_code == 303
    assert "Devolução <code title" in c.get(f"/breaks/{refund['break_id']}").text
    payout, debit = by[("offramp_missing_payout", uid(3))], by[("unmatched_debit", 20_000)]
    assert pair(payout["break_id"], line_id=debit["line_id"], note="paid").status_code == 303
    stranger = by[("unmatched_credit", 1_000)]
    page = c.get(f"/breaks/{stranger['break_id']}").text
    assert f'name="intent_id" value="{uid(1)}"' in page
    assert pair(stranger["break_id"], intent_id=uid(1), note="a first part").status_code == 303
    left = {
        (r["category"], r["intent_id"])
        for r in exception_rows(run(world, run_id="20261102T200000000000Z-0002"))
    }
    assert not {b for b in left if b[1] in (uid(2), uid(3))}
    assert ("onramp_underpaid", uid(1)) in left


def test_pair_route_takes_the_side_the_break_lacks(rworld: ReviewWorld, open_app) -> None:
    """POST /breaks/<id>/pair: `line_id` from a break without money, `intent_id` from an
    unexplained line; the wrong side or a viewer changes nothing."""
    c = open_app(rworld.data)

    def pair(bid: str, **form: str | list[str]):
        return c.post(f"/breaks/{bid}/pair", data={**form, "csrf_token": csrf(c)})

    before = _state(rworld)
    r = pair(rworld.stranger, line_id=rworld.credit_line, note="x")
    assert r.status_code == 400 and "no intent waiting for money" in r.text
    r = pair(rworld.stranger, intent_id=uid(3), note="")
    assert r.status_code == 400 and "write a note" in r.text
    assert _state(rworld) == before
    # the ambiguous credit, which no pass matched, pairs with the intent missing its credit...
    assert pair(rworld.missing, line_id=rworld.credit_line, note="by phone").status_code == 303
    # ...which is then taken, until the pair is undone
    r = pair(rworld.stranger, intent_id=uid(3), note="x")
    assert r.status_code == 400 and "already paired by hand" in r.text
    r = c.post(f"/breaks/{rworld.missing}/unpair",
               data={"line_id": rworld.credit_line, "note": "no", "csrf_token": csrf(c)})  # fmt: skip
    assert r.headers["location"].endswith("done=unpaired")
    page = c.get(f"/breaks/{rworld.stranger}").text
    assert 'data-testid="pair-form"' in page and uid(3) in page
    r = pair(rworld.stranger, intent_id=uid(3), note="the payer's mother paid")
    assert r.status_code == 303 and r.headers["location"].endswith("done=paired")
    [m] = load_manual_matches(rworld.data)
    assert (m.intent_id, m.break_id, m.action) == (uid(3), rworld.stranger, "pair")
    actions = [e["action"] for e in audit.read_entries(rworld.data)]
    assert actions == ["pair", "unpair", "pair"]


def test_the_queue_ranks_by_money_at_stake(data_dir, open_app) -> None:
    """A duplicate risks what was paid twice, an amount off its difference, a missing payout
    the intent's amount; default sort is priority then at-stake; the total is the filter's."""
    from recon import testing

    rows = [
        testing.break_row("onramp_underpaid", 1, break_id="aa01", expected_cents=10_000,
                          actual_cents=9_999, delta_cents=-1),
        testing.break_row("offramp_missing_payout", 2, break_id="aa02", expected_cents=80_000,
                          actual_cents=0, delta_cents=-80_000),
        testing.break_row("offramp_duplicate_payout", 3, break_id="aa03", expected_cents=100_000,
                          actual_cents=100_000, delta_cents=0),
        testing.break_row("unmatched_credit", 4, break_id="aa04", expected_cents=None,
                          actual_cents=5_000, delta_cents=None),
    ]  # fmt: skip
    testing.run(data_dir, rows, run_id="20261121T000000000000Z-dddd")
    c = open_app(data_dir)
    body = c.get("/?format=json").json()
    stakes = [(b["break_id"], b["at_stake_cents"]) for b in body["breaks"]]
    assert stakes == [("aa03", 100_000), ("aa02", 80_000), ("aa01", 1), ("aa04", 5_000)]
    assert body["at_stake_cents_total"] == 185_001
    p1 = c.get("/?format=json&priority=P1&sort=-amount").json()
    assert [b["break_id"] for b in p1["breaks"]] == ["aa01", "aa02", "aa03"]
    assert p1["at_stake_cents_total"] == 180_001
    html = c.get("/?priority=P1").text
    assert "R$ 1.800,01 em risco" in html


def test_closed_work_stays_findable_across_runs(rworld: ReviewWorld, open_app) -> None:
    """`?decision=closed` lists what earlier runs listed and is closed now: who, when, the
    note and what closed it; `open` the latest run's open breaks; `all` both."""
    c = open_app(rworld.data)

    def act(bid: str, action: str, **form: str) -> None:
        r = c.post(f"/breaks/{bid}/{action}", data={**form, "csrf_token": csrf(c)})
        assert r.status_code == 303, r.text[:300]

    act(rworld.stranger, "resolve", note="returned to the payer, FIN-7")
    act(rworld.ambiguous, "confirm", intent_id=uid(2), note="payer confirmed")
    rworld.rerun("20261102T200000000000Z-0002")
    closed = c.get("/?decision=closed&format=json").json()["breaks"]
    how = {b["break_id"]: b["closed"] for b in closed}
    assert set(how) == {rworld.stranger, rworld.ambiguous}
    assert how[rworld.stranger]["how"] == "resolved"
    assert how[rworld.stranger]["note"] == "returned to the payer, FIN-7"
    assert how[rworld.stranger]["by"] and how[rworld.stranger]["at"]
    assert how[rworld.ambiguous]["how"] == "paired"
    assert how[rworld.ambiguous]["note"] == "payer confirmed"
    opened = {b["break_id"] for b in c.get("/?decision=open&format=json").json()["breaks"]}
    assert rworld.stranger not in opened and rworld.ambiguous not in opened
    everything = {b["break_id"] for b in c.get("/?decision=all&format=json").json()["breaks"]}
    assert everything == opened | set(how)
    html = c.get("/?decision=closed").text
    assert set(listed(html)) == set(how) and "Encerrada: resolvida por" in html
    assert listed(c.get("/?status=resolved").text) == listed(html)  # the older names
