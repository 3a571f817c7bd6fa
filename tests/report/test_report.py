"""The HTML report: golden file, self-containedness, and the breaks beside it."""

from __future__ import annotations

import csv
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from recon import testing
from recon.errors import UsageError
from recon.reconciliation import reconcile
from recon.reconciliation.flows import read_flows
from recon.report import render
from recon.report.render import format_brl, report_dir_for
from recon.testing import break_row
from tests.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden" / "report.html"
GOLDEN_EN = Path(__file__).parent / "golden" / "report_en.html"
NOW = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)


def normalise(html: str) -> str:
    """Strip what legitimately varies: embedded images and the generation time."""
    html = re.sub(r'src="data:image/png;base64,[A-Za-z0-9+/=]+"', 'src="data:IMAGE"', html)
    html = re.sub(r'<figure class="chart">.*?</figure>', "<figure>CHART</figure>", html, flags=re.S)
    return re.sub(
        r'<span class="generated">[^<]*</span>', '<span class="generated">TIME</span>', html
    )


# what the report's sections show beyond the counts the factory derives from the breaks
GOLDEN_SUMMARY = {
    "as_of": "2026-11-21T02:59:59+00:00",
    "intents": 40,
    "statement_lines": 41,
    "auto_match_rate": 0.9625,
    "totals": {"statement_credit_cents": 123_456, "intents_credit_cents": 120_000},
    "control_totals": [
        {
            "business_day": "2026-11-20",
            "direction": "credit",
            "statement_cents": 123_456,
            "intents_cents": 120_000,
            "explained_cents": 3_456,
            "unexplained_cents": 0,
        },
    ],
    "explained_by": {"onramp_overpaid": 3_456},
    "balance_walk": [
        {
            "account": "itau-0001",
            "day": "2026-11-18",
            "opening_cents": None,
            "movements_cents": 5_000,
            "closing_cents": 105_000,
            "gap_cents": None,
            "state": "no_opening",
        },
        {
            "account": "itau-0001",
            "day": "2026-11-19",
            "opening_cents": 105_000,
            "movements_cents": -2_000,
            "closing_cents": 102_500,
            "gap_cents": -500,
            "state": "walked",
        },
        {
            "account": "itau-0001",
            "day": "2026-11-20",
            "opening_cents": None,
            "movements_cents": 0,
            "closing_cents": None,
            "gap_cents": None,
            "state": "no_file",
        },
    ],
    "checks": {"no_line_matched_twice": 0},
    "resolved_breaks": ["00000000deadbeef"],
    "decided_breaks": [
        {
            "break_id": "00000000cafebabe",
            "category": "unmatched_credit",
            "note": "known <test>",
            "decided_by": "ana",
            "decided_at": "2026-11-20T10:00:00+00:00",
        }
    ],
}


def golden_run(root: Path) -> Path:
    breaks = [
        break_row(
            "onramp_missing_credit", 1, reason="Onramp paid per the API; no PIX credit <found>."
        ),
        break_row(
            "onramp_underpaid",
            2,
            actual_cents=9_000,
            delta_cents=-1_002,
            end_to_end_id="E1",
            # rendered in the report's language, its ids short with the full value to copy
            reason_code="onramp_underpaid",
            reason_params=json.dumps(
                {
                    "line_ref": "E1823612020261102130000000000002",
                    "line_cents": 9_000,
                    "booked_at": "2026-11-02T13:10:00Z",
                    "rule": "txid",
                    "intent_id": "3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c",
                    "expected_cents": 10_002,
                    "difference_cents": 1_002,
                }
            ),
        ),
        break_row(
            "unmatched_credit",
            3,
            intent_id=None,
            expected_cents=None,
            actual_cents=77_700,
            delta_cents=77_700,
            state="persisting",
            age_days=40,
        ),
        break_row("ambiguous_match", 4, intent_id=None, reason="candidates: a, b"),
        break_row("status_regression", 5, expected_cents=None, actual_cents=None, delta_cents=None),
        break_row("offramp_stuck_paying_out", 6, age_days=3),
    ]
    return testing.run(root, breaks, run_id="run-golden", summary=GOLDEN_SUMMARY)


def test_report_matches_golden_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECON_LANG", raising=False)
    run = golden_run(tmp_path)
    out = render(run, now=NOW)
    assert_golden(GOLDEN, normalise(out.read_text(encoding="utf-8")))


def test_report_in_english_matches_its_golden_file(tmp_path: Path) -> None:
    out = render(golden_run(tmp_path), now=NOW, lang="en")
    assert_golden(GOLDEN_EN, normalise(out.read_text(encoding="utf-8")))


def test_report_speaks_portuguese_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECON_LANG", raising=False)
    monkeypatch.chdir(tmp_path)
    run = golden_run(tmp_path)
    html = render(run, now=NOW).read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in html and "Relatório de conciliação" in html
    assert "Pago a menor" in html and "R$ 100,01" in html and "21/11/2026" in html
    # recon.toml [ui] language, in the data dir the run belongs to
    (tmp_path / "recon.toml").write_text('[ui]\nlanguage = "en"\n', encoding="utf-8")
    html = render(run, now=NOW).read_text(encoding="utf-8")
    assert '<html lang="en">' in html and "Reconciliation report" in html
    assert "Underpaid" in html and "R$100.01" in html
    # an explicit choice ($RECON_LANG, as --lang sets it) wins over the file
    monkeypatch.setenv("RECON_LANG", "pt-BR")
    assert '<html lang="pt-BR">' in render(run, now=NOW).read_text(encoding="utf-8")


def test_report_is_self_contained_and_escaped(tmp_path: Path) -> None:
    out = render(golden_run(tmp_path), now=NOW)
    html = out.read_text(encoding="utf-8")
    assert out == report_dir_for(tmp_path / "runs" / "run-golden") / "report.html"
    # nothing fetched from elsewhere: no external scripts, styles or images
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<script" not in html
    assert "&lt;found&gt;" in html and "<found>" not in html
    assert "R$ 777,00" in html  # unmatched credit of 77 700 cents


def test_report_shows_each_account_s_balance_walk(tmp_path: Path) -> None:
    run = golden_run(tmp_path)
    html = render(run, now=NOW, charts=False).read_text(encoding="utf-8")
    walk = html.split("<h3>itau-0001</h3>")[1].split("</table>")[0]
    assert '<tr class="off"><td>19/11/2026</td><td class="num">R$ 1.050,00</td>' in walk
    assert "-R$ 5,00" in walk  # the gap
    assert "nenhum arquivo de extrato neste dia" in walk  # 20/11: no file, no gap shown
    english = render(run, now=NOW, charts=False, lang="en")
    assert "no statement file for this day" in english.read_text(encoding="utf-8")


def test_breaks_written_beside_report_most_urgent_first(tmp_path: Path) -> None:
    out = render(golden_run(tmp_path), tmp_path / "custom" / "r.html", now=NOW, charts=False)
    assert out == tmp_path / "custom" / "r.html"
    with (out.parent / "breaks.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6
    assert [r["priority"] for r in rows] == sorted(r["priority"] for r in rows)
    assert rows[0]["category"] == "onramp_missing_credit"  # P1, biggest delta
    table = pq.read_table(out.parent / "breaks.parquet")
    assert table.num_rows == 6
    assert table.column("break_id").to_pylist() == [r["break_id"] for r in rows]
    assert not list(out.parent.glob(".tmp-*"))


def test_out_folder_and_empty_run(tmp_path: Path) -> None:
    run = testing.run(tmp_path, [], matches=0, run_id="run-empty")
    out = render(run, tmp_path / "folder", now=NOW, charts=False)
    assert out == tmp_path / "folder" / "report.html"
    html = out.read_text(encoding="utf-8")
    assert "Nenhuma divergência aberta" in html
    assert (tmp_path / "folder" / "breaks.csv").read_text().count("\n") == 1  # header only


@pytest.mark.parametrize(
    "content", [None, "not json", "[1, 2]"], ids=["missing", "malformed", "not-an-object"]
)
def test_bad_run_folder_is_a_usage_error(tmp_path: Path, content: str | None) -> None:
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    if content is not None:
        (run / "summary.json").write_text(content)
    with pytest.raises(UsageError, match=r"summary\.json"):
        render(run)


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (0, "R$ 0,00"),
        (5, "R$ 0,05"),
        (123456, "R$ 1.234,56"),
        (-100000000, "-R$ 1.000.000,00"),
        (None, "—"),
    ],
)
def test_format_brl(cents: int | None, text: str) -> None:
    assert format_brl(cents) == text


def test_rerendering_an_old_run_gives_the_same_report(tmp_path: Path) -> None:
    """The report draws only the run's files: new snapshots change the next run, not this one."""
    data = testing.data_dir(tmp_path)
    waiting = [testing.intent(n, status="awaiting_fiat_payment") for n in range(1, 7)]
    testing.snapshot(data, waiting)
    old = reconcile(data, strict=False)
    first = render(old.path, tmp_path / "a.html", now=NOW).read_text(encoding="utf-8")
    assert first.count('<figure class="chart">') >= 4 and "Funil de onramp" in first

    later = testing.T0 + timedelta(hours=6)
    testing.snapshot(data, [dict(i, status="completed") for i in waiting], at=later)
    testing.statement_lines(data, [testing.statement_line(99, amount_cents=123)])
    again = render(old.path, tmp_path / "b.html", now=NOW).read_text(encoding="utf-8")
    assert again == first

    new = reconcile(data, strict=False)  # the new snapshot shows in the next run only
    fresh = render(new.path, tmp_path / "c.html", now=NOW).read_text(encoding="utf-8")
    assert fresh != first
    assert read_flows(new.path)["funnel_onramp"]["reached"].sum() > 0


def test_people_read_labels_units_and_one_pt_br_style(tmp_path: Path) -> None:
    run = testing.run(
        tmp_path,
        [break_row("onramp_missing_credit", 1, delta_cents=-215_610, expected_cents=215_610)],
        run_id="run-labels",
        summary={
            "auto_match_rate": 0.989672,
            "settings": {"offramp_payout_grace": 7200, "business_tz": "America/Sao_Paulo"},
            "totals": {"fees_cents": 5_787, "matched_cents": 128_957_470},
        },
        matches=1939,
    )
    html = render(run, now=NOW, charts=False).read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", html)
    for raw in ("fees_cents", "statement_cents", "auto_match_rate", "0.9897", "R$ -", " 7200"):
        assert raw not in text, raw
    assert "tarifas bancárias (R$)" in text and "R$ 57,87" in text and "R$ 1.289.574,70" in text
    assert "offramp payout grace (tempo)" in text and "2 h" in text
    assert "99,0%" in text and "1.939" in text  # counts and shares pt-BR, like the money
    # a minus a spreadsheet reads as one (U+2212 pastes as text)
    assert "-R$ 2.156,10" in text and "\u2212" not in text
    assert '<td class="num">-R$ 2.156,10</td>' in html  # amounts right-aligned
    # long ids are cut for the eye, whole in the page (hover title, copy)
    assert '<span class="id" title="intent-1">intent-1</span>' in html
    assert "@media print" in html and "@media (max-width: 1000px)" in html


@pytest.mark.parametrize(
    ("summary", "level", "words"),
    [
        (
            {"checks_passed": False, "checks": {"control_totals_balance": 2}},
            "error",
            "Checks failed",
        ),
        ({"statements_overdue": ["2026-11-20"]}, "warning", "Statements overdue"),
        ({"uncovered_days": ["2026-11-19"]}, "warning", "coverage is short"),
        ({"awaiting": {"intents": 3, "cents": 12_345}}, "info", "R$123.45"),
    ],
)
def test_banners_from_summary_fields(
    tmp_path: Path,
    summary: dict[str, object],
    level: str,
    words: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECON_LANG", "en")
    run = testing.run(tmp_path, [], run_id="run-banner", summary=summary)
    html = render(run, now=NOW, charts=False).read_text(encoding="utf-8")
    banner = re.search(r'<p class="banner (\w+)"[^>]*>([^<]*)</p>', html)
    assert banner is not None and banner.group(1) == level and words in banner.group(2)
    clean = testing.run(tmp_path, [], run_id="run-clean")
    assert 'class="banner' not in render(clean, now=NOW, charts=False).read_text(encoding="utf-8")


def test_trend_of_the_last_runs_is_in_the_report(tmp_path: Path) -> None:
    testing.run(tmp_path, [break_row("unmatched_debit", 1)], run_id="20261120T000000000000Z-aaaa")
    two = [break_row("unmatched_debit", 1), break_row("onramp_overpaid", 2, delta_cents=500)]
    run = testing.run(tmp_path, two, run_id="20261121T000000000000Z-bbbb")
    html = render(run, now=NOW, charts=False).read_text(encoding="utf-8")
    history = html[html.index('<table class="history">') :].split("</table>")[0]
    rows = re.findall(r"<tr( class=\"this\")?><td>.*?</tr>", history)
    assert len(rows) == 2 and rows[1] == ' class="this"'
    assert "R$ 100,01" in history and "R$ 105,01" in history  # 10 001 + 500 cents at stake


def test_resolved_and_decided_are_tables_with_names_amounts_notes_and_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closed work reads as tables (category label, money at stake as the previous run
    listed it, who, when, the note: no raw JSON, no escapes), and with `[review] base_url`
    every break links to its page in the review app."""
    monkeypatch.delenv("RECON_LANG", raising=False)
    root = tmp_path / "data"
    gone = break_row(
        "offramp_missing_payout", 7, expected_cents=80_000, delta_cents=-80_000, break_id="aa07"
    )
    kept = break_row(
        "unmatched_credit", 8, intent_id=None, actual_cents=123_456, delta_cents=123_456,
        break_id="aa08",
    )  # fmt: skip
    testing.run(root, [gone, kept], run_id="run-1")
    summary = {
        "previous_run_id": "run-1",
        "resolved_breaks": ["aa07"],
        "decided_breaks": [
            {"break_id": "aa08", "category": "unmatched_credit", "note": "devolução ao pagador",
             "decided_by": "ana", "decided_at": "2026-11-20T13:00:00+00:00",
             "history": [{"action": "resolve", "note": "devolução ao pagador"}]},
        ],
    }  # fmt: skip
    run = testing.run(root, [break_row("onramp_underpaid", 9)], run_id="run-2", summary=summary)
    html = render(run, charts=False).read_text(encoding="utf-8")
    resolved = html.split('<table class="resolved">')[1].split("</table>")[0]
    assert "Saque não encontrado" in resolved and "R$ 800,00" in resolved and "aa07" in resolved
    decided = html.split('<table class="decided">')[1].split("</table>")[0]
    for text in ("Crédito não identificado", "R$ 1.234,56", "ana", "20/11/2026 10:00",
                 "devolução ao pagador"):  # fmt: skip
        assert text in decided, text
    assert "\\u00e7" not in html  # the note as written, not a JSON escape
    assert '"history":' not in html and '"note":' not in html  # no raw JSON
    assert "href=" not in decided  # no review URL configured: no links
    (root / "recon.toml").write_text(
        '[review]\nbase_url = "https://desk.example/review/"\n', encoding="utf-8"
    )
    html = render(run, charts=False).read_text(encoding="utf-8")
    assert 'href="https://desk.example/review/breaks/aa08"' in html
    assert 'href="https://desk.example/review/breaks/aa07"' in html
    assert (
        f'href="https://desk.example/review/breaks/{break_row("onramp_underpaid", 9)["break_id"]}"'
        in html
    )


def test_beyond_the_top_every_break_is_listed_grouped_by_category(tmp_path: Path) -> None:
    """30 breaks, more than the top 25: every one is in the report, in one collapsible group
    per category (P1 open), each row linking to its page in the review app."""
    from recon.report.render import TOP_BREAKS

    categories = ["onramp_missing_credit", "unmatched_credit", "status_regression"]
    breaks = [
        break_row(categories[n % 3], n, **({"intent_id": None} if n % 3 == 1 else {}))
        for n in range(1, 31)
    ]
    assert len(breaks) > TOP_BREAKS
    (tmp_path / "recon.toml").write_text(
        '[review]\nbase_url = "https://desk.example/review"\n', encoding="utf-8"
    )
    run = testing.run(tmp_path, breaks, run_id="run-many")
    html = render(run, now=NOW, lang="en").read_text(encoding="utf-8")
    groups = html[html.index("Every open break, by category") :]
    for b in breaks:
        assert f'href="https://desk.example/review/breaks/{b["break_id"]}"' in groups
    found = re.findall(r'<details class="group" data-category="([a-z_]+)"( open)?>', groups)
    assert sorted(c for c, _open in found) == sorted(categories)
    assert {c: bool(o) for c, o in found}["onramp_missing_credit"]  # P1: open
    assert not {c: bool(o) for c, o in found}["status_regression"]


def test_within_the_top_the_breaks_are_listed_once(tmp_path: Path) -> None:
    run = golden_run(tmp_path)
    html = render(run, now=NOW, lang="en").read_text(encoding="utf-8")
    assert (
        "Every open break, by category" not in html and html.count("b0003") == 2
    )  # its id and title, in the top table alone
