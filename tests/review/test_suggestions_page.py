"""The break page shows the run's suggestions (recon_suggestions), what differs for each in
the reader's language, and pairs one in one click; a difference of money asks for a note."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.config import DataDir
from recon.reconciliation.manual import load_manual_matches
from recon.reconciliation.reasons import differences
from recon.testing.handbuilt import T0, World, intent, line, uid
from tests.reconciliation.helpers import exception_rows, match_rows, run

AS_OF = T0 + timedelta(days=2)


def _world(data: DataDir, **line_fields) -> dict[str, dict]:
    """A completed onramp of R$ 100,00 whose window closed at T0 + 1 h 30 min, and a credit
    the passes do not pair with it; the run's breaks by category."""
    world = World(data)
    world.snapshot([intent(1, expires=T0 + timedelta(hours=1))], AS_OF)
    world.statement([line(1, **line_fields)])
    result = run(world, as_of=AS_OF, run_id="20261102T190000000000Z-0001")
    return {r["category"]: r for r in exception_rows(result)}


def _card(page: str) -> str:
    start = page.index('data-testid="suggestions-card"')
    return html.unescape(page[start : page.index("</section>", start)])


def test_a_suggestion_pairs_in_one_click_and_both_breaks_go(data_dir: DataDir, open_app):
    by = _world(data_dir, name="M SILVA", at=T0 + timedelta(hours=3))
    missing, stranger = by["onramp_missing_credit"], by["unmatched_credit"]
    c = open_app(data_dir)
    page = c.get(f"/breaks/{missing['break_id']}").text
    card = _card(page)
    assert f'data-line-id="{stranger["line_id"]}"' in card
    assert "nome do pagador 'M SILVA' vs 'MARIA SILVA'" in card
    assert "lançado 90 min depois de a janela fechar" in card
    # from the other side, the intent is suggested
    page = c.get(f"/breaks/{stranger['break_id']}").text
    assert f'name="intent_id" value="{uid(1)}"' in page and 'data-testid="suggestion"' in page
    # one click: the amounts agree, so the form holds everything, its note included
    page = c.get(f"/breaks/{missing['break_id']}").text
    form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', _card(page)))
    assert form["line_id"] == stranger["line_id"] and form["note"].startswith("sugestão 1 aceita")
    r = c.post(f"/breaks/{missing['break_id']}/pair", data=form)
    assert r.status_code == 303 and r.headers["location"].endswith("done=paired")
    [made] = load_manual_matches(data_dir)
    assert (made.intent_id, made.line_id) == (uid(1), stranger["line_id"])
    assert made.note == form["note"]
    again = run(World(data_dir), as_of=AS_OF, run_id="20261102T200000000000Z-0002")
    assert exception_rows(again) == []
    assert [(m["intent_id"], m["rule"]) for m in match_rows(again)] == [(uid(1), "manual")]
    # the pair in force replaces the suggestions on the page
    page = c.get(f"/breaks/{missing['break_id']}").text
    assert 'data-testid="suggestions-card"' not in page


def test_a_suggestion_with_a_difference_of_money_asks_for_a_note(data_dir: DataDir, open_app):
    by = _world(data_dir, amount=9_900)
    missing = by["onramp_missing_credit"]
    page = open_app(data_dir).get(f"/breaks/{missing['break_id']}").text
    card = _card(page)
    assert "valor R$ 1,00 a menos" in card
    assert 'name="note" maxlength="2000" required' in card  # no note is sent for the reviewer


def test_suggestions_in_english(data_dir: DataDir, open_app):
    data_dir.config_path.write_text('[ui]\nlanguage = "en"\n', encoding="utf-8")
    by = _world(data_dir, name="M SILVA")
    page = open_app(data_dir).get(f"/breaks/{by['unmatched_credit']['break_id']}").text
    card = _card(page)
    assert "payer name 'M SILVA' vs 'MARIA SILVA'" in card and "Pair with this one" in card


@pytest.mark.parametrize(
    ("sql", "pt", "en"),
    [
        ("amount R$ 1,00 more", "valor R$ 1,00 a mais", "amount R$ 1,00 more"),
        ("booked 41 min after the window closed", "lançado 41 min depois de a janela fechar",
         "booked 41 min after the window closed"),
        ("booked 3 h before the window opened", "lançado 3 h antes de a janela abrir",
         "booked 3 h before the window opened"),
        ("payee name 'A; B' vs 'C'", "nome do recebedor 'A; B' vs 'C'", "payee name 'A; B' vs 'C'"),
        ("document contradicts", "documento não confere", "document contradicts"),
        ("PIX key contradicts", "chave PIX não confere", "PIX key contradicts"),
        ("not marked as a devolução", "não marcado como devolução", "not marked as a devolução"),
        ("amount, time and party agree", "valor, horário e pessoa conferem",
         "amount, time and party agree"),
    ],
)  # fmt: skip
def test_every_difference_the_sql_writes_is_translated(sql: str, pt: str, en: str):
    assert differences(sql, "pt_BR") == [pt]
    assert differences(sql, "en") == [en]


@given(st.lists(st.text(st.characters(blacklist_characters=";"), min_size=1), max_size=4))
def test_an_unknown_difference_is_kept_as_written(parts: list[str]):
    known = differences("; ".join(parts), "en")
    assert len(known) <= len(parts)
    for part in parts:
        if part and not any(p in part for p in ("amount", "booked", "name", "contradicts")):
            assert part in known
