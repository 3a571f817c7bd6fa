"""Benchmark: how long `recon sandbox serve` makes people wait.

    .venv/bin/python bench/sandbox_startup.py                  # 30 days x 500 intents/day
    .venv/bin/python bench/sandbox_startup.py --days 2 --intents-per-day 50 --repeat 3

Starts `python -m recon sandbox serve --port 0` in a fresh process, times the first stdout
line (`Serving v2 API at ...`) and the first answered `GET /v2/intents?limit=1`, then stops it.
Prints one line per run and a last line a script can read:

    sandbox start-up D×K: first line W s, first answer A s, CPU C s (load average L)

CPU is the child's user + system time: on a busy machine the wall time is mostly waiting for
a core, so compare CPU across machines and wall time only at a similar load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(days: int, per_day: int, seed: int) -> tuple[float, float, float]:
    """(seconds to the first line, seconds to the first answer, child CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "recon", "sandbox", "serve", "--port", "0", "--seed", str(seed),
           "--days", str(days), "--intents-per-day", str(per_day)]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().split()
        first_line = time.perf_counter() - started
        key = proc.stdout.readline().split()[-1]
        request = urllib.request.Request(
            f"{first[-1]}/v2/intents?limit=1", headers={"X-API-Key": key}
        )
        with urllib.request.urlopen(request, timeout=60) as resp:
            resp.read()
        answered = time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return first_line, answered, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--intents-per-day", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    runs = []
    for i in range(args.repeat):
        runs.append(run_once(args.days, args.intents_per_day, args.seed))
        first, answer, cpu = runs[-1]
        print(
            f"run {i + 1}: first line {first:.2f} s, first answer {answer:.2f} s, CPU {cpu:.2f} s"
        )
    first, answer, cpu = min(runs)
    print(
        f"sandbox start-up {args.days}×{args.intents_per_day}: first line {first:.2f} s, "
        f"first answer {answer:.2f} s, CPU {cpu:.2f} s (load average {os.getloadavg()[0]:.1f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
