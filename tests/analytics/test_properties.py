"""Properties over random histories: the SQL agrees with a plain-Python count."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon import analytics
from recon.config import DataDir
from recon.schemas import ONRAMP_LIFECYCLE
from tests.analytics.history import History, utc

T0 = utc(2026, 11, 18, 15)
SNAPS = [T0 + timedelta(hours=h) for h in (1, 5, 9, 13)]
STAGES = [s for s in ONRAMP_LIFECYCLE if s != "requires_compliance"]
RANK = {s: ONRAMP_LIFECYCLE.index(s) + 1 for s in ONRAMP_LIFECYCLE}
IMPLIED = {"expired": RANK["awaiting_fiat_payment"], "refunded": RANK["fiat_received"]}

# one intent: for each snapshot, None (not seen) or an index into the path it walks
intent = st.tuples(
    st.lists(st.integers(0, len(STAGES) - 1), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),  # seen in that snapshot?
    st.sampled_from([None, "expired", "canceled", "refunded"]),  # exit at the end
    st.booleans(),  # does the server move updated_at?
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(intent, min_size=1, max_size=12))
def test_funnel_and_outcomes_match_a_python_count(intents: list) -> None:
    h = History()
    expected_rank: dict[str, int] = {}
    expected_outcome: dict[str, str] = {}
    pairs: set[tuple[str, str]] = set()
    for n, (steps, seen, exit_status, moves) in enumerate(intents):
        if not any(seen):
            continue
        iid = f"i{n}"
        h.intent(iid, created_at=T0)
        walked = sorted(steps)  # forward only
        statuses = [STAGES[i] for i in walked]
        last_seen = max(k for k, flag in enumerate(seen) if flag)
        if exit_status is not None:
            statuses[last_seen] = exit_status
        best, last = 1, None
        for k, flag in enumerate(seen):
            if not flag:
                continue
            status = statuses[k]
            updated = SNAPS[k] - timedelta(minutes=30) if moves else T0
            h.see(iid, SNAPS[k], status, updated_at=updated)
            pairs.add((iid, status))
            best = max(best, RANK.get(status, IMPLIED.get(status, 1)))
            last = status
        expected_rank[iid] = best
        expected_outcome[iid] = (
            "completed"
            if last == "completed"
            else last
            if last in IMPLIED or last == "canceled"
            else "open"
        )
    if not expected_rank:
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(Path(tmp) / "data").ensure()
        h.write(data)
        con = analytics.connect(data)
        try:
            f = analytics.funnel(con, cohort="all")
            hist = analytics.status_history(con)
            exp = analytics.expiry_rates(con, cohort="all").iloc[0]
        finally:
            con.close()
    reached = list(f.reached)
    assert reached == sorted(reached, reverse=True)  # a funnel never widens
    for stage, got in zip(f.stage, reached, strict=True):
        assert got == sum(1 for r in expected_rank.values() if r >= RANK[stage]), stage
    assert set(zip(hist.intent_id, hist.status, strict=True)) == pairs
    exact = hist[hist.entry_source == "updated_at"]
    assert (exact.entered_at >= exact.entered_after).all()
    assert (hist.entered_after <= hist.entered_before).all()
    outcomes = list(expected_outcome.values())
    assert exp.intents == len(outcomes)
    assert exp.expired == outcomes.count("expired")
    assert exp.still_open == outcomes.count("open")
    assert exp.completed == outcomes.count("completed")
    assert exp.expired + exp.completed + exp.other_exit + exp.still_open == exp.intents
