"""The languages recon speaks: every marked string translated, languages named any way a
person writes them, money and dates as each language writes them."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment

from recon import i18n
from recon.errors import UsageError
from recon.money import parse_cents
from recon.schemas import CATEGORIES, CATEGORY_LABELS, category_label

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "recon" / "locale" / "pt_BR" / "LC_MESSAGES" / "recon.po"
# babel.cfg, as `make messages` reads it
METHODS = [
    ("recon/**.py", "python"),
    ("recon/**/templates/**", "jinja2"),
]
OPTIONS = {"recon/**/templates/**": {"extensions": "jinja2.ext.i18n"}}


def _marked() -> set[str]:
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(str(ROOT), METHODS, OPTIONS):
        found.add(message if isinstance(message, str) else message[0])
    return found


def _catalog():  # type: ignore[no-untyped-def]
    with PO.open("rb") as fh:
        return read_po(fh, locale="pt_BR", domain="recon")


def test_babel_cfg_is_what_the_test_extracts() -> None:
    text = (ROOT / "babel.cfg").read_text()
    for pattern, method in METHODS:
        assert f"[{method}: {pattern}]" in text


def test_every_marked_string_has_a_portuguese_translation() -> None:
    catalog = _catalog()
    marked = _marked()
    assert marked, "nothing is marked for translation"
    missing = sorted(m for m in marked if not (catalog.get(m) and catalog.get(m).string))
    assert not missing, f"run `make messages` and translate: {missing}"
    fuzzy = sorted(m.id for m in catalog if m.id and m.fuzzy)
    assert not fuzzy, f"fuzzy entries need a translator's look: {fuzzy}"


def test_the_catalog_holds_no_string_the_code_no_longer_marks() -> None:
    marked = _marked()
    ids = [m.id if isinstance(m.id, str) else m.id[0] for m in _catalog() if m.id]
    stale = sorted(i for i in ids if i not in marked)
    assert not stale, f"run `make messages`: {stale}"


def test_placeholders_agree_between_languages() -> None:
    problems = [(m.id, errors) for m, errors in _catalog().check() if errors]
    assert not problems


def test_every_category_has_a_label_in_both_languages() -> None:
    assert set(CATEGORY_LABELS) == set(CATEGORIES)
    for name in CATEGORIES:
        english = category_label(name, "en")
        portuguese = category_label(name, "pt-BR")
        assert english == CATEGORY_LABELS[name] and portuguese != english, name
    assert category_label("onramp_underpaid") == "Pago a menor"  # pt-BR by default
    assert category_label("not_a_category", "en") == "not_a_category"


@pytest.mark.parametrize(
    ("given_as", "name"),
    [
        ("pt-BR", "pt_BR"),
        ("pt_br", "pt_BR"),
        ("PT", "pt_BR"),
        ("pt-PT", "pt_BR"),
        ("en", "en"),
        ("en-US", "en"),
        ("EN_gb", "en"),
        (" en ", "en"),
    ],
)
def test_a_language_is_read_as_people_write_it(given_as: str, name: str) -> None:
    assert i18n.language(given_as) == name


def test_portuguese_is_the_default_and_the_environment_can_choose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RECON_LANG", raising=False)
    assert i18n.language() == "pt_BR" and i18n.html_lang() == "pt-BR"
    monkeypatch.setenv("RECON_LANG", "en")
    assert i18n.language() == "en" and i18n.html_lang() == "en"
    assert i18n.language("pt-BR") == "pt_BR"  # an explicit choice wins


@pytest.mark.parametrize("bad", ["fr", "de-DE", "xx", "p"])
def test_an_unknown_language_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="unknown language"):
        i18n.language(bad)


def test_jinja_templates_translate_and_declare_their_language() -> None:
    for lang, label, tag in [("pt-BR", "Pago a menor", "pt-BR"), ("en", "Underpaid", "en")]:
        env = Environment(autoescape=True)
        i18n.install_jinja(env, lang)
        page = env.from_string('<html lang="{{ html_lang }}">{{ _("Underpaid") }}</html>')
        assert page.render() == f'<html lang="{tag}">{label}</html>'


def test_money_as_each_language_writes_it() -> None:
    assert i18n.format_money(215610) == "R$ 2.156,10"
    assert i18n.format_money(-215610, "pt-BR") == "-R$ 2.156,10"
    assert i18n.format_money(215610, "en") == "R$2,156.10"
    assert i18n.format_money(1, "en") == "R$0.01"
    with pytest.raises(TypeError):
        i18n.format_money(1.5)  # type: ignore[arg-type]


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_money_text_reads_back_to_the_same_cents(cents: int) -> None:
    pt = i18n.format_money(cents, "pt-BR").replace("R$", "").replace(" ", "")
    en = i18n.format_money(cents, "en").replace("R$", "")
    assert parse_cents(pt, decimal_mark=",") == cents
    assert parse_cents(en, decimal_mark=".") == cents


def test_an_instant_in_local_time_as_each_language_writes_it() -> None:
    at = datetime(2026, 10, 23, 20, 21, tzinfo=UTC)
    assert i18n.format_datetime(at, "America/Sao_Paulo") == "23/10/2026 17:21"
    assert i18n.format_datetime(at, "America/Sao_Paulo", "en") == "2026-10-23 17:21"


def test_the_command_line_speaks_the_language_it_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from recon import testing
    from recon.cli import main
    from recon.testing import break_row

    monkeypatch.delenv("RECON_LANG", raising=False)
    monkeypatch.delenv("RECON_DATA", raising=False)
    testing.run(tmp_path, [break_row("onramp_underpaid", 1)], run_id="run-lang")
    out = tmp_path / "en.html"
    assert main(["report", "--data", str(tmp_path), "--out", str(out), "--lang", "en"]) == 0
    html = out.read_text(encoding="utf-8")
    assert '<html lang="en">' in html and "Underpaid" in html
    # --lang and --data hold for that command (and its child processes), not for the caller
    assert "RECON_LANG" not in os.environ and "RECON_DATA" not in os.environ
    out = tmp_path / "pt.html"
    assert main(["report", "--data", str(tmp_path), "--out", str(out)]) == 0
    assert '<html lang="pt-BR">' in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["report", "--data", str(tmp_path), "--lang", "klingon"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recon: error: unknown language 'klingon'")
