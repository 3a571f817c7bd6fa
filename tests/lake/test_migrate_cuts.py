"""`recon migrate` cut short after each of its commits in turn, then run again: every time the
remote data directory ends as one uncut migration leaves it (moto on loopback).

A cut is an exception raised right after the k-th commit returned (the commit landed, the
process went no further): what `kill -9` at that point leaves on the bucket. The writer lock is
the local side's OS lock, which a killed process drops as this one's `finally` does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from recon import catalog, lake, testing
from recon.config import DataDir, new_run_id
from recon.ops.migrate import migrate
from tests.lake import erase_world as world
from tests.lake.conftest import S3, new_bucket, reach
from tests.lake.test_erase import _LINEAGE as LINEAGE
from tests.lake.test_erase import TABLES, VIEWS

# the lake.Table methods that end in a commit (append and replace_partition both write
# through _write)
_COMMITTING = ("_write", "merge_new", "create", "replace_files")


class Cut(Exception):
    """The process stops here (after the commit it just made)."""


@contextlib.contextmanager
def commits(cut_after: int | None = None) -> Iterator[list[str]]:
    """Record every commit (table and method) while the block runs; with `cut_after`, stop
    the writer right after that many."""
    made: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        for name in _COMMITTING:
            original = getattr(lake.Table, name)

            def counted(self: lake.Table, *args: Any, _f: Any = original, _n: str = name,
                        **kwargs: Any) -> Any:  # fmt: skip
                result = _f(self, *args, **kwargs)
                made.append(f"{self.name}.{_n}")
                if cut_after is not None and len(made) == cut_after:
                    raise Cut(made[-1])
                return result

            patch.setattr(lake.Table, name, counted)
        yield made


def state(data: DataDir) -> dict[str, Any]:
    """What a reader of the data directory gets: every view's rows, every table's row count
    and its run partitions' row counts."""
    con = catalog.connect(data)
    try:
        out: dict[str, Any] = {name: _rows(con, name) for name in VIEWS}
    finally:
        con.close()
    for name in TABLES:
        table = data.table(name).load()  # one read of its Delta log, not one per question
        if table is None:
            out[name] = None
            continue
        rows = table.to_pyarrow_table()
        if lake.RUN_PARTITION in rows.column_names:
            runs = rows.column(lake.RUN_PARTITION).value_counts().to_pylist()
            out[name] = sorted((r["values"], r["counts"]) for r in runs)
        else:
            out[name] = rows.num_rows
    return out


def _rows(con: Any, name: str) -> list[tuple[Any, ...]]:
    """A view's rows, sorted, without the columns that say when or where a copy was made."""
    frame = catalog.to_frame(con.sql(f"SELECT * FROM {name}").to_arrow_table())
    frame = frame.drop(columns=[c for c in frame.columns if c in LINEAGE])
    return sorted(frame.astype(str).itertuples(index=False, name=None))


def local_world(root: Path) -> DataDir:
    """Two snapshots, two import batches, quarantine, and two runs (one with breaks)."""
    data = world.build(root, world.people(3))
    breaks = [testing.break_row("onramp_missing_credit", 7, intent_id=testing.uid(9001))]
    testing.run(data, breaks, run_id=new_run_id())
    return data


# the commits one migration of `local_world` makes: 2 snapshots; statement lines, quarantine
# and coverage (each created, then MERGEd); 2 runs (each run table, then the summaries row)
CUTS = 2 + 3 * 2 + 2 * (len(lake.RUN_TABLES) + 1)


@dataclass(frozen=True)
class Clean:
    """A local world, the commits one uncut migration of it made, and what it left."""

    local: DataDir
    made: list[str]
    expected: dict[str, Any]


@pytest.fixture(scope="module")
def clean(s3_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Clean:
    root = tmp_path_factory.mktemp("migrate-cuts")
    with pytest.MonkeyPatch.context() as patch:
        reach(patch, s3_server[0], root / "local-side")
        bucket = new_bucket(s3_server)
        local = local_world(root / "local")
        with commits() as made:
            migrate(local, bucket.uri("clean"))
        return Clean(local, made, state(DataDir.resolve(bucket.uri("clean"))))


def test_one_migration_makes_the_commits_the_cuts_stop_after(clean: Clean) -> None:
    assert len(clean.made) == CUTS, clean.made
    assert clean.made[-len(lake.RUN_TABLES) - 1 :] == [
        *(f"runs/{t}._write" for t in lake.RUN_TABLES),
        "runs/summaries._write",
    ]
    assert len(clean.expected["recon_exceptions"]) > 0
    assert [n for _run, n in clean.expected["runs/exceptions"]] == [3, 1]


@pytest.mark.slow
@pytest.mark.parametrize("cut", range(1, CUTS + 1))
def test_a_migration_cut_after_any_commit_and_run_again_equals_one_clean_migration(
    s3: S3, clean: Clean, cut: int
) -> None:
    with commits(cut_after=cut) as made, pytest.raises(Cut):
        migrate(clean.local, s3.uri())
    assert made[-1] == clean.made[cut - 1]
    again = migrate(clean.local, s3.uri())
    assert again.runs + again.runs_skipped == 2
    assert state(DataDir.resolve(s3.uri())) == clean.expected
