"""The desk's fewer steps: pages in the reader's language, the filter kept from the queue to a
break and back, previous/next within it, "assign to me", bulk assign and resolve (a P1 under
four-eyes still asks for approval), and the approver's inbox."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from recon.reconciliation import audit
from recon.reconciliation.decisions import load_decisions

from .conftest import ReviewWorld, add_users, csrf, listed, sign_in


def _links(html: str, rel: str) -> list[str]:
    return re.findall(rf'<a rel="{rel}" href="([^"]+)"', html)


def test_queue_and_break_pages_speak_portuguese(rworld: ReviewWorld, open_app) -> None:
    c = open_app(rworld.data)
    queue = c.get("/").text
    for text in ("Crédito PIX não encontrado", "Crédito não identificado", "Em risco",
                 "Prioridade, depois valor em risco".lower(), "Atalhos de teclado",
                 "Pular para a primeira divergência", "Atribuir a mim", "3 divergências neste filtro"):  # fmt: skip
        assert text in queue, text
    for english in ("Open breaks", "Search", "Apply", "at stake", "onramp_missing_credit<"):
        assert english not in queue, english
    page = c.get(f"/breaks/{rworld.missing}").text
    for text in ("Voltar para a fila", "Evidências", "Histórico", "Nota da resolução",
                 "Sem linha de extrato", "Crédito PIX não encontrado"):  # fmt: skip
        assert text in page, text
    for english in ("Evidence", "History", "Resolution note", "No statement line", "← queue"):
        assert english not in page, english


def test_queue_and_break_pages_in_english(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_LANG", "en")
    c = open_app(rworld.data)
    queue = c.get("/").text
    assert '<html lang="en">' in queue and "Missing PIX credit" in queue and "Assign to me" in queue
    assert "3 breaks match" in queue and "Crédito" not in queue
    assert "Back to the queue" in c.get(f"/breaks/{rworld.missing}").text


def test_the_filter_goes_to_the_break_and_back_with_previous_and_next(
    rworld: ReviewWorld, open_app
) -> None:
    app = open_app(rworld.data)

    class Unescaped:  # the pages' links as a browser reads them (&amp; is &)
        def get(self, path: str) -> str:
            return html.unescape(app.get(path).text)

    c = Unescaped()
    query = "decision=all&sort=amount"
    order = listed(c.get(f"/?{query}"))
    assert len(order) == 3
    queue = c.get(f"/?{query}")
    assert f'href="/breaks/{order[0]}?{query}"' in queue  # the row keeps the filter
    first = c.get(f"/breaks/{order[0]}?{query}")
    assert f'href="/?{query}"' in first  # back to the same filter
    assert _links(first, "prev") == [] and _links(first, "next") == [f"/breaks/{order[1]}?{query}"]
    assert "1 de 3 neste filtro" in first
    middle = c.get(f"/breaks/{order[1]}?{query}")
    assert _links(middle, "prev") == [f"/breaks/{order[0]}?{query}"]
    assert _links(middle, "next") == [f"/breaks/{order[2]}?{query}"]
    last = c.get(f"/breaks/{order[2]}?{query}")
    assert _links(last, "next") == []
    # a narrower filter: the P1 alone has no neighbour
    alone = c.get(f"/breaks/{rworld.missing}?priority=P1")
    assert _links(alone, "prev") == _links(alone, "next") == []
    # an action keeps the filter too
    token = csrf(app, f"/breaks/{order[1]}?{query}")
    r = app.post(
        f"/breaks/{order[1]}/comment?{query}", data={"note": "looked", "csrf_token": token}
    )
    target = urlsplit(r.headers["location"])
    assert r.status_code == 303 and target.path == f"/breaks/{order[1]}"
    assert parse_qs(target.query) == {
        "done": ["commented"],
        "decision": ["all"],
        "sort": ["amount"],
    }


def test_assign_to_me(rworld: ReviewWorld, open_app) -> None:
    add_users(rworld.data)
    c = open_app(rworld.data)
    sign_in(c, "rita")
    page = c.get(f"/breaks/{rworld.stranger}").text
    assert 'data-testid="assign-me"' in page
    token = csrf(c, f"/breaks/{rworld.stranger}")
    # the button's value comes after the field's, as a browser sends them
    body = f"csrf_token={token}&assignee=&assignee=rita"
    r = c.post(
        f"/breaks/{rworld.stranger}/assign", content=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    assert r.status_code == 303
    assert listed(c.get("/?assignee=rita").text) == [rworld.stranger]
    assert 'data-testid="assign-me"' not in c.get(f"/breaks/{rworld.stranger}").text


def _bulk(c, ids: list[str], query: str = "", **fields: str):
    token = csrf(c, "/")
    data = {"csrf_token": token, **fields, "break_id": ids}
    return c.post(f"/bulk?{query}" if query else "/bulk", data=data)


def test_bulk_assign_and_resolve_with_one_note(rworld: ReviewWorld, open_app) -> None:
    add_users(rworld.data)
    c = open_app(rworld.data, four_eyes=True)
    sign_in(c, "rita")
    everything = [rworld.missing, rworld.stranger, rworld.ambiguous]
    r = _bulk(c, everything, "priority=P2", action="assign-me")
    assert r.status_code == 303
    target = urlsplit(r.headers["location"])
    assert target.path == "/" and parse_qs(target.query)["priority"] == ["P2"]
    assert sorted(listed(c.get("/?assignee=rita").text)) == sorted(everything)
    assert "3 divergências atribuídas." in c.get(r.headers["location"]).text

    r = _bulk(c, [rworld.missing, rworld.stranger], action="resolve", note="checked with bank")
    assert r.status_code == 303
    decided = load_decisions(rworld.data)
    # the P2 is resolved; the P1 under four-eyes waits for an approver, with the same note
    assert set(decided) == {rworld.stranger}
    assert decided[rworld.stranger].note == "checked with bank"
    asks = [e for e in audit.read_verified(rworld.data) if e["action"] == "request_approval"]
    assert [(e["break_id"], e["note"]) for e in asks] == [(rworld.missing, "checked with bank")]
    flash = c.get(r.headers["location"]).text
    assert "1 divergência resolvida." in flash and "1 resolução P1 aguarda" in flash


def test_bulk_refusals_change_nothing_they_should_not(rworld: ReviewWorld, open_app) -> None:
    add_users(rworld.data)
    c = open_app(rworld.data)
    sign_in(c, "rita")
    before = (
        audit.audit_path(rworld.data).read_text() if audit.audit_path(rworld.data).exists() else ""
    )
    assert _bulk(c, [], action="assign-me").status_code == 400
    assert _bulk(c, [rworld.stranger], action="explode").status_code == 400
    r = _bulk(c, [rworld.stranger], action="resolve", note="")  # a resolution needs a note
    assert r.status_code == 400 and "write a note" in r.text
    after = (
        audit.audit_path(rworld.data).read_text() if audit.audit_path(rworld.data).exists() else ""
    )
    assert before == after and load_decisions(rworld.data) == {}
    viewer = open_app(rworld.data)
    sign_in(viewer, "vera")
    assert 'data-testid="bulk-form"' not in viewer.get("/").text
    r = _bulk(viewer, [rworld.stranger], action="assign-me")
    assert r.status_code == 400 and load_decisions(rworld.data) == {}
    # without the CSRF token nothing happens
    r = c.post("/bulk", data={"action": "assign-me", "break_id": rworld.stranger})
    assert r.status_code == 403


def test_the_approver_sees_first_what_waits_for_them(rworld: ReviewWorld, open_app) -> None:
    add_users(rworld.data)
    rita = open_app(rworld.data, four_eyes=True)
    sign_in(rita, "rita")
    assert 'data-testid="inbox"' not in rita.get("/").text  # a reviewer approves nothing
    assert _bulk(rita, [rworld.missing], action="resolve", note="paid late").status_code == 303
    ana = open_app(rworld.data, four_eyes=True)
    sign_in(ana, "ana")
    html = ana.get("/").text
    inbox = html.split('data-testid="inbox"')[1].split("</section>")[0]
    assert "1 aguarda sua aprovação" in inbox and f"/breaks/{rworld.missing}" in inbox
    assert "pedido por rita" in inbox and "paid late" in inbox
    # the inbox comes before the queue
    assert html.index('data-testid="inbox"') < html.index('data-testid="queue"')
    # who asked sees no inbox of their own request; after the approval it is gone
    token = csrf(ana, f"/breaks/{rworld.missing}")
    r = ana.post(f"/breaks/{rworld.missing}/approve", data={"csrf_token": token})
    assert r.status_code == 303
    assert 'data-testid="inbox"' not in ana.get("/").text


def test_evidence_shows_every_line_and_where_the_file_is_now(data_dir, open_app) -> None:
    """A duplicate payout shows both payouts; a file `recon daily` moved to
    inbox/processed/<date>/ is shown there, with the path it was imported from."""
    from datetime import timedelta

    from recon.reconciliation import ReconcileSettings, reconcile
    from recon.testing.handbuilt import T0, World, intent, line

    from .conftest import AS_OF

    world = World(data_dir)
    ana = {"name": "ANA LIMA", "doc": "***.222.333-**"}
    world.snapshot(
        [intent(24, type="offramp", amount=50_000, client_reference="OFF-0024",
                destination="111.222.333-44", **ana)],
        AS_OF,
    )  # fmt: skip
    pay = {"kind": "pix_out", **ana, "key": "11122233344", "description": "OFF-0024"}
    imported = data_dir.inbox / "pix-2026-11-02.csv"  # moved away after its import
    first = line(24, amount=50_000, at=T0 + timedelta(minutes=10), **pay)
    second = line(240, amount=50_000, at=T0 + timedelta(minutes=30), **pay)
    for ln in (first, second):
        ln["source_file"] = str(imported)
    world.statement([first, second], batch="b")
    moved = data_dir.inbox / "processed" / "2026-11-02" / imported.name
    moved.parent.mkdir(parents=True)
    moved.write_text("masked copy\n", encoding="utf-8")
    result = reconcile(data_dir, settings=ReconcileSettings(), run_id="20261102T190000000000Z-0001")
    import pyarrow.parquet as pq

    [dup] = [
        r for r in pq.read_table(result.exceptions_path).to_pylist()
        if r["category"] == "offramp_duplicate_payout"
    ]  # fmt: skip
    page = open_app(data_dir).get(f"/breaks/{dup['break_id']}").text
    assert page.count('data-testid="line"') == 2  # both payouts
    assert first["end_to_end_id"] in page and second["end_to_end_id"] in page
    assert "a linha desta divergência" in page and "conciliada com a intenção" in page
    assert "inbox/processed/2026-11-02/pix-2026-11-02.csv, linha" in page
    assert "importado como inbox/pix-2026-11-02.csv" in page


def _csv_rows(content: bytes) -> list[dict[str, str]]:
    import csv
    import io

    assert content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(content.decode("utf-8-sig"), newline=""), delimiter=";"))
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def test_the_export_carries_the_teams_work(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_users(rworld.data)
    rita = open_app(rworld.data, four_eyes=True)
    sign_in(rita, "rita")
    hostile = '=HYPERLINK("http://evil.example","x")'
    for bid, action, form in (
        (rworld.missing, "assign", {"assignee": "rita"}),
        (rworld.missing, "comment", {"note": "cliente diz que pagou"}),
        (rworld.missing, "comment", {"note": hostile}),
        (rworld.missing, "resolve", {"note": "pago em dinheiro"}),
        (rworld.stranger, "resolve", {"note": "devolvido"}),
    ):
        token = csrf(rita, f"/breaks/{bid}")
        assert (
            rita.post(f"/breaks/{bid}/{action}", data={**form, "csrf_token": token}).status_code
            == 303
        )
    rows = {
        r["id da divergência"]: r for r in _csv_rows(rita.get("/export.csv?decision=all").content)
    }
    missing, stranger = rows[rworld.missing], rows[rworld.stranger]
    assert missing["categoria"] == "Crédito PIX não encontrado"
    assert missing["responsável"] == "rita"
    assert missing["decisão"] == "aguardando aprovação"
    assert missing["aprovação"] == "aguardando aprovação (pedido por rita)"
    assert missing["último comentário"] == "'" + hostile  # text, never a formula
    assert missing["contraparte"] == "CARLA DIAS"
    assert re.fullmatch(r"\d\d/\d\d/2026 \d\d:\d\d", missing["criada em"])
    assert missing["esperado (R$)"] == "88,00" and missing["diferença (R$)"] == "-88,00"
    assert (
        stranger["decisão"] == "resolvida por rita" and stranger["contraparte"] == "MARIA DA SILVA"
    )
    assert re.fullmatch(r"\d\d/\d\d/2026 \d\d:\d\d", stranger["lançada em"])
    assert re.fullmatch(r"\d\d/\d\d/2026 \d\d:\d\d", stranger["decidida em"])
    assert "\u2212" not in rita.get("/export.csv?decision=all").content.decode("utf-8-sig")
    # English headers and labels when the app speaks English; the same Excel-BR format
    monkeypatch.setenv("RECON_LANG", "en")
    en = open_app(rworld.data, four_eyes=True)
    sign_in(en, "ana")
    rows = {r["break id"]: r for r in _csv_rows(en.get("/export.csv?decision=all").content)}
    assert rows[rworld.missing]["category"] == "Missing PIX credit"
    assert rows[rworld.missing]["decision"] == "awaiting approval"
    assert rows[rworld.missing]["difference (R$)"] == "-88,00"
    assert rows[rworld.stranger]["decision"] == "resolved by rita"


def test_the_period_view_lists_what_was_decided_in_it(rworld: ReviewWorld, open_app) -> None:
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    c = open_app(rworld.data)
    token = csrf(c, f"/breaks/{rworld.stranger}")
    r = c.post(
        f"/breaks/{rworld.stranger}/resolve", data={"note": "devolvido", "csrf_token": token}
    )
    assert r.status_code == 303
    today = datetime.now(ZoneInfo("America/Sao_Paulo")).date()
    day = timedelta(days=1)
    period = {"decided_from": str(today - day), "decided_to": str(today)}
    assert listed(c.get("/", params=period).text) == [rworld.stranger]
    assert listed(c.get("/", params={"decided_from": str(today)}).text) == [rworld.stranger]
    assert listed(c.get("/", params={"decided_to": str(today - day)}).text) == []
    # still open, so not in a period view; with the open decision, nothing is "decided"
    assert listed(c.get("/", params={**period, "decision": "open"}).text) == []
    rows = _csv_rows(c.get("/export.csv", params=period).content)
    assert [r["id da divergência"] for r in rows] == [rworld.stranger]
    assert rows[0]["decisão"].startswith("resolvida por")
    for bad, message in (
        ({"decided_from": "29/11/2026"}, "decided_from must be a date"),
        ({"decided_from": str(today), "decided_to": str(today - day)}, "is after decided_to"),
    ):
        page = c.get("/", params=bad)
        assert page.status_code == 400 and message in page.text
