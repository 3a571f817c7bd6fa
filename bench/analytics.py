"""How long the analytics take on a big history: synthetic snapshots written straight to
Parquet (INTENTS_SCHEMA), then each recon.analytics function timed (wall and process CPU
seconds: on a shared machine the CPU time is the steadier figure).

    .venv/bin/python bench/analytics.py [--intents 100000] [--snapshots 4]

It ends with one line per function (its slowest call) and one line for bench/README.md:

    analytics N×S: status_history A s, funnel B s, ... (slowest call of each, wall)

Each intent is created in a 14-day window and moves forward along the onramp/offramp
lifecycle (or exits) from one snapshot to the next, so status_history has several rows per
intent and a share of entries is bracketed (updated_at not moved).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from recon import analytics
from recon.config import DataDir, new_run_id
from recon.schemas import INTENTS_SCHEMA, OFFRAMP_LIFECYCLE, ONRAMP_LIFECYCLE


def write_history(data: DataDir, n: int, snapshots: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-11-01T00:00:00", "us")
    created = start + rng.integers(0, 14 * 86400, n).astype("timedelta64[s]")
    onramp = rng.random(n) < 0.6
    amount = rng.integers(1_000, 1_000_000, n)
    # furthest stage each intent gets to, and whether it exits there
    final = rng.integers(1, 8, n)
    exits = rng.random(n) < 0.2
    ids = pa.array(np.char.add("intent-", np.char.zfill(np.arange(n).astype(str), 8)))
    on_life = np.array(ONRAMP_LIFECYCLE, dtype=object)
    off_life = np.array(OFFRAMP_LIFECYCLE, dtype=object)
    ts = INTENTS_SCHEMA.field("created_at").type
    last = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=15)
    minutes_back = (np.arange(n) % 300).astype("timedelta64[m]")
    for k in range(snapshots):
        at = last - timedelta(hours=6 * (snapshots - 1 - k))
        progress = (k + 1) / snapshots
        # stage along each intent's own lifecycle (1-based, clipped to its length)
        stage = np.maximum(1, np.rint(final * progress).astype(np.int64))
        on_stage = np.minimum(stage, len(on_life)) - 1
        off_stage = np.minimum(stage, len(off_life)) - 1
        statuses = np.where(onramp, on_life[on_stage], off_life[off_stage])
        if k == snapshots - 1:
            statuses = np.where(exits, np.where(onramp, "expired", "failed"), statuses)
        at64 = np.datetime64(at.replace(tzinfo=None), "us")
        updated = at64 - minutes_back
        run_id = new_run_id(at)
        folder = data.snapshots / f"snapshot_date={at:%Y-%m-%d}" / f"run_id={run_id}"
        folder.mkdir(parents=True)
        cols = {f.name: pa.nulls(n, f.type) for f in INTENTS_SCHEMA}
        cols |= {
            "id": ids,
            "intent_type": pa.array(np.where(onramp, "onramp", "offramp")),
            "status": pa.array(statuses.astype(str)),
            "created_at": pa.array(created, type=pa.timestamp("us")).cast(ts),
            "updated_at": pa.array(updated, type=pa.timestamp("us")).cast(ts),
            "amount_cents": pa.array(amount, type=pa.int64()),
            "snapshot_at": pa.array(np.full(n, at64), type=pa.timestamp("us")).cast(ts),
            "run_id": pa.array(np.full(n, run_id)),
        }
        table = pa.table([cols[f.name] for f in INTENTS_SCHEMA], schema=INTENTS_SCHEMA)
        pq.write_table(table, folder / "part-00000.parquet")
        (folder / "_manifest.json").write_text(json.dumps({"run_id": run_id, "rows": n}))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--intents", type=int, default=100_000)
    parser.add_argument("--snapshots", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(Path(tmp) / "data").ensure()
        began = time.perf_counter()
        write_history(data, args.intents, args.snapshots)
        print(
            f"wrote {args.intents:,} intents × {args.snapshots} snapshots "
            f"in {time.perf_counter() - began:.1f} s"
        )
        con = analytics.connect(data)
        # (function, variant) -> call; the summary keeps each function's slowest variant
        calls = {
            ("status_history", "rows"): lambda: analytics.status_history(con),
            ("funnel", "onramp by day"): lambda: analytics.funnel(con),
            ("funnel", "offramp by week"): lambda: analytics.funnel(
                con, intent_type="offramp", cohort="week"
            ),
            ("expiry_rates", "by cohort"): lambda: analytics.expiry_rates(con),
            ("expiry_rates", "by amount"): lambda: analytics.expiry_rates(con, by="amount"),
            ("expiry_rates", "by hour"): lambda: analytics.expiry_rates(con, by="hour"),
            ("time_to_pay", "+ summary"): lambda: analytics.duration_summary(
                analytics.time_to_pay(con)
            ),
            ("volumes", ""): lambda: analytics.volumes(con),
            ("status_reasons", ""): lambda: analytics.status_reasons(con),
            ("failures", ""): lambda: analytics.failures(con),
        }
        slowest: dict[str, tuple[float, float]] = {}
        for (function, variant), call in calls.items():
            t, c = time.perf_counter(), _cpu_seconds()
            rows = len(call())
            wall, cpu = time.perf_counter() - t, _cpu_seconds() - c
            slowest[function] = max(slowest.get(function, (0.0, 0.0)), (wall, cpu))
            name = f"{function} {variant}".strip()
            print(f"{name:30s} {wall:7.2f} s  (CPU {cpu:6.2f} s, {rows:,} rows)")
        print()
        for function, (wall, cpu) in slowest.items():
            print(f"{function}: {wall:.2f} s (CPU {cpu:.2f} s)")
        figures = ", ".join(f"{f} {wall:.1f} s" for f, (wall, _) in slowest.items())
        print(f"analytics {args.intents}×{args.snapshots}: {figures}")
        con.close()


if __name__ == "__main__":
    main()
