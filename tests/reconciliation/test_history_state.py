"""The history state: a run that read several snapshots leaves, per intent, its last
observation and its latest step backwards (runs/<run_id>/history_state.parquet), and the
next run reads only the snapshots taken after it, folded onto it. Whatever the runs before,
the history breaks (status_regression, intent_vanished) are those of a run that reads every
snapshot; a state that no longer fits the kept snapshots is not used."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon import catalog
from recon.config import DataDir
from recon.schemas import (
    HISTORY_STATE_FILE,
    HISTORY_STATE_RANKS,
    HISTORY_STATE_SNAPSHOTS,
    status_vocabulary,
)
from recon.testing.handbuilt import T0, World, intent

from .helpers import exception_rows, run

DAY = timedelta(days=1)
HISTORY = ("status_regression", "intent_vanished")
_OFFRAMP = [s for kind, s, *_ in status_vocabulary() if kind == "offramp"] + ["on_hold"]


def _offramp(n: int, status: str) -> dict[str, Any]:
    return intent(n, amount=1_000 + n, type="offramp", status=status, destination="x@y.z")


def _history(result: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (r["category"], r["intent_id"], r["reason"])
        for r in exception_rows(result)
        if r["category"] in HISTORY
    )


def _read_every_snapshot(world: World, tmp: Path) -> list[tuple[Any, ...]]:
    """The history breaks of a run over the same snapshots with no run before it."""
    fresh = DataDir(tmp / "fresh").ensure()
    shutil.copytree(world.data.snapshots, fresh.snapshots, dirs_exist_ok=True)
    return _history(run(World(fresh)))


def _state_of(result: Any) -> Path:
    return result.path / HISTORY_STATE_FILE


def _folded(world: World) -> bool:
    """Whether the next run starts from a history state."""
    snaps = catalog.list_snapshots(world.data)
    return bool(catalog.history_sources(catalog.latest_run(world.data), snaps)[0])


# per day, each intent's status, or None when that day's snapshot does not list it
_days = st.lists(
    st.lists(st.one_of(st.none(), st.sampled_from(_OFFRAMP)), min_size=3, max_size=3).filter(
        lambda statuses: any(s is not None for s in statuses)  # a snapshot lists something
    ),
    min_size=4,
    max_size=5,
)


@pytest.mark.slow
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(days=_days, drop=st.one_of(st.none(), st.integers(0, 2)))
def test_folding_onto_the_state_gives_what_every_snapshot_gives(tmp_path_factory, days, drop):
    """A run after each daily snapshot; from the third on, each leaves a state and the next
    folds the new snapshot onto it. `drop`: before the last run, an old snapshot is deleted
    (retention), so the state covers one no longer kept and is not used."""
    root = tmp_path_factory.mktemp("history-state")
    world = World(DataDir(root / "data").ensure())
    folders = []
    for k, statuses in enumerate(days):
        last = k == len(days) - 1
        if last and drop is not None:
            shutil.rmtree(folders[drop])
        seen = [_offramp(n, s) for n, s in enumerate(statuses, start=1) if s is not None]
        at = T0 + k * DAY
        world.snapshot(seen, at)
        folders.append(
            next(world.data.snapshots.glob(f"*/run_id={world.snapshots[-1]:%Y%m%dT%H%M%S%fZ}-0000"))
        )
        if last:
            assert _folded(world) == (drop is None)
        result = run(world, as_of=at + timedelta(hours=1))
        if k >= 2:  # (before, no run has left a state)
            assert _history(result) == _read_every_snapshot(world, root / f"full-{k}")
        assert _state_of(result).is_file() == (k >= 2)


def test_a_state_is_left_once_three_snapshots_are_read(world):
    for k in range(2):
        world.snapshot([_offramp(1, "created")], T0 + k * DAY)
        assert not _state_of(run(world, as_of=T0 + k * DAY + timedelta(hours=1))).is_file()
    world.snapshot([_offramp(1, "paying_out")], T0 + 2 * DAY)
    result = run(world, as_of=T0 + 2 * DAY + timedelta(hours=1))
    state = pq.read_table(_state_of(result))
    covered = json.loads(state.schema.metadata[HISTORY_STATE_SNAPSHOTS])
    assert covered == [s.run_id for s in catalog.list_snapshots(world.data)]
    assert state.to_pylist()[0]["status"] == "paying_out"
    # the next run starts from it, and leaves one covering the new snapshot too
    world.snapshot([_offramp(1, "burning")], T0 + 3 * DAY)
    assert _folded(world)
    result = run(world, as_of=T0 + 3 * DAY + timedelta(hours=1))
    ((category, intent_id, _reason),) = _history(result)
    assert (category, intent_id) == ("status_regression", _offramp(1, "x")["id"])
    (row,) = [r for r in exception_rows(result) if r["category"] == "status_regression"]
    params = json.loads(row["reason_params"])
    assert (params["from_status"], params["to_status"]) == ("paying_out", "burning")


def test_a_state_is_not_used_without_a_new_full_snapshot(world):
    """A filtered snapshot after the covered ones is not `intents`: the latest full one is
    covered, so the vanished rule's "before the latest" needs the rows the state folded."""
    for k, status in enumerate(["created", "paying_out", "paying_out"]):
        world.snapshot([_offramp(1, status), _offramp(2, "created")], T0 + k * DAY)
        run(world, as_of=T0 + k * DAY + timedelta(hours=1))
    world.snapshot(
        [_offramp(1, "completed")],
        T0 + 3 * DAY,
        manifest={"filters": {"intent_type": "offramp", "status": "all"}, "kind": "filtered"},
    )
    assert not _folded(world)


def test_a_snapshot_older_than_the_state_is_not_folded(world, tmp_path):
    for k in range(3):
        world.snapshot([_offramp(1, "paying_out"), _offramp(2, "created")], T0 + (k + 1) * DAY)
        run(world, as_of=T0 + (k + 1) * DAY + timedelta(hours=1))
    # an extract copied in from before every covered snapshot, then a new day
    world.snapshot([_offramp(1, "completed")], T0)
    world.snapshot([_offramp(1, "paying_out")], T0 + 4 * DAY)
    assert not _folded(world)
    result = run(world, as_of=T0 + 4 * DAY + timedelta(hours=1))
    assert _history(result) == _read_every_snapshot(world, tmp_path)
    assert {r[0] for r in _history(result)} == {"status_regression", "intent_vanished"}


def test_an_unreadable_state_is_ignored(world, tmp_path):
    for k, status in enumerate(["paying_out", "completed", "paying_out"]):
        world.snapshot([_offramp(1, status)], T0 + k * DAY)
        result = run(world, as_of=T0 + k * DAY + timedelta(hours=1))
    _state_of(result).write_bytes(b"not parquet")
    world.snapshot([_offramp(1, "completed")], T0 + 3 * DAY)
    assert not _folded(world)
    result = run(world, as_of=T0 + 3 * DAY + timedelta(hours=1))
    assert _history(result) == _read_every_snapshot(world, tmp_path)
    assert [r[0] for r in _history(result)] == ["status_regression"]


def test_a_run_again_over_the_same_snapshots_keeps_the_same_state(world):
    for k, status in enumerate(["created", "paying_out", "burning"]):
        world.snapshot([_offramp(1, status), _offramp(2, "created")], T0 + k * DAY)
    first = run(world, as_of=T0 + 2 * DAY + timedelta(hours=1))
    # no new full snapshot: the state is not folded, the run reads every snapshot again
    assert not _folded(world)
    again = run(world, as_of=T0 + 2 * DAY + timedelta(hours=2))
    assert _history(again) == _history(first)
    assert _state_of(again).read_bytes() == _state_of(first).read_bytes()


def test_a_state_made_under_other_ranks_is_ignored(world, tmp_path):
    """A state whose steps backwards were judged by another lifecycle (another version's
    status ranks) is not folded onto: every snapshot is read."""
    for k, status in enumerate(["paying_out", "completed", "paying_out"]):
        world.snapshot([_offramp(1, status)], T0 + k * DAY)
        result = run(world, as_of=T0 + k * DAY + timedelta(hours=1))
    state = pq.read_table(_state_of(result))
    other = dict(state.schema.metadata)
    other[HISTORY_STATE_RANKS] = json.dumps([["offramp", "paying_out", 1]]).encode()
    pq.write_table(state.replace_schema_metadata(other), _state_of(result))
    world.snapshot([_offramp(1, "completed")], T0 + 3 * DAY)
    assert not _folded(world)
    pq.write_table(state, _state_of(result))  # as the run left it: folded
    assert _folded(world)
