"""What a run's report draws besides its breaks, computed as of the run: ``flows.parquet``.

The report renders only a run's own files, so re-rendering an old run gives the same report
however the snapshots have changed since. The intent-flow frames are computed here, while the
run is made, with ``recon.analytics`` over the snapshots of that moment, plus the trend of the
last runs (breaks and money at stake), and written as one Parquet file beside the breaks.

One file holds several frames in long form: a ``frame`` column names the frame of each row,
and the file's metadata lists each frame's own columns (in order), so `read_flows` returns
every frame exactly as it was computed:

    funnel_onramp, funnel_offramp   analytics.funnel(intent_type=..., cohort="day")
    expiry_by_cohort                analytics.expiry_rates(by="cohort") (onramps)
    time_to_pay                     analytics.time_to_pay() (onramps; one row per paid intent)
    run_history                     this run and up to HISTORY_RUNS - 1 before it: run_id,
                                    as_of, breaks, p1, p2, p3, at_stake_cents
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recon import analytics
from recon.config import DataDir
from recon.schemas import STAKE_CENTS_SQL

__all__ = [
    "FLOWS_FILE",
    "FRAMES",
    "HISTORY_RUNS",
    "flow_frames",
    "read_flows",
    "run_history",
    "write_flows",
]

log = logging.getLogger(__name__)

FLOWS_FILE = "flows.parquet"
HISTORY_RUNS = 10
_COLUMNS_KEY = b"recon.flows.columns"

# frame name -> how to compute it from an analytics connection
_INTENT_FLOWS: dict[str, Callable[[Any], pd.DataFrame]] = {
    "funnel_onramp": lambda con: analytics.funnel(con, intent_type="onramp"),
    "funnel_offramp": lambda con: analytics.funnel(con, intent_type="offramp"),
    "expiry_by_cohort": lambda con: analytics.expiry_rates(con, by="cohort"),
    "time_to_pay": lambda con: analytics.time_to_pay(con),
}
FRAMES = (*_INTENT_FLOWS, "run_history")


def flow_frames(data: DataDir) -> dict[str, pd.DataFrame]:
    """The intent-flow frames over the data directory's snapshots as they are now.

    A frame that cannot be computed is logged and left out (the report says it is missing):
    a chart must never stop a reconciliation.
    """
    if not any(data.snapshots.glob("snapshot_date=*/run_id=*/part-*.parquet")):
        return {}
    frames: dict[str, pd.DataFrame] = {}
    con = analytics.connect(data)
    try:
        for name, compute in _INTENT_FLOWS.items():
            try:
                frames[name] = compute(con)
            except (duckdb.Error, ValueError) as exc:
                log.warning("flows: %s not computed: %s", name, exc)
    finally:
        con.close()
    return frames


def run_history(
    runs: Path, run_id: str, as_of: str, exceptions: Path, *, limit: int = HISTORY_RUNS
) -> pd.DataFrame:
    """Breaks and money at stake of this run (its `exceptions` file) and the committed runs
    before it (by id, which sorts by time), oldest first, at most `limit` rows."""
    committed = sorted(
        p
        for p in (runs.iterdir() if runs.is_dir() else ())
        if p.name < run_id and not p.name.startswith(".") and (p / "summary.json").is_file()
    )
    earlier = committed[len(committed) - (limit - 1) :] if limit > 1 else []
    rows = [_history_row(p.name, _as_of(p), p / "exceptions.parquet") for p in earlier]
    rows.append(_history_row(run_id, as_of, exceptions))
    frame = pd.DataFrame(rows, columns=["run_id", "as_of", "breaks", "p1", "p2", "p3"])
    frame["as_of"] = pd.to_datetime(frame["as_of"], utc=True)
    frame["at_stake_cents"] = pd.array([r["at_stake_cents"] for r in rows], dtype="int64")
    for column in ("breaks", "p1", "p2", "p3"):
        frame[column] = frame[column].astype("int64")
    return frame


def _as_of(run: Path) -> str | None:
    try:
        value = json.loads((run / "summary.json").read_text(encoding="utf-8")).get("as_of")
    except (OSError, json.JSONDecodeError, AttributeError):
        return None
    return str(value) if value else None


def _history_row(run_id: str, as_of: str | None, exceptions: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"run_id": run_id, "as_of": as_of}
    counts = (0, 0, 0, 0, 0)
    if exceptions.is_file():
        with duckdb.connect() as con:
            found = con.execute(
                "SELECT count(*), count(*) FILTER (priority = 'P1'), "
                "count(*) FILTER (priority = 'P2'), count(*) FILTER (priority = 'P3'), "
                f"coalesce(sum({STAKE_CENTS_SQL}), 0) FROM read_parquet(?)",
                [str(exceptions)],
            ).fetchone()
        if found is not None:
            counts = tuple(int(v) for v in found)  # type: ignore[assignment]
    row |= dict(zip(("breaks", "p1", "p2", "p3", "at_stake_cents"), counts, strict=True))
    return row


def write_flows(frames: Mapping[str, pd.DataFrame], path: Path) -> None:
    """Write the frames into one Parquet file (long form, see the module doc)."""
    tables = []
    columns: dict[str, list[str]] = {}
    for name, frame in frames.items():
        table = pa.Table.from_pandas(frame, preserve_index=False)
        columns[name] = table.column_names
        tables.append(table.append_column("frame", pa.array([name] * table.num_rows, pa.string())))
    if tables:
        merged = pa.concat_tables(tables, promote_options="permissive")
    else:
        merged = pa.table({"frame": pa.array([], pa.string())})
    merged = merged.replace_schema_metadata({_COLUMNS_KEY: json.dumps(columns).encode()})
    pq.write_table(merged, path, compression="zstd")


def read_flows(run_dir: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """The frames a run wrote (frame name -> DataFrame); {} for a run without flows.parquet."""
    path = Path(run_dir) / FLOWS_FILE
    if not path.is_file():
        return {}
    table = pq.read_table(path)
    meta = (table.schema.metadata or {}).get(_COLUMNS_KEY)
    columns: dict[str, list[str]] = json.loads(meta) if meta else {}
    out = {}
    for name, names in columns.items():
        rows = table.filter(pc.equal(table.column("frame"), name)).select(names)
        out[name] = rows.to_pandas()
    return out
