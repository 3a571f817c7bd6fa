"""PSP fee schedules: the fee arithmetic (Python and the models' SQL) over any schedule, and
how recon.toml declares one."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.errors import ConfigError
from recon.reconciliation import ReconcileSettings
from recon.reconciliation.fees import FeeSchedule, fee_schedule_rows, schedules_from_config

amounts = st.integers(min_value=0, max_value=10**11)  # up to R$ 1 billion


@st.composite
def schedules(draw: st.DrawFn) -> FeeSchedule:
    low = draw(st.integers(0, 10_000))
    high = draw(st.none() | st.integers(low, 10**7))
    return FeeSchedule(
        "psp",
        rate_ppm=draw(st.integers(0, 1_000_000)),
        fixed_cents=draw(st.integers(0, 10_000)),
        min_cents=low,
        max_cents=high,
    )


def exact_fee(s: FeeSchedule, amount: int) -> int:
    """The schedule's fee by decimal arithmetic: percent of the amount rounded half up."""
    percent = Decimal(amount) * Decimal(s.rate_ppm) / Decimal(1_000_000)
    fee = s.fixed_cents + int(percent.quantize(Decimal(1), rounding=ROUND_HALF_UP))
    fee = max(fee, s.min_cents)
    return fee if s.max_cents is None else min(fee, s.max_cents)


@given(schedules(), amounts)
def test_the_fee_is_the_percent_rounded_half_up_plus_fixed_within_the_bounds(s, amount):
    fee = s.fee(amount)
    assert fee == exact_fee(s, amount)
    assert fee >= s.min_cents
    assert s.max_cents is None or fee <= s.max_cents


@given(schedules(), amounts, amounts)
def test_the_fee_never_falls_as_the_amount_grows(s, a, b):
    low, high = sorted((a, b))
    assert s.fee(low) <= s.fee(high)


@pytest.fixture(scope="module")
def sql_fee() -> duckdb.DuckDBPyConnection:
    """A connection with the models' schedule_fee macro (recon/models/staging/_macros.sql)."""
    text = (resources.files("recon.models") / "staging" / "_macros.sql").read_text("utf-8")
    macro = re.search(r"CREATE OR REPLACE TEMP MACRO schedule_fee\(.*?END;", text, re.S)
    assert macro is not None
    con = duckdb.connect()
    con.execute(macro.group(0))
    return con


@given(st.lists(st.tuples(schedules(), amounts), min_size=1, max_size=20))
def test_the_models_compute_the_same_fee(sql_fee, cases):
    rows = fee_schedule_rows(tuple(s for s, _ in cases))
    sql_fee.register("cases", rows.append_column("amount", [[a for _, a in cases]]))
    got = sql_fee.execute(
        "SELECT schedule_fee(amount, rate_ppm, fixed_cents, min_cents, max_cents) FROM cases"
    ).fetchall()
    assert [g for (g,) in got] == [s.fee(a) for s, a in cases]


def test_the_label_says_the_schedule_as_written():
    assert FeeSchedule("a", 9_900, 50, 10, 1000).label() == (
        "0.99% + R$ 0,50 (min R$ 0,10, max R$ 10,00)"
    )
    assert FeeSchedule("a", fixed_cents=150).label() == "R$ 1,50"
    assert FeeSchedule("a", rate_ppm=10_000).label() == "1%"


@pytest.mark.parametrize(
    ("fee", "rate"),
    [
        ({"percent": "0.99"}, 9_900),
        ({"percent": "1.2345"}, 12_345),
        ({"percent": 2}, 20_000),
        ({"percent": 0.99}, 9_900),  # a TOML number: the digits written, not the binary float
        ({"percent": 1.1}, 11_000),
        ({"percent": 0.0001}, 1),
        ({"basis_points": 149}, 14_900),
        ({"fixed_cents": 50}, 0),
    ],
)
def test_a_schedule_is_read_exactly_as_written(fee, rate):
    (schedule,) = schedules_from_config({"accounts": {"efi": {"fee": fee}}})
    assert schedule.account == "efi" and schedule.rate_ppm == rate


@pytest.mark.parametrize(
    ("fee", "says"),
    [
        ({"percent": float("nan")}, "between 0 and 100"),
        ({"percent": 1e-05}, "more than 4 decimal places"),
        ({"percent": "1.23456"}, "more than 4 decimal places"),
        ({"percent": "abc"}, "is not a number"),
        ({"percent": "101"}, "between 0 and 100"),
        ({"percent": "1", "basis_points": 100}, "not both"),
        ({"basis_points": 10_001}, "at most 10000"),
        ({"fixed_cents": -1}, "fixed_cents must be an integer >= 0"),
        ({"fixed_cents": 1.5}, "fixed_cents must be an integer >= 0"),
        ({"min_cents": 10, "max_cents": 5, "percent": "1"}, "max_cents 5 is below min_cents 10"),
        ({"percnt": "1"}, "unknown key(s) percnt"),
        ({}, "states no fee"),
        ("1%", "expected a table"),
    ],
)
def test_a_bad_schedule_is_a_config_error_that_says_what(fee, says):
    with pytest.raises(ConfigError) as err:
        schedules_from_config({"accounts": {"efi": {"fee": fee}}})
    assert says in str(err.value) and str(err.value).startswith("[accounts.efi] fee")


def test_an_account_table_holds_only_its_fee():
    with pytest.raises(ConfigError, match=r"\[accounts.efi\] unknown setting\(s\): fees"):
        schedules_from_config({"accounts": {"efi": {"fees": {}}}})


def test_recon_toml_declares_the_schedules(tmp_path: Path):
    config = tmp_path / "recon.toml"
    config.write_text(
        '[accounts.efi]\nfee = { percent = "0.99", min_cents = 1, max_cents = 1000 }\n'
        "[accounts.itau]\n",
        encoding="utf-8",
    )
    settings = ReconcileSettings.load(path=str(config))
    assert settings.fee_schedules == (FeeSchedule("efi", 9_900, 0, 1, 1000),)


def test_what_a_fee_off_its_schedule_puts_at_stake_is_the_difference():
    import pandas as pd

    from recon.review.queue import at_stake

    row = {"category": "onramp_fee_mismatch", "expected_cents": 136, "actual_cents": 200}
    frame = pd.DataFrame([{**row, "delta_cents": 64}])
    assert at_stake(frame).tolist() == [64]  # not the fee taken, R$ 2,00


@given(st.integers(min_value=1, max_value=1_000_000))
def test_a_toml_number_is_the_schedule_its_text_is(ppm: int) -> None:
    import tomllib

    text = f"{Decimal(ppm) / 10_000:f}"  # 0.0001 .. 100 with at most 4 decimal places
    as_number = tomllib.loads(f"[accounts.efi]\nfee = {{ percent = {text} }}\n")
    (schedule,) = schedules_from_config(as_number)
    assert schedule.rate_ppm == ppm
