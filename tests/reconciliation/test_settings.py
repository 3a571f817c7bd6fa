"""recon.toml [reconcile]: defaults, parsing, and a clear ConfigError for bad values."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.errors import ConfigError
from recon.reconciliation import ReconcileSettings
from recon.reconciliation.settings import parse_duration


def test_defaults_are_the_team_contract():
    s = ReconcileSettings()
    assert s.amount_tolerance_cents == 0
    assert s.onramp_payment_grace == timedelta(minutes=30)
    assert s.offramp_payout_grace == timedelta(hours=2)
    assert s.refund_grace == timedelta(hours=24)
    assert s.business_tz == "America/Sao_Paulo"
    assert s.date_from is None and s.date_to is None
    assert s.work_storage == "auto"


def test_loaded_from_recon_toml(data_dir, monkeypatch):
    monkeypatch.chdir(data_dir.root)
    monkeypatch.delenv("RECON_CONFIG", raising=False)
    data_dir.config_path.write_text(
        "[reconcile]\n"
        "amount_tolerance_cents = 5\n"
        'onramp_payment_grace = "1h30m"\n'
        "offramp_payout_grace = 600\n"
        'refund_grace = "2d"\n'
        'business_tz = "UTC"\n'
        "date_from = 2026-11-01\n"
        'date_to = "2026-11-14"\n'
        'memory_limit = "512MB"\n'
        "threads = 1\n"
        'work_storage = "disk"\n'
    )
    s = ReconcileSettings.load(data_dir)
    assert s.amount_tolerance_cents == 5
    assert s.onramp_payment_grace == timedelta(minutes=90)
    assert s.offramp_payout_grace == timedelta(minutes=10)
    assert s.refund_grace == timedelta(days=2)
    assert (s.date_from, s.date_to) == (date(2026, 11, 1), date(2026, 11, 14))
    assert s.as_dict()["onramp_payment_grace"] == 5400
    assert s.work_storage == "disk" and s.memory_limit_bytes == 512 * 10**6


@pytest.mark.parametrize(
    ("limit", "expected"),
    [("1GB", 10**9), ("1.5 GB", 1_500_000_000), ("850MB", 850 * 10**6), ("2GiB", 2 * 2**30),
     ("512 kib", 512 * 1024), ("100B", 100)],
)  # fmt: skip
def test_memory_limit_in_bytes_as_duckdb_reads_it(limit, expected):
    assert ReconcileSettings(memory_limit=limit).memory_limit_bytes == expected


def test_work_storage_auto_goes_to_disk_when_the_staged_inputs_outgrow_memory():
    auto = ReconcileSettings(memory_limit="900MB")
    assert not auto.work_on_disk(0)
    assert not auto.work_on_disk(300 * 10**6)  # staged ~900MB: fits
    assert auto.work_on_disk(300 * 10**6 + 1)
    assert not ReconcileSettings(work_storage="memory").work_on_disk(10**15)
    assert ReconcileSettings(work_storage="disk").work_on_disk(0)


def test_no_file_means_defaults(data_dir, monkeypatch):
    monkeypatch.chdir(data_dir.root)
    monkeypatch.delenv("RECON_CONFIG", raising=False)
    assert ReconcileSettings.load(data_dir) == ReconcileSettings()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"amount_tolerance_cents": -1}, "amount_tolerance_cents"),
        ({"amount_tolerance_cents": 1.5}, "amount_tolerance_cents"),
        ({"amount_tolerance_cents": True}, "amount_tolerance_cents"),
        ({"onramp_payment_grace": "soon"}, "onramp_payment_grace"),
        ({"onramp_payment_grace": "30 minutes please"}, "onramp_payment_grace"),
        ({"refund_grace": -5}, "refund_grace"),
        ({"business_tz": "Mars/Olympus"}, "business_tz"),
        ({"date_from": "01/11/2026"}, "date_from"),
        ({"date_from": "2026-11-10", "date_to": "2026-11-01"}, "after date_to"),
        ({"memory_limit": "lots"}, "memory_limit"),
        ({"threads": 0}, "threads"),
        ({"work_storage": "ssd"}, "work_storage"),
        ({"tolerance": 1}, "unknown setting"),
    ],
)
def test_bad_values_are_clear_config_errors(section, message):
    with pytest.raises(ConfigError, match=message):
        ReconcileSettings.from_mapping(section)


@given(
    h=st.integers(min_value=0, max_value=1000),
    m=st.integers(min_value=0, max_value=1000),
    s=st.integers(min_value=0, max_value=1000),
)
def test_duration_strings_add_up(h, m, s):
    assert parse_duration(f"{h}h{m}m{s}s", name="x") == timedelta(hours=h, minutes=m, seconds=s)
    assert parse_duration(h * 3600 + m * 60 + s, name="x") == timedelta(
        hours=h, minutes=m, seconds=s
    )


def test_accounts_skew_and_statements_overdue(data_dir, monkeypatch):
    monkeypatch.chdir(data_dir.root)
    (data_dir.root / "recon.toml").write_text(
        '[reconcile]\naccounts = ["itau-1234", "psp-x"]\nclock_skew = "30s"\n'
        '[alerts]\nstatements_overdue = "2d"\nfail_on_priorities = ["P1"]\n',
        encoding="utf-8",
    )
    s = ReconcileSettings.load(data_dir)
    assert s.accounts == ("itau-1234", "psp-x")
    assert s.clock_skew == timedelta(seconds=30)
    assert s.statements_overdue == timedelta(days=2)
    assert s.as_dict()["accounts"] == ["itau-1234", "psp-x"]
    assert ReconcileSettings().accounts == () and ReconcileSettings().clock_skew == timedelta(
        seconds=60
    )


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"accounts": "itau"}, "accounts"),
        ({"accounts": ["", "x"]}, "accounts"),
        ({"clock_skew": "soon"}, "clock_skew"),
        ({"clock_skew": -1}, "clock_skew"),
        ({"statements_overdue": "30h"}, "unknown"),  # an [alerts] key, not [reconcile]
    ],
)
def test_bad_accounts_and_skew(section, message):
    with pytest.raises(ConfigError, match=message):
        ReconcileSettings.from_mapping(section)
