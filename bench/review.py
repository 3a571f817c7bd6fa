"""How fast the review app's queue answers with many open breaks.

    .venv/bin/python bench/review.py [--breaks 100000] [--requests 200] [--workdir DIR]

Builds a data directory whose latest run holds N open breaks (every category, realistic
reasons and amounts), written through recon's own storage code (`atomic_dir`, the
EXCEPTIONS_SCHEMA Parquet writer and `write_json`), with a snapshot of the intents behind
them and review state in the audit log (assignments, comments, resolutions), and an earlier
run whose extra breaks the latest no longer lists (closed by the data); starts `recon review`
in a child process on loopback and times, one request at a time over a kept-alive connection,
the queue over a mix of filters, searches, sorts and pages, the closed filter and the period
view over both runs, and break pages. Ends with one line: the p95 of each against the 300 ms
target.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from recon.config import DataDir
from recon.reconciliation import audit
from recon.reconciliation.decisions import Decision, append_decision
from recon.schemas import CATEGORIES, EXCEPTIONS_SCHEMA, INTENTS_SCHEMA
from recon.storage import atomic_dir, write_json

TARGET_MS = 300.0
RUN_ID = "20261120T090000000000Z-beef"
OLD_RUN_ID = "20261119T090000000000Z-beef"  # lists a tenth more breaks, since closed
DECIDED = datetime(2026, 11, 20, 15, tzinfo=UTC)
NAMES = ["MARIA SILVA", "JOAO PEREIRA", "ANA SOUZA", "CARLOS LIMA", "BEATRIZ COSTA"]


def build(data: DataDir, n: int, seed: int = 1) -> list[str]:
    """Write a snapshot of N intents and a run with one open break per intent; the ids."""
    rng = np.random.default_rng(seed)
    categories = list(CATEGORIES)
    cat = rng.integers(0, len(categories), n)
    ids = [f"{i:08x}-0000-4000-8000-{i:012x}" for i in range(n)]
    e2e = [f"E18236120202611{i % 28 + 1:02d}1300{i:011d}" for i in range(n)]
    expected = rng.integers(1_000, 5_000_000, n)
    actual = expected + rng.integers(-5_000, 5_000, n)
    ages = rng.integers(0, 40, n)
    t0 = datetime(2026, 11, 1, 12, tzinfo=UTC)
    created = [t0 + timedelta(minutes=int(m)) for m in rng.integers(0, 19 * 1440, n)]

    intents = {f.name: [None] * n for f in INTENTS_SCHEMA}
    intents.update(
        id=ids,
        instance_id=["inst"] * n,
        party_id=[f"party-{i % 5000}" for i in range(n)],
        intent_type=["onramp"] * n,
        flow_version=[2] * n,
        status=["completed"] * n,
        created_at=created,
        updated_at=created,
        expires_at=[c + timedelta(minutes=30) for c in created],
        amount_cents=expected.tolist(),
        party_display_name=[NAMES[i % len(NAMES)] + f" {i % 997}" for i in range(n)],
        raw=["{}"] * n,
    )
    snapshot_at = datetime(2026, 11, 20, 9, tzinfo=UTC)
    intents.update(snapshot_at=[snapshot_at] * n, run_id=[RUN_ID] * n)
    table = pa.Table.from_pydict(intents, schema=INTENTS_SCHEMA)
    # a committed snapshot folder (no manifest: counts as full and consistent)
    folder = data.snapshots / "snapshot_date=2026-11-20" / f"run_id={RUN_ID}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(folder) as tmp:
        pq.write_table(table, tmp / "part-00000.parquet")

    rows = {
        "break_id": [f"{i:020x}" for i in range(n)],
        "run_id": [RUN_ID] * n,
        "category": [categories[c] for c in cat],
        "priority": [CATEGORIES[categories[c]].priority for c in cat],
        "intent_id": ids,
        "line_id": [None] * n,
        "end_to_end_id": e2e,
        "expected_cents": expected.tolist(),
        "actual_cents": actual.tolist(),
        "delta_cents": (actual - expected).tolist(),
        "reason": [
            f"Onramp {ids[i]} is completed for R$ {expected[i] / 100:,.2f}, but no PIX credit "
            "in the statements matches it."
            for i in range(n)
        ],
        # as a run stores it: the code and its parameters, rendered where a page shows it
        "reason_code": ["onramp_missing_credit"] * n,
        "reason_params": [
            json.dumps(
                {
                    "intent_id": ids[i],
                    "status": "completed",
                    "amount_cents": int(expected[i]),
                    "payer": NAMES[i % len(NAMES)],
                    "created_at": "2026-11-20T09:00:00Z",
                }
            )
            for i in range(n)
        ],
        "first_seen_run": [RUN_ID] * n,
        "age_days": ages.tolist(),
        "state": ["persisting" if a else "new" for a in ages],
    }
    data.runs.mkdir(parents=True, exist_ok=True)
    latest = pa.Table.from_pydict(rows, schema=EXCEPTIONS_SCHEMA)
    gone = n // 10  # the earlier run's breaks the latest no longer lists: cleared by the data
    earlier = latest.slice(0, gone).to_pydict() | {
        "break_id": [f"{n + i:020x}" for i in range(gone)], "run_id": [OLD_RUN_ID] * gone,
        "first_seen_run": [OLD_RUN_ID] * gone,
    }  # fmt: skip
    with atomic_dir(data.runs / OLD_RUN_ID) as tmp:
        pq.write_table(
            pa.Table.from_pydict(earlier, schema=EXCEPTIONS_SCHEMA), tmp / "exceptions.parquet"
        )
        write_json(tmp / "summary.json", {"run_id": OLD_RUN_ID, "breaks": gone})
    with atomic_dir(data.runs / RUN_ID) as tmp:
        pq.write_table(latest, tmp / "exceptions.parquet")
        pq.write_table(pa.table({"line_id": pa.array([], pa.string()),
                                 "intent_id": pa.array([], pa.string()),
                                 "rule": pa.array([], pa.string())}), tmp / "candidates.parquet")  # fmt: skip
        write_json(tmp / "summary.json", {"run_id": RUN_ID, "breaks": n})
    with audit.locked(data) as log:
        for i in range(0, n, max(1, n // 2000)):
            log.append(by="ana", action="assign", break_id=rows["break_id"][i],
                       after={"assignee": NAMES[i % 3].split()[0].lower()})  # fmt: skip
            if i % 3 == 0:
                log.append(by="bia", action="comment", break_id=rows["break_id"][i],
                           note="asked the bank")  # fmt: skip
        for i in range(1, n, max(1, n // 1000)):  # a thousand resolutions, closed in this run
            when = (DECIDED + timedelta(minutes=i % 600)).isoformat()
            decision = Decision(rows["break_id"][i], "returned to the payer", "ana", when)
            append_decision(data, log, decision, False)
    return ids


def queries(ids: list[str]) -> list[dict[str, str]]:
    return [
        {},
        {"page": "37"},
        {"priority": "P1"},
        {"category": "onramp_underpaid", "sort": "-amount"},
        {"state": "new", "sort": "age"},
        {"min_age": "7", "max_age": "30"},
        {"assignee": "maria"},
        {"assignee": "-", "priority": "P2"},
        {"q": ids[4242][:13]},
        {"q": "maria silva 12"},
        {"q": "1.234,56"},
        {"q": "E1823612020261115"},
        {"sort": "first_seen", "per_page": "100"},
        {"status": "all", "sort": "category", "page": "500"},
    ]


# the closed work, across both runs: what a month-end or an audit asks for
CLOSED = [
    {"decision": "closed"},
    {"decision": "closed", "page": "150"},
    {"decision": "closed", "sort": "-amount", "priority": "P1"},
    {"decision": "closed", "q": "maria silva 1"},
    {"decided_from": "2026-11-20", "decided_to": "2026-11-20"},
    {"decision": "all", "sort": "amount", "page": "900"},
]


def timed(client: httpx.Client, path: str, params: dict[str, str]) -> float:
    """One GET's milliseconds (it must answer 200)."""
    t = time.perf_counter()
    r = client.get(path, params=params)
    elapsed = (time.perf_counter() - t) * 1000
    assert r.status_code == 200, (path, params, r.status_code)
    return elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--breaks", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="recon-review-bench-"))
    data = DataDir(root / "data").ensure()
    started = time.perf_counter()
    if (data.runs / RUN_ID).is_dir():  # a --workdir from an earlier run of this bench
        ids = [f"{i:08x}-0000-4000-8000-{i:012x}" for i in range(args.breaks)]
        print(f"re-using {data.root}")
    else:
        ids = build(data, args.breaks)
        print(f"built {args.breaks:,} open breaks in {time.perf_counter() - started:.1f} s")

    env = dict(os.environ, RECON_REVIEW_SECRET="bench-secret-0123456789abcdef")
    child = subprocess.Popen(
        [sys.executable, "-m", "recon", "review", "--data", str(data.root), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        line = child.stdout.readline() if child.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            print(f"review did not start: {line} {child.stderr.read() if child.stderr else ''}")
            return 2
        base = f"http://127.0.0.1:{found.group(1)}"
        with httpx.Client(base_url=base, timeout=60) as client:
            t = time.perf_counter()
            first = client.get("/")
            assert first.status_code == 200, first.text[:300]
            print(
                f"first request (loads and indexes the run): {(time.perf_counter() - t) * 1000:.0f} ms"
            )
            total = re.search(r'data-testid="total">([\d.,]+) ', first.text)
            print(f"queue lists {total.group(1) if total else '?'} breaks")
            mix = queries(ids)
            times: dict[str, list[float]] = {}
            for i in range(args.requests):
                params = mix[i % len(mix)]
                times.setdefault(str(params), []).append(timed(client, "/", params))
            closed = [
                timed(client, "/", CLOSED[i % len(CLOSED)]) for i in range(args.requests // 2)
            ]
            # break pages, each opened from a filter (the neighbours are looked up too)
            pages = [
                timed(client, f"/breaks/{(i * 7919) % args.breaks:020x}", mix[i % len(mix)])
                for i in range(args.requests // 4)
            ]  # fmt: skip
    finally:
        child.terminate()
        child.wait(10)
    every = sorted(x for v in times.values() for x in v)
    for key, values in times.items():
        print(f"  {statistics.median(values):7.1f} ms median  {max(values):7.1f} max  {key}")
    print(f"closed filter: median {statistics.median(closed):.0f} ms, max {max(closed):.0f} ms")
    print(f"break page: median {statistics.median(pages):.0f} ms, max {max(pages):.0f} ms")
    worst = max(p95(every), p95(closed), p95(pages))
    verdict = "PASS" if worst < TARGET_MS else "FAIL"
    print(
        f"review queue, {args.breaks:,} open breaks, {len(every)} requests: p50 "
        f"{statistics.median(every):.0f} ms, p95 {p95(every):.0f} ms, max {every[-1]:.0f} ms; "
        f"closed filter p95 {p95(closed):.0f} ms ({len(closed)}); break page p95 "
        f"{p95(pages):.0f} ms ({len(pages)}) (target p95 < {TARGET_MS:.0f} ms): {verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
