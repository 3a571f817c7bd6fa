"""Benchmark: should a *local* data directory also be Delta Lake? Plain Parquet vs Delta.

    .venv/bin/python bench/lake.py [--intents 1000000] [--lines 1000000] [--new 100000]
        [--workdir /tmp/lake-bench]

On local disk, three writes recon makes, each timed both ways (best of `--repeat`):

- snapshot: publish N intents (INTENTS_SCHEMA, zstd) as recon does today (a `.tmp-` folder,
  fsync, rename: recon.storage.atomic_dir) vs. one Delta append (deltalake, partitions
  snapshot_date / snapshot_run, manifest in the commit), as a remote data directory does;
- import: store `--new` new statement lines beside `--lines` already stored: today one Parquet
  file written atomically (the importer has already dropped what is stored) vs. a Delta MERGE
  on (line_id, fingerprint), which reads every stored key again to find the new rows;
- read: DuckDB counting the lines of every file (a glob of the plain files vs. the Delta
  table's committed file list through a pyarrow dataset).

Data are generated here and not timed. Last lines:
``snapshot N: parquet X s, delta Y s`` / ``import M into K: parquet X s, delta Y s`` /
``read K+M: parquet X s, delta Y s``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from recon.schemas import INTENTS_SCHEMA
from recon.statements.stored import STORED_SCHEMA, write_parquet_atomic
from recon.storage import atomic_dir

AT = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)


def _hex(n: int, salt: str) -> pa.Array:
    return pa.array([hashlib.md5(f"{salt}{i}".encode()).hexdigest() for i in range(n)])


def _table(
    schema: pa.Schema, n: int, ids: dict[str, str], words: list[str | None], low: int, seed: int
) -> pa.Table:
    """N random rows of `schema`: the `ids` columns distinct hex (salted), the other strings
    drawn from `words`, timestamps within the day before AT, other numbers in [low, 1e6)."""
    rng = np.random.default_rng(seed)
    choices = np.array(words, dtype=object)
    columns: dict[str, pa.Array] = {}
    for field in schema:
        if field.name in ids:
            columns[field.name] = _hex(n, ids[field.name])
        elif pa.types.is_string(field.type):
            columns[field.name] = pa.array(rng.choice(choices, n), pa.string())
        elif pa.types.is_timestamp(field.type):
            micros = int(AT.timestamp() * 1e6) - rng.integers(0, 86_400_000_000, n)
            columns[field.name] = pa.array(micros, pa.int64()).cast(field.type)
        else:
            columns[field.name] = pa.array(rng.integers(low, 1_000_000, n), field.type)
    return pa.table(columns, schema=schema)


def intents(n: int) -> pa.Table:
    words = ["onramp", "offramp", "completed", "expired", None]
    return _table(INTENTS_SCHEMA, n, {"id": "intent"}, words, 100, seed=1)


def lines(n: int, salt: str) -> pa.Table:
    ids = {"line_id": salt + "line_id", "fingerprint": salt + "fingerprint"}
    words = ["pix_in", "pix_out", "credit", "debit", None]
    return _table(STORED_SCHEMA, n, ids, words, -1_000_000, seed=len(salt))


def best(repeat: int, setup: Callable[[], None], run: Callable[[], None]) -> float:
    times = []
    for _ in range(repeat):
        setup()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--intents", type=int, default=1_000_000)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--new", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lake-bench"))
    args = parser.parse_args()
    from deltalake import DeltaTable, write_deltalake
    from deltalake.transaction import CommitProperties

    work: Path = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    snapshot = intents(args.intents)
    manifest = {"run_id": "r1", "rows": snapshot.num_rows}

    def clean(*names: str) -> Callable[[], None]:
        return lambda: [shutil.rmtree(work / n, ignore_errors=True) for n in names] and None

    def parquet_snapshot() -> None:
        final = work / "plain" / "snapshots" / "snapshot_date=2026-11-02" / "run_id=r1"
        with atomic_dir(final) as tmp:
            pq.write_table(snapshot, tmp / "part-00000.parquet", compression="zstd")
            (tmp / "_manifest.json").write_text(json.dumps(manifest))

    def delta_snapshot() -> None:
        n = snapshot.num_rows
        rows = snapshot.append_column(
            "snapshot_date", pa.array(["2026-11-02"] * n, pa.string())
        ).append_column("snapshot_run", pa.array(["r1"] * n, pa.string()))
        write_deltalake(
            str(work / "delta" / "snapshots"),
            rows,
            mode="append",
            partition_by=["snapshot_date", "snapshot_run"],
            commit_properties=CommitProperties(custom_metadata={"recon": json.dumps(manifest)}),
        )

    plain_s = best(args.repeat, clean("plain"), parquet_snapshot)
    delta_s = best(args.repeat, clean("delta"), delta_snapshot)
    print(f"snapshot {args.intents}: parquet {plain_s:.2f} s, delta {delta_s:.2f} s", flush=True)

    stored, new = lines(args.lines, "old"), lines(args.new, "new")
    batch = pa.concat_tables([new, stored.slice(0, args.new // 10)])  # a tenth re-imported

    def seed() -> None:
        clean("plain", "delta")()
        write_parquet_atomic(stored, work / "plain" / "statements" / "source=csv" / "a.parquet")
        write_deltalake(str(work / "delta" / "lines"), stored)

    def parquet_import() -> None:
        # the importer has already dropped the stored rows: only the new ones are written
        write_parquet_atomic(new, work / "plain" / "statements" / "source=csv" / "b.parquet")

    def delta_import() -> None:
        table = DeltaTable(str(work / "delta" / "lines"))
        result = (
            table.merge(
                batch,
                "t.line_id = s.line_id AND t.fingerprint = s.fingerprint",
                source_alias="s",
                target_alias="t",
            )
            .when_not_matched_insert_all()
            .execute()
        )
        assert result["num_target_rows_inserted"] == args.new, result

    plain_i = best(args.repeat, seed, parquet_import)
    delta_i = best(args.repeat, seed, delta_import)
    print(
        f"import {args.new} into {args.lines}: parquet {plain_i:.2f} s, delta {delta_i:.2f} s",
        flush=True,
    )

    parquet_import()  # the plain store as the delta one is now: stored + new
    con = duckdb.connect()
    glob = str(work / "plain" / "statements" / "source=*" / "*.parquet")

    def parquet_read() -> None:
        con.execute(f"SELECT count(*), sum(amount_cents) FROM read_parquet('{glob}')").fetchall()

    def delta_read() -> None:
        files = DeltaTable(str(work / "delta" / "lines")).file_uris()
        dataset = ds.dataset(files, format="parquet", schema=STORED_SCHEMA)
        con.register("lines", dataset)
        con.execute("SELECT count(*), sum(amount_cents) FROM lines").fetchall()

    total = args.lines + args.new
    plain_r = best(args.repeat, lambda: None, parquet_read)
    delta_r = best(args.repeat, lambda: None, delta_read)
    print(f"read {total}: parquet {plain_r:.2f} s, delta {delta_r:.2f} s", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
