"""Reasons as data: the SQL models give each break a reason code and its parameters, and
recon.reconciliation.reasons renders the sentence in the reader's language.

Every code the SQL can produce has a message and every message a code; each message names
only parameters its SQL gives; the sentences of each code are kept as golden files in
English and Portuguese; a page shows short ids that copy in full and points at its own
controls, never at a command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from recon.config import DataDir
from recon.reconciliation.reasons import (
    FRAGMENTS,
    MESSAGES,
    PAGE_MESSAGES,
    Renderer,
    placeholders,
    render,
    short_id,
)
from recon.testing.handbuilt import World
from tests.golden import assert_golden

from .helpers import exception_rows, run
from .test_categories import SETTINGS, build

GOLDEN = Path(__file__).parent / "golden"
TZ = "America/Sao_Paulo"


def _models() -> Iterator[tuple[str, str]]:
    root = resources.files("recon") / "models"
    for folder in ("intermediate", "marts"):
        for file in sorted((root / folder).iterdir(), key=lambda f: f.name):
            if file.name.endswith(".sql") and not file.name.startswith("_"):
                yield f"{folder}/{file.name}", file.read_text(encoding="utf-8")


def _codes(node: exp.Expr) -> set[str]:
    """The literal texts an expression can give (a literal, or a CASE's results)."""
    if isinstance(node, exp.Literal) and node.is_string:
        return {node.this}
    if isinstance(node, exp.Case):
        out = {c for branch in node.args.get("ifs") or [] for c in _codes(branch.args["true"])}
        default = node.args.get("default")
        return out | (_codes(default) if default is not None else set())
    if isinstance(node, exp.Paren):
        return _codes(node.this)
    raise AssertionError(f"a reason_code must be a literal or a CASE of literals: {node.sql()}")


def _params(node: exp.Expr) -> set[str]:
    (struct,) = [s for s in node.find_all(exp.Struct)]
    return {e.this.name for e in struct.expressions}


def sql_reasons() -> dict[str, set[str]]:
    """reason_code -> the reason_params keys its SQL gives, over every model."""
    found: dict[str, set[str]] = {}
    for name, text in _models():
        for select in sqlglot.parse_one(text, read="duckdb").find_all(exp.Select):
            aliases = {a.alias: a.this for a in select.expressions if isinstance(a, exp.Alias)}
            if "reason_code" not in aliases:
                continue
            assert "reason_params" in aliases, f"{name}: reason_code without reason_params"
            keys = _params(aliases["reason_params"])
            for code in _codes(aliases["reason_code"]):
                assert code not in found or found[code] == keys, f"{name}: {code} twice"
                found[code] = keys
    return found


SQL_REASONS = sql_reasons()


def test_every_code_of_the_sql_has_a_message_and_every_message_a_code() -> None:
    assert len(SQL_REASONS) >= 30
    assert set(SQL_REASONS) == set(MESSAGES)
    assert set(PAGE_MESSAGES) <= set(MESSAGES)


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_a_message_names_only_the_parameters_its_sql_gives(code: str) -> None:
    keys = SQL_REASONS[code]
    named = placeholders(MESSAGES[code])
    fragments = {n for n in named if n in FRAGMENTS}
    assert named - fragments <= keys, code
    for fragment in fragments:
        assert placeholders(FRAGMENTS[fragment]) <= keys, (code, fragment)
    if code in PAGE_MESSAGES:
        assert placeholders(PAGE_MESSAGES[code]) == named, code


def test_a_placeholder_ending_in_part_is_a_fragment() -> None:
    for message in [*MESSAGES.values(), *PAGE_MESSAGES.values()]:
        for name in placeholders(message):
            assert not name.endswith("_part") or name in FRAGMENTS, name


# a value of each kind, by the key's suffix (the convention the renderer follows)
def _sample(key: str, n: int) -> object:
    if key.endswith("_cents"):
        return 215_610 + n
    if key.endswith("_at"):
        return f"2026-10-2{n % 10}T20:21:00Z"
    if key.endswith("_ids"):
        return ["3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c", "8d9e0f1a-2b3c-4d5e-8f7a-6b5c4d3e2f1a"]
    if key.endswith("_id"):
        return f"3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b{n:02d}"
    if key.endswith("_ref"):
        return f"E18236120202610231721{n:011d}"
    if key == "rule":
        return "attributes"
    if key.endswith("_category"):
        return "onramp_missing_credit"
    if key.endswith(("_minutes", "_hours")) or key in ("parts", "candidates"):
        return 2 + n
    known = {
        "status": "completed",
        "from_status": "paying_out",
        "to_status": "burning",
        "intent_type": "onramp",
        "description": "PIX RECEBIDO",
        "marker": "MED_FRAUDE",
        "pix_key": "***.222.333-**",
        "counterparty_document": "***.456.789-**",
        "payer_document": "52.062.865/0001-**",
        "party_document": "***.456.789-**",
    }
    return known.get(key, "Maria da Silva")


def _samples(code: str) -> dict[str, object]:
    return {k: _sample(k, i) for i, k in enumerate(sorted(SQL_REASONS[code]))}


def _golden_text(lang: str) -> str:
    out = []
    for code in sorted(MESSAGES):
        out.append(f"{code}\n  {render(code, _samples(code), tz=TZ, lang=lang)}\n")
        if code in PAGE_MESSAGES:
            page = render(code, _samples(code), tz=TZ, lang=lang, context="page")
            out.append(f"  page: {page}\n")
    return "".join(out)


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_golden_reasons_per_code(lang: str) -> None:
    assert_golden(GOLDEN / f"reasons_by_code.{lang}.txt", _golden_text(lang))


def test_portuguese_is_the_default_and_writes_money_and_time_its_way() -> None:
    text = render("onramp_underpaid", _samples("onramp_underpaid"), tz=TZ)
    assert text.startswith("O crédito ") and "R$ 2.156," in text and "/10/2026 " in text
    english = render("onramp_underpaid", _samples("onramp_underpaid"), tz=TZ, lang="en")
    assert english.startswith("Credit ") and "R$2,156." in english and "2026-10-2" in english


def test_an_instant_is_written_in_the_business_time_zone() -> None:
    params = dict(_samples("onramp_status_lag"), booked_at="2026-10-23T20:21:00Z")
    assert "booked 2026-10-23 17:21 " in render("onramp_status_lag", params, tz=TZ, lang="en")
    assert "booked 2026-10-23 20:21 " in render("onramp_status_lag", params, tz="UTC", lang="en")


def test_a_missing_fragment_leaves_no_trace() -> None:
    params = dict(_samples("onramp_credit_after_expiry"), expired_at=None)
    text = render("onramp_credit_after_expiry", params, tz=TZ, lang="en")
    assert "which is completed and was not refunded" in text
    params["expired_at"] = "2026-10-23T20:21:00Z"
    text = render("onramp_credit_after_expiry", params, tz=TZ, lang="en")
    assert "which is completed (expired 2026-10-23 17:21) and was not refunded" in text


def test_a_missing_value_is_a_dash_not_none() -> None:
    params = dict(_samples("onramp_missing_credit"), payer=None)
    text = render("onramp_missing_credit", params, tz=TZ, lang="en")
    assert "(payer —," in text and "None" not in text


def test_an_unknown_code_is_shown_with_its_parameters() -> None:
    text = render("a_code_of_tomorrow", '{"intent_id": "abc"}', tz=TZ, lang="en")
    assert text == 'a_code_of_tomorrow {"intent_id": "abc"}'
    assert render(None, None, tz=TZ) == ""


def test_a_page_shows_short_ids_that_copy_in_full() -> None:
    uuid = "3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c"
    params = dict(_samples("onramp_missing_credit"), intent_id=uuid)
    html = render("onramp_missing_credit", params, tz=TZ, lang="en", context="page")
    assert f'<code class="id" title="{uuid}">3f2a9c1e…</code>' in html
    # a button: reachable by keyboard, named for a screen reader
    assert (
        f'<button type="button" class="copy" data-copy="{uuid}" aria-label="Copy {uuid}">' in html
    )
    assert f">{uuid}<" not in html
    # a run file, a console and a notification keep the full id
    assert uuid in render("onramp_missing_credit", params, tz=TZ, lang="en")


def test_an_end_to_end_id_shows_its_end_not_the_bank_code_every_line_shares() -> None:
    assert short_id("E1823612020261023172100000000042") == "…00000042"
    assert short_id("3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c") == "3f2a9c1e…"
    assert short_id("L-17") == "L-17"


def test_a_page_escapes_what_the_data_says() -> None:
    params = dict(_samples("unmatched_credit"), counterparty="<script>alert(1)</script>")
    html = render("unmatched_credit", params, tz=TZ, lang="en", context="page")
    assert "<script>" not in html and "&lt;script&gt;" in html


@pytest.mark.parametrize("code", ["ambiguous_credit", "ambiguous_debit"])
@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_the_ambiguous_reason_points_at_the_page_on_a_page(code: str, lang: str) -> None:
    page = render(code, _samples(code), tz=TZ, lang=lang, context="page")
    assert "recon resolve" not in page
    assert ("below" if lang == "en" else "abaixo") in page
    assert "recon resolve" in render(code, _samples(code), tz=TZ, lang=lang)


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_no_reason_speaks_jargon(lang: str) -> None:
    for code in MESSAGES:
        for context in ("text", "page"):
            text = render(code, _samples(code), tz=TZ, lang=lang, context=context)  # type: ignore[arg-type]
            assert not re.search(r"\btxid\b|amount/pa|attributes\b", text), (code, text)


@given(
    cents=st.integers(min_value=-(10**12), max_value=10**12),
    name=st.text(max_size=40),
    code=st.sampled_from(sorted(MESSAGES)),
)
def test_any_parameters_render_in_both_languages(cents: int, name: str, code: str) -> None:
    params = {k: (cents if k.endswith("_cents") else v) for k, v in _samples(code).items()}
    params.update({k: name for k in params if k in ("payer", "payee", "counterparty")})
    for lang in ("en", "pt-BR"):
        text = Renderer(lang.replace("-", "_"), TZ)(code, json.dumps(params))
        assert text and "{" not in text.replace(name, "")


@given(cents=st.integers(min_value=-(10**15), max_value=10**15))
def test_money_in_a_reason_is_written_as_the_i18n_module_writes_it(cents: int) -> None:
    from recon import i18n
    from recon.reconciliation.reasons import _money

    for lang in ("pt_BR", "en"):
        assert _money(cents, lang) == i18n.format_money(cents, lang)


# ----------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    world = World(DataDir(tmp_path_factory.mktemp("reasons") / "data").ensure())
    build(world)
    return world


def test_a_run_stores_each_break_s_code_and_parameters(world: World) -> None:
    rows = exception_rows(run(world, run_id="20261104T130000000000Z-r001", settings=SETTINGS))
    assert rows
    for row in rows:
        assert row["reason_code"] in MESSAGES
        params = json.loads(row["reason_params"])
        assert set(params) == SQL_REASONS[row["reason_code"]]
        assert row["reason"] == render(row["reason_code"], params, tz=TZ, lang="pt-BR")


def test_a_run_in_english_and_one_in_portuguese_say_the_same(world: World) -> None:
    pt = {
        r["break_id"]: r
        for r in exception_rows(run(world, run_id="20261104T130000000000Z-r002", settings=SETTINGS))
    }
    en = {
        r["break_id"]: r
        for r in exception_rows(
            run(world, lang="en", run_id="20261104T130000000000Z-r003", settings=SETTINGS)
        )
    }
    assert set(pt) == set(en)
    for break_id, row in en.items():
        other = pt[break_id]
        assert (row["reason_code"], row["reason_params"]) == (
            other["reason_code"],
            other["reason_params"],
        )
        assert row["reason"] == render(row["reason_code"], row["reason_params"], tz=TZ, lang="en")
        assert row["reason"] != other["reason"]


def test_recon_toml_chooses_the_language_of_the_run(world: World) -> None:
    toml = world.data.root / "recon.toml"
    toml.write_text('[ui]\nlanguage = "en"\n', encoding="utf-8")
    try:
        rows = exception_rows(run(world, run_id="20261104T130000000000Z-r004", settings=SETTINGS))
    finally:
        toml.unlink()
    assert all(r["reason"] == render(r["reason_code"], r["reason_params"], tz=TZ, lang="en")
               for r in rows)  # fmt: skip
