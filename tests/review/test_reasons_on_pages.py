"""The review app writes a break's reason from its code and parameters, in the reader's
language: short ids with the full value to copy, and the action the page itself offers."""

from __future__ import annotations

import html as html_lib
import json

import pyarrow.parquet as pq
import pytest

from recon import catalog

from .conftest import ReviewWorld


def _breaks(rworld: ReviewWorld) -> dict[str, dict]:
    run = catalog.latest_run(rworld.data)
    assert run is not None
    return {r["break_id"]: r for r in pq.read_table(run / "exceptions.parquet").to_pylist()}


@pytest.mark.parametrize(
    ("lang", "said"),
    [("en", "Confirm the right candidate below"), ("pt-BR", "Confirme abaixo o candidato certo")],
)
def test_the_ambiguous_break_page_points_at_its_confirm_button(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch, lang: str, said: str
) -> None:
    monkeypatch.setenv("RECON_LANG", lang)
    row = _breaks(rworld)[rworld.ambiguous]
    assert row["reason_code"] == "ambiguous_credit"
    page = open_app(rworld.data).get(f"/breaks/{rworld.ambiguous}").text
    reason = page.split('data-testid="reason">', 1)[1].split("</p>", 1)[0]
    assert said in reason and "recon resolve" not in reason
    # the ids it names: short, with the full value in the title and a copy button
    intent_ids = json.loads(row["reason_params"])["intent_ids"]
    assert len(intent_ids) == 2
    for intent_id in intent_ids:
        assert f'title="{intent_id}">{intent_id[:8]}…</code>' in reason
    assert 'class="copy" data-copy="' in reason and '<button type="button"' in reason


def test_the_queue_writes_reasons_with_short_ids_and_no_button_inside_the_link(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_LANG", "en")
    page = open_app(rworld.data).get("/").text
    missing = _breaks(rworld)[rworld.missing]
    intent_id = missing["intent_id"]
    row = page.split(f'<a href="/breaks/{rworld.missing}', 1)[1]
    link = row.split("data-row-link>", 1)[1].split("</a>", 1)[0]
    assert link.startswith("Onramp ") and "<button" not in link
    assert f'<code class="id" title="{intent_id}">{intent_id[:8]}…</code>' in link


def test_a_run_s_stored_sentence_is_shown_when_it_has_no_code(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run written before reasons were data keeps its sentence (escaped, as it is)."""
    run = catalog.latest_run(rworld.data)
    assert run is not None
    table = pq.read_table(run / "exceptions.parquet")
    rows = table.to_pylist()
    for r in rows:
        r["reason_code"], r["reason_params"], r["reason"] = None, None, "old <sentence>"
    pq.write_table(table.from_pylist(rows, schema=table.schema), run / "exceptions.parquet")
    page = open_app(rworld.data).get(f"/breaks/{rworld.missing}").text
    assert f'data-testid="reason">{html_lib.escape("old <sentence>")}</p>' in page
