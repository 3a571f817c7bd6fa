"""The audit trail: hash-chained, append-only; verify names the line where it breaks."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.reconciliation import audit


def _write(data: DataDir, n: int) -> None:
    with audit.locked(data) as log:
        for i in range(n):
            log.append(
                by=f"user{i % 2}",
                action="comment",
                break_id=f"{i:016x}",
                before={},
                after={"comments": i + 1},
                note=f"nota nº {i} — ação",
            )


def _lines(data: DataDir) -> list[str]:
    return [x + "\n" for x in audit.audit_path(data).read_text(encoding="utf-8").split("\n")[:-1]]


def test_an_intact_chain_verifies(data_dir: DataDir) -> None:
    assert audit.verify(data_dir) == audit.Verification(True, 0)
    _write(data_dir, 3)
    _write(data_dir, 2)  # a second writer continues the chain
    result = audit.verify(data_dir)
    assert result.ok and result.entries == 5
    entries = audit.read_entries(data_dir)
    assert [e["seq"] for e in entries] == [1, 2, 3, 4, 5]
    assert entries[0]["prev"] == audit.GENESIS
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(entries))
    assert entries[4]["note"] == "nota nº 1 — ação"


def test_an_edit_is_found_at_its_line(data_dir: DataDir) -> None:
    _write(data_dir, 4)
    lines = _lines(data_dir)
    entry = json.loads(lines[2])
    entry["note"] = "something else"
    lines[2] = json.dumps(entry, sort_keys=True) + "\n"
    audit.audit_path(data_dir).write_text("".join(lines), encoding="utf-8")
    result = audit.verify(data_dir)
    assert (result.ok, result.line) == (False, 3)
    assert "changed" in result.problem


def test_an_edit_with_a_recomputed_hash_breaks_the_next_line(data_dir: DataDir) -> None:
    _write(data_dir, 4)
    lines = _lines(data_dir)
    entry = json.loads(lines[1])
    entry["by"] = "mallory"
    entry["hash"] = audit.entry_hash(entry["prev"], entry)
    lines[1] = json.dumps(entry, sort_keys=True) + "\n"
    audit.audit_path(data_dir).write_text("".join(lines), encoding="utf-8")
    assert audit.verify(data_dir).line == 3


def test_a_deletion_and_an_insertion_are_found(data_dir: DataDir) -> None:
    _write(data_dir, 4)
    lines = _lines(data_dir)
    path = audit.audit_path(data_dir)
    path.write_text("".join(lines[:1] + lines[2:]), encoding="utf-8")
    assert audit.verify(data_dir).line == 2
    path.write_text("".join(lines[:2] + lines[1:]), encoding="utf-8")
    assert audit.verify(data_dir).line == 3
    path.write_text("".join(lines[:3]), encoding="utf-8")  # the last entry removed
    result = audit.verify(data_dir)
    assert (result.ok, result.line) == (False, 4)
    assert "deleted" in result.problem
    path.write_text("".join(lines[:2]) + "not json\n" + "".join(lines[2:]), encoding="utf-8")
    assert audit.verify(data_dir).line == 3


def test_unknown_actions_are_refused(data_dir: DataDir) -> None:
    with audit.locked(data_dir) as log, pytest.raises(ValueError, match="unknown"):
        log.append(by="a", action="delete", break_id="x")
    assert not audit.audit_path(data_dir).exists()


@settings(max_examples=30, deadline=None)
@given(
    notes=st.lists(st.text(max_size=30), min_size=1, max_size=6),
    victim=st.integers(min_value=0, max_value=5),
    flip=st.text(min_size=1, max_size=5),
)
def test_any_change_to_any_line_is_detected(tmp_path_factory, notes, victim, flip) -> None:
    data = DataDir(tmp_path_factory.mktemp("audit"))
    with audit.locked(data) as log:
        for note in notes:
            log.append(by="ana", action="comment", break_id="ab" * 8, note=note)
    assert audit.verify(data).ok
    lines = _lines(data)
    victim %= len(lines)
    entry = json.loads(lines[victim])
    entry["note"] = entry["note"] + flip
    lines[victim] = json.dumps(entry) + "\n"
    audit.audit_path(data).write_text("".join(lines), encoding="utf-8")
    result = audit.verify(data)
    assert not result.ok and result.line == victim + 1
