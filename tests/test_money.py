"""recon.money: exact cents from every way banks write amounts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.money import (
    MAX_CENTS,
    AmountError,
    dc_mark,
    format_brl,
    format_cents,
    format_count,
    format_duration,
    format_percent,
    parse_cents,
    parse_plain_cents,
)


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("1.234,56", 123456),
        ("-200,00", -20000),
        ("10.00", 1000),
        ("1,234.56", 123456),
        ("  00012,30 ", 1230),
        ("200,00-", -20000),
        ("(200.00)", -20000),
        ("R$ 1.234,56", 123456),
        ("-R$ 5,00", -500),
        ("R$-5,00", -500),
        ("(R$ 5,00)", -500),
        ("+7", 700),
        ("0,01", 1),
        (",50", 50),
        ("10,5", 1050),
        ("1.234", 123400),  # rule 4: one separator + three digits = thousands
        ("12,345", 1234500),
        ("1.234.567", 123456700),
        ("0.120", 12),  # trailing zeros beyond cents are exact
        ("1\u00a0234,56", 123456),  # NBSP as a thousands blank
        ("-0,00", 0),
        ("92.233.720.368.547.758,07", 2**63 - 1),  # MAX_CENTS, the largest accepted
        ("0000000000000000001,00", 100),  # zero padding is not magnitude
    ],
)
def test_examples(text: str, cents: int) -> None:
    assert parse_cents(text) == cents


@pytest.mark.parametrize(
    ("text", "mark", "cents"),
    [
        ("1.234", ",", 123400),
        ("1.234", None, 123400),
        ("1,234", ".", 123400),
        ("1,5", ",", 150),
        ("1.5", ".", 150),
        ("1.234,5", ",", 123450),
        ("1234", ",", 123400),
    ],
)
def test_explicit_mark(text: str, mark: str | None, cents: int) -> None:
    assert parse_cents(text, decimal_mark=mark) == cents


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "-",
        "R$",
        "abc",
        "1.2.3,00",  # bad grouping
        "1,2,3",
        "12.34.567",
        "0.123",  # three real decimals: never rounded
        "1,0001",  # four decimals, not zeros
        "5,",  # a mark with no decimals
        "-5-",  # two signs
        "-(5)",
        "1,234.56.7",
        "1.234,56,7",
        "1e5",
        "0x10",
        "1 2 3 x",
        "∞",
        "92233720368547758.08",  # MAX_CENTS + 1
        "99999999999999999,99",  # >= 2^63 cents: was an OverflowError downstream
        "9" * 4400,  # more digits than int() takes
    ],
)
def test_rejects(text: str) -> None:
    with pytest.raises(AmountError):
        parse_cents(text)


def test_explicit_mark_rejects_wrong_separator_use() -> None:
    with pytest.raises(AmountError):
        parse_cents("1,5", decimal_mark=".")  # ',' would be thousands, badly grouped
    with pytest.raises(AmountError):
        parse_cents("1.234,56", decimal_mark=".")
    with pytest.raises(AmountError):
        parse_cents("1", decimal_mark=";")


def test_not_text() -> None:
    with pytest.raises(AmountError):
        parse_cents(12.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("1.234,56 D", -123456),
        ("150,00 C", 15000),
        ("1.234,56D", -123456),
        ("150,00C", 15000),
        ("R$ 1.234,56 D", -123456),
        ("D 1.234,56", -123456),
        ("C 150,00", 15000),
        ("D R$ 5,00", -500),
        ("R$ D 5,00", -500),
        ("1.234,56 d", -123456),
        ("150,00 c", 15000),
        ("1,234.56 D", -123456),
        ("0,00 D", 0),
        ("-0,00 D", 0),
        ("\u00a0150,00\u00a0C ", 15000),
        # a sign beside a mark that agrees is redundant, not ambiguous
        ("-150,00 D", -15000),
        ("150,00- D", -15000),
        ("(150,00) D", -15000),
        ("+150,00 C", 15000),
        ("D -R$ 5,00", -500),
    ],
)
def test_dc_marks(text: str, cents: int) -> None:
    assert parse_cents(text, dc_marks=True) == cents
    assert dc_mark(text) == ("debit" if text.strip().upper().count("D") else "credit")
    with pytest.raises(AmountError, match="not an amount"):
        parse_cents(text)  # off by default: a letter where no format writes one is damage


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("-150,00 C", "disagree"),
        ("+150,00 D", "disagree"),
        ("(150,00) C", "disagree"),
        ("150,00- C", "disagree"),
        ("+0,00 D", "disagree"),  # the written marks disagree, whatever the figure
        ("D 5,00 C", "more than one D/C mark"),
        ("D 5,00 D", "more than one D/C mark"),
        ("DC", "more than one D/C mark"),
        ("D", "not an amount"),
        ("c", "not an amount"),
        ("150,00 CR", "not an amount"),  # DR/CR, Déb/Créd: not marks
        ("150,00 DR", "not an amount"),
        ("150,00 Déb", "not an amount"),
        ("1D50,00", "not an amount"),
        ("D-", "not an amount"),
        ("(D 5,00)", "not an amount"),
        ("150,00 X", "not an amount"),
    ],
)
def test_dc_marks_reject(text: str, why: str) -> None:
    with pytest.raises(AmountError, match=why):
        parse_cents(text, dc_marks=True)


def test_plain_fast_path_takes_dc_marks_only_when_asked() -> None:
    assert parse_plain_cents("150.00 C", dc_marks=True) == 15000
    assert parse_plain_cents("150.00D", dc_marks=True) == -15000
    with pytest.raises(AmountError):
        parse_plain_cents("150.00 C")


@st.composite
def dc_rendered(draw: st.DrawFn) -> tuple[int, str, str, bool]:
    """(cents, text, decimal mark, a sign written): an amount with a D/C letter, in the
    spellings banks use."""
    cents = draw(st.integers(min_value=-MAX_CENTS, max_value=MAX_CENTS))
    mark = draw(st.sampled_from([",", "."]))
    thousands = draw(st.sampled_from(["", "." if mark == "," else ","]))
    body = format_cents(abs(cents), decimal_mark=mark, thousands=thousands)
    if draw(st.booleans()):
        body = "R$ " + body
    letter = ("D" if cents < 0 else "C") if cents else draw(st.sampled_from("DC"))
    signed = draw(st.booleans())
    if signed:  # a sign that agrees with the letter, as some exports print both
        body = ("-" if letter == "D" else "+") + body
    letter = draw(st.sampled_from([letter, letter.lower()]))
    gap = draw(st.sampled_from(["", " ", "  ", "\u00a0"]))
    text = draw(st.sampled_from([body + gap + letter, letter + gap + body]))
    blanks = draw(st.sampled_from(["", " ", "\t"]))
    return cents, blanks + text + blanks, mark, signed


@given(dc_rendered())
def test_dc_marks_roundtrip(case: tuple[int, str, str, bool]) -> None:
    cents, text, mark, _ = case
    assert parse_cents(text, decimal_mark=mark, dc_marks=True) == cents
    assert parse_cents(text, dc_marks=True) == cents  # inferred mark: two decimals written
    way = dc_mark(text)
    assert way == ("debit" if cents < 0 else "credit") if cents else way in ("debit", "credit")


@given(dc_rendered())
def test_dc_mark_against_the_sign_is_an_error(case: tuple[int, str, str, bool]) -> None:
    cents, text, mark, signed = case
    swapped = text.translate(str.maketrans("DdCc", "CcDd"))
    if signed:
        with pytest.raises(AmountError, match="disagree"):
            parse_cents(swapped, decimal_mark=mark, dc_marks=True)
    else:  # no sign written: the letter alone decides
        assert parse_cents(swapped, decimal_mark=mark, dc_marks=True) == -cents


@st.composite
def rendered(draw: st.DrawFn) -> tuple[int, str, str]:
    """(cents, text, decimal mark) in one of the styles banks use."""
    cents = draw(st.integers(min_value=-MAX_CENTS, max_value=MAX_CENTS))
    mark = draw(st.sampled_from([",", "."]))
    grouped = draw(st.booleans())
    thousands = ("." if mark == "," else ",") if grouped else ""
    body = format_cents(abs(cents), decimal_mark=mark, thousands=thousands)
    pad = draw(st.integers(min_value=0, max_value=4))
    if not grouped:
        body = "0" * pad + body  # zero padding (CNAB-like)
    if draw(st.booleans()):
        body = "R$ " + body
    sign_style = draw(st.sampled_from(["lead", "trail", "paren"]))
    if cents < 0:
        body = {"lead": "-" + body, "trail": body + "-", "paren": "(" + body + ")"}[sign_style]
    elif draw(st.booleans()):
        body = "+" + body
    blanks = draw(st.sampled_from(["", " ", "  ", "\t", "\u00a0"]))
    return cents, blanks + body + blanks, mark


@given(rendered())
def test_roundtrip_explicit_mark(case: tuple[int, str, str]) -> None:
    cents, text, mark = case
    assert parse_cents(text, decimal_mark=mark) == cents


@given(rendered())
def test_roundtrip_inferred_mark(case: tuple[int, str, str]) -> None:
    # Two decimals are always written, so inference is never ambiguous here.
    cents, text, _ = case
    assert parse_cents(text) == cents


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_plain_fast_path_agrees(cents: int) -> None:
    text = format_cents(cents)
    assert parse_plain_cents(text) == cents == parse_cents(text)


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=1, max_value=9))
def test_never_rounds(units: int, third: int) -> None:
    with pytest.raises(AmountError):
        parse_cents(f"{units}.12{third}", decimal_mark=".")


def test_format() -> None:
    assert format_cents(123456) == "1234.56"
    assert format_cents(-5) == "-0.05"
    assert format_brl(123456) == "R$ 1.234,56"
    with pytest.raises(TypeError):
        format_cents(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        format_cents(True)


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (0, "R$ 0,00"),
        (5, "R$ 0,05"),
        (128957470, "R$ 1.289.574,70"),
        (-215610, "\u2212R$ 2.156,10"),
        (-100000000, "\u2212R$ 1.000.000,00"),
    ],
)
def test_format_brl_one_pt_br_style(cents: int, text: str) -> None:
    assert format_brl(cents) == text
    assert parse_cents(text.replace("\u2212", "-")) == cents  # what we print reads back


def test_counts_shares_durations_pt_br() -> None:
    assert (format_count(1939), format_count(2_204_000), format_count(-5)) == (
        "1.939",
        "2.204.000",
        "\u22125",
    )
    assert format_percent(0.989672) == "99,0 %"
    assert format_percent(0.989672, 2) == "98,97 %"
    assert format_percent(12.5) == "1.250,0 %"
    assert [format_duration(s) for s in (7200, 1800, 86400, 90, 5400, 0)] == [
        "2 h",
        "30 min",
        "1 d",
        "90 s",
        "90 min",
        "0 s",
    ]
