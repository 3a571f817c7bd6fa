"""The audit trail: hash-chained, append-only; verify names the line where it breaks."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.errors import ConfigError, UsageError
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
    empty = audit.verify(data_dir)
    assert (empty.ok, empty.entries, empty.head) == (True, 0, audit.GENESIS)
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


def test_an_edit_with_a_recomputed_hash_is_found_at_its_line(data_dir: DataDir) -> None:
    """Without the key, a recomputed hash (plain sha256 or a MAC under a guessed key) does
    not verify: the edited line itself is named."""
    _write(data_dir, 4)
    lines = _lines(data_dir)
    entry = json.loads(lines[1])
    entry["by"] = "mallory"
    for guess in (None, b"not the audit key, a guess"):
        if guess is None:
            entry.pop("alg")
        entry["hash"] = audit.entry_hash(entry["prev"], entry, guess)
        lines[1] = json.dumps(entry, sort_keys=True) + "\n"
        audit.audit_path(data_dir).write_text("".join(lines), encoding="utf-8")
        assert audit.verify(data_dir).line == 2


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


# -- a writer who can edit the data directory, but not read the key ----------------------


def _forge(data: DataDir, entries: list[dict], key: bytes | None = None) -> None:
    """Rewrite the log and audit.head as that writer would: every hash recomputed (plain
    sha256 without a key), the head matching."""
    prev, out = audit.GENESIS, []
    for n, entry in enumerate(entries, start=1):
        entry = {k: v for k, v in entry.items() if k not in ("hash", "alg")}
        entry.update(seq=n, prev=prev)
        if key is not None:
            entry["alg"] = audit.ALG
        entry["hash"] = prev = audit.entry_hash(prev, entry, key)
        out.append(json.dumps(entry, sort_keys=True) + "\n")
    audit.audit_path(data).write_text("".join(out), encoding="utf-8")
    audit.head_path(data).write_text(f"{len(entries)} {prev}\n", encoding="ascii")


def test_a_changed_approver_with_a_recomputed_chain_and_head_is_caught(data_dir: DataDir) -> None:
    _write(data_dir, 4)
    entries = audit.read_entries(data_dir)
    entries[1]["by"] = "mallory"
    _forge(data_dir, entries)  # plain sha256: a chain, but none of it under the key
    result = audit.verify(data_dir)
    assert not result.ok and "last 4 entries were written without the audit key" in result.problem
    _forge(data_dir, entries, b"a key that is not the audit key")
    result = audit.verify(data_dir)
    assert (result.ok, result.line) == (False, 1)  # no line verifies: each was re-made


def test_a_forged_appended_entry_with_a_recomputed_head_is_caught(data_dir: DataDir) -> None:
    _write(data_dir, 3)
    last = audit.read_entries(data_dir)[-1]
    forged = {"seq": 4, "at": last["at"], "by": "rita", "action": "request_approval",
              "break_id": "ab" * 8, "before": {}, "after": {}, "note": "", "prev": last["hash"]}  # fmt: skip
    forged["hash"] = audit.entry_hash(last["hash"], forged)
    with audit.audit_path(data_dir).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(forged) + "\n")
    audit.head_path(data_dir).write_text(f"4 {forged['hash']}\n", encoding="ascii")
    result = audit.verify(data_dir)
    assert (result.ok, result.line) == (False, 4) and "without the key" in result.problem
    with pytest.raises(audit.AuditBroken, match=r"audit.jsonl:4: audit chain broken"):
        audit.read_verified(data_dir)
    with pytest.raises(audit.AuditBroken):  # and nothing is appended to it
        _write(data_dir, 1)
    assert len(audit.read_entries(data_dir)) == 4


def test_a_truncated_log_with_its_head_rewritten_needs_the_expected_head(
    data_dir: DataDir,
) -> None:
    """Cutting the last entries off and rewriting audit.head to match leaves a valid chain:
    only a head recorded outside the data directory shows what is missing."""
    _write(data_dir, 4)
    anchored = audit.verify(data_dir).head  # what the daily record and notification carry
    lines = _lines(data_dir)
    audit.audit_path(data_dir).write_text("".join(lines[:2]), encoding="utf-8")
    second = json.loads(lines[1])["hash"]
    audit.head_path(data_dir).write_text(f"2 {second}\n", encoding="ascii")
    assert audit.verify(data_dir).ok  # not caught by the chain alone
    result = audit.verify(data_dir, expect_head=anchored)
    assert not result.ok and f"expected head {anchored} is not in the log" in result.problem
    # a head recorded earlier stays valid as entries are appended after it
    assert audit.verify(data_dir, expect_head=second).ok


def test_both_files_deleted_verify_as_empty_unless_a_head_is_expected(data_dir: DataDir) -> None:
    _write(data_dir, 2)
    anchored = audit.verify(data_dir).head
    audit.audit_path(data_dir).unlink()
    audit.head_path(data_dir).unlink()
    assert audit.verify(data_dir).ok  # an empty log: not caught without the anchor
    assert not audit.verify(data_dir, expect_head=anchored).ok
    with pytest.raises(UsageError, match="64 hexadecimal"):
        audit.verify(data_dir, expect_head="=HYPERLINK()")


def test_log_and_head_are_private(data_dir: DataDir) -> None:
    audit.audit_path(data_dir).write_text("", encoding="utf-8")
    audit.audit_path(data_dir).chmod(0o644)  # a log from before: made private on append
    _write(data_dir, 1)
    assert audit.audit_path(data_dir).stat().st_mode & 0o777 == 0o600
    assert audit.head_path(data_dir).stat().st_mode & 0o777 == 0o600


def test_keyed_entries_without_the_key_are_refused(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    _write(data_dir, 1)
    monkeypatch.delenv(audit.KEY_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    result = audit.verify(data_dir)
    assert (result.ok, result.line) == (False, 1) and "no key is set" in result.problem


def test_init_makes_a_private_key_outside_the_data_dir_and_seals_older_entries(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """A log from before the key (plain sha256) is refused until `init` seals it; after
    that, rewriting its old entries (chain recomputed) is caught at the seal."""
    monkeypatch.delenv(audit.KEY_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    _forge(data_dir, [{"by": "ana", "action": "comment", "break_id": "ab" * 8, "at": "x",
                       "before": {}, "after": {}, "note": f"n{i}"} for i in range(3)])  # fmt: skip
    assert audit.verify(data_dir).ok  # no key yet: a plain chain
    made, sealed = audit.init(data_dir)
    assert made == tmp_path / "config" / "recon" / "audit.key" and sealed == 3
    assert made.stat().st_mode & 0o777 == 0o600
    assert audit.init(data_dir) == (None, 0)  # again: nothing to do
    entries = audit.read_entries(data_dir)
    assert [e.get("alg") for e in entries] == [None, None, None, audit.ALG]
    assert entries[3]["action"] == "seal" and audit.verify(data_dir).ok
    _write(data_dir, 1)
    old = audit.read_entries(data_dir)[:3]
    old[0]["note"] = "rewritten"
    _forge(data_dir, old)  # a plain chain again, recomputed
    lines = _lines(data_dir)
    keyed = [json.loads(x) for x in _lines(data_dir)]
    assert len(lines) == 3 and all("alg" not in e for e in keyed)
    result = audit.verify(data_dir)
    assert not result.ok and "without the audit key" in result.problem
    # the key file may not sit in the data directory, nor be readable by others
    (data_dir.root / "recon.toml").write_text(f'[audit]\nkey_file = "{data_dir.root}/k"\n')
    with pytest.raises(ConfigError, match="outside the data directory"):
        audit.load_key(data_dir)
    (data_dir.root / "recon.toml").write_text(f'[audit]\nkey_file = "{made}"\n')
    made.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        audit.load_key(data_dir)
