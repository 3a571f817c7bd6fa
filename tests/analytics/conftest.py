"""A hand-built history whose funnel and expiry numbers are known exactly."""

from __future__ import annotations

import pytest

from recon.config import DataDir
from tests.analytics.history import History, minutes, utc

# Snapshots (UTC). Business tz America/Sao_Paulo is UTC-3 (no DST in 2026).
S1 = utc(2026, 11, 18, 16, 0)
S2 = utc(2026, 11, 19, 16, 0)
S3 = utc(2026, 11, 20, 16, 0)
DAY1 = utc(2026, 11, 18, 15, 0)  # 12:00 in São Paulo, Wednesday 2026-11-18
DAY2 = utc(2026, 11, 20, 2, 0)  # 23:00 on Thursday 2026-11-19 in São Paulo


def build_history() -> History:
    """Cohort 2026-11-18 (10 onramps) and cohort 2026-11-19 (4 onramps, 1 offramp).

    Cohort 1: c1..c4 seen awaiting, fiat_received, completed; c5 only ever seen completed; e1, e2 seen
    awaiting then expired; e3 only ever seen expired; r1 seen fiat_received then refunded;
    o1 still awaiting payment (open, right-censored).
    Cohort 2: d1 completed, d2..d4 expired (all seen awaiting first); f1 an offramp.
    """
    h = History()
    for i in range(1, 5):
        iid = f"c{i}"
        h.intent(iid, created_at=DAY1, amount_cents=10_000 * i)
        h.see(iid, S1, "awaiting_fiat_payment", updated_at=DAY1)
        # paid 60 + 10*i minutes after creation; updated_at tells exactly when
        h.see(iid, S2, "fiat_received", updated_at=S1 + minutes(10 * i))
        h.see(iid, S3, "completed", updated_at=S2 + minutes(5))
    h.intent("c5", created_at=DAY1 + minutes(30), amount_cents=500_000)
    h.see("c5", S1, "completed", updated_at=DAY1 + minutes(45))
    for iid in ("e1", "e2"):
        h.intent(iid, created_at=DAY1, amount_cents=3_000)
        h.see(iid, S1, "awaiting_fiat_payment", updated_at=DAY1)
        h.see(iid, S2, "expired", updated_at=DAY1 + minutes(60), reason="payment window elapsed")
    h.intent("e3", created_at=DAY1, amount_cents=3_000)
    h.see("e3", S2, "expired", updated_at=DAY1 + minutes(60))
    h.intent("r1", created_at=DAY1, amount_cents=25_000)
    h.see("r1", S1, "fiat_received", updated_at=DAY1 + minutes(20))
    h.see("r1", S2, "refunded", updated_at=DAY1 + minutes(300), reason="compliance rejected")
    h.intent("o1", created_at=DAY1, amount_cents=7_500)
    for s in (S1, S2, S3):
        h.see("o1", s, "awaiting_fiat_payment", updated_at=DAY1)

    h.intent("d1", created_at=DAY2, amount_cents=50_000)
    h.see("d1", S3 - minutes(600), "awaiting_fiat_payment", updated_at=DAY2)
    # paid between snapshots but updated_at was not moved by the server: bracket only
    h.see("d1", S3, "fiat_received", updated_at=DAY2)
    for iid in ("d2", "d3", "d4"):
        h.intent(iid, created_at=DAY2, amount_cents=2_000)
        h.see(iid, S3 - minutes(600), "awaiting_fiat_payment", updated_at=DAY2)
        h.see(iid, S3, "expired", updated_at=DAY2 + minutes(30))
    h.intent("f1", created_at=DAY2, intent_type="offramp", amount_cents=40_000)
    h.see("f1", S3, "failed", updated_at=DAY2 + minutes(5), reason="payout rejected")
    return h


@pytest.fixture
def history_dir(data_dir: DataDir) -> DataDir:
    build_history().write(data_dir)
    return data_dir
