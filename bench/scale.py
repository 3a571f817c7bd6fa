"""Benchmark: how far one machine goes. A full `reconcile` at N intents x ~N lines with DuckDB
spilling to disk, its wall time, peak RSS and the most it spilled, and the per-row costs that
size a cluster (docs/scale.md).

    .venv/bin/python bench/scale.py --rows 30000000 --workdir /tmp/scale   # 30M x 30M
    .venv/bin/python bench/scale.py --rows 2000000                         # a quick look

The data is bench/reconcile.py's generator (the same shapes, every pass with work to do),
written once into WORKDIR/data-N and reused. The run goes in a child process (its peak RSS,
VmHWM, is its own) with `memory_limit` (default 4GB) and the work tables in a scratch
database on disk beside the data; the parent samples the size of DuckDB's temp folder every
half second for the spill. Disk: about 260 bytes per intent+line of inputs, as much again for
the scratch database, and the spill (30M x 30M: ~8 GB inputs, ~20 GB at the peak).

With --spark-rows K it first runs the Spark engine (local mode, same machine) and DuckDB
on K intents, for the ratio (--rows 0 skips the DuckDB-only run):

    .venv/bin/python bench/scale.py --rows 0 --spark-rows 10000000 --workdir /tmp/scale

Ends with one line a script can read (and, with --spark-rows, one more before it):
    spark K×L: spark B s (RSS R MB, Y µs per intent+line), recon A s (ratio B/A)
    scale N×M: recon A s (RSS R MB, temp disk S GB), X µs per intent+line, inputs I GB
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reconcile import AS_OF, generate, peak_rss_mb, record_coverage


def _size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # a spill file removed while we looked
                total += os.stat(os.path.join(dirpath, name)).st_size
    return total


def _jvm_peak_rss_mb() -> float:
    """The peak RSS (VmHWM) of this process's JVM children (Spark local mode), in MB."""
    import psutil

    peak = 0
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(OSError, psutil.Error):
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
    return peak / 1024


def child(root: Path, memory_limit: str, threads: int, temp: Path, engine: str) -> None:
    from recon.config import DataDir
    from recon.reconciliation import ReconcileSettings, reconcile

    settings = ReconcileSettings(
        memory_limit=memory_limit, threads=threads, temp_directory=str(temp)
    )
    started = time.perf_counter()
    result = reconcile(
        DataDir(root), as_of=AS_OF, settings=settings, strict=False, flows=False, engine=engine
    )
    seconds = time.perf_counter() - started
    s = result.summary
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_mb": peak_rss_mb() + (_jvm_peak_rss_mb() if engine == "spark" else 0),
                "checks_passed": s.checks_passed,
                "breaks": sum(s.counts.values()),
                "matches": sum(s.matches_by_rule.values()),
            }
        )
    )


def run(root: Path, args: argparse.Namespace, engine: str = "duckdb") -> dict[str, Any]:
    import shutil

    shutil.rmtree(root / "runs", ignore_errors=True)
    temp = root.parent / f"spill-{root.name.removeprefix('data-')}"
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            peak[0] = max(peak[0], _size(temp))

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    cmd = [
        sys.executable, __file__, "--child", "--data", str(root), "--memory-limit",
        args.memory_limit, "--threads", str(args.threads), "--temp", str(temp),
        "--engine", engine,
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    try:
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    finally:
        done.set()
        watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"the run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["spill_bytes"] = peak[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000_000, help="intents (lines ~ the same)")
    parser.add_argument("--workdir", default=None, help="generate into (and reuse) WORKDIR/data-N")
    parser.add_argument("--memory-limit", default="4GB", help="DuckDB memory_limit (default 4GB)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--spark-rows",
        type=int,
        default=0,
        help="also run the Spark engine (local mode) at this size, with DuckDB beside it, "
        "for the ratio (e.g. 10000000; needs pixrecon[spark] and Java; RECON_SPARK_MEMORY sets "
        "the driver's heap, default 4g)",
    )
    parser.add_argument("--engine", default="duckdb", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--temp", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.data), args.memory_limit, args.threads, Path(args.temp), args.engine)
        return
    base = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="recon-scale-"))
    if args.spark_rows:
        spark_ratio(base, args)
    if not args.rows:
        return
    root = _data(base, args.rows)
    inputs = _size(root / "snapshots") + _size(root / "statements")
    lines = _lines(root)
    out = run(root, args)
    rows = args.rows + lines
    per_row_us = out["seconds"] / rows * 1e6
    print(
        f"memory_limit {args.memory_limit}, threads {args.threads}; checks passed: "
        f"{out['checks_passed']}; {out['matches']:,} matches, {out['breaks']:,} breaks"
    )
    print(
        f"scale {args.rows}×{lines}: recon {out['seconds']:.1f} s (RSS {out['peak_rss_mb']:.0f} MB, "
        f"temp disk {out['spill_bytes'] / 1e9:.1f} GB), {per_row_us:.2f} µs per intent+line, "
        f"inputs {inputs / 1e9:.1f} GB"
    )


def _data(base: Path, rows: int) -> Path:
    """WORKDIR/data-N, generated on first use."""
    root = base / f"data-{rows}"
    if not (root / "statements").is_dir():
        gen = generate(root, rows)
        print(
            f"generated {gen['intents']:,} intents and {gen['lines']:,} lines in {gen['seconds']:.0f} s"
        )
        record_coverage(root)
    return root


def spark_ratio(base: Path, args: argparse.Namespace) -> None:
    """The same run on DuckDB and on Spark local mode, side by side, at --spark-rows."""
    root = _data(base, args.spark_rows)
    lines = _lines(root)
    duck = run(root, args, "duckdb")
    spark = run(root, args, "spark")
    same = (duck["matches"], duck["breaks"]) == (spark["matches"], spark["breaks"])
    print(
        f"spark: {spark['matches']:,} matches, {spark['breaks']:,} breaks "
        f"({'the same as' if same else 'DIFFERENT from'} DuckDB's)"
    )
    rows = args.spark_rows + lines
    print(
        f"spark {args.spark_rows}×{lines}: spark {spark['seconds']:.1f} s "
        f"(RSS {spark['peak_rss_mb']:.0f} MB, {spark['seconds'] / rows * 1e6:.2f} µs per "
        f"intent+line), recon {duck['seconds']:.1f} s (ratio {spark['seconds'] / duck['seconds']:.1f})"
    )


def _lines(root: Path) -> int:
    import pyarrow.parquet as pq

    return sum(
        pq.ParquetFile(f).metadata.num_rows
        for f in (root / "statements").glob("source=*/*.parquet")
    )


if __name__ == "__main__":
    main()
