"""Runs: atomic publication, reproducibility, stable break ids across runs, resolved
breaks, manual decisions, failing checks."""

from __future__ import annotations

import json
from datetime import timedelta

import duckdb
import pyarrow.parquet as pq
import pytest

from recon import catalog
from recon.errors import SnapshotError, UsageError
from recon.reconciliation import (
    ReconcileSettings,
    RunChecksFailed,
    load_decisions,
    load_run,
    reconcile,
    resolve,
    runner,
)
from recon.reconciliation.build import build
from recon.testing.handbuilt import T0, e2e, intent, line, uid

from .helpers import breaks, exception_rows, run

AS_OF = T0 + timedelta(hours=6)


def _world(world, *, with_stranger: bool = True):
    paid = intent(1, amount=5_000)
    unpaid = intent(2, amount=6_000, status="completed", client_reference="ORD-0002")
    world.snapshot([paid, unpaid], AS_OF)
    lines = [line(1, amount=5_000, txid=uid(1).replace("-", ""))]
    if with_stranger:
        lines.append(line(9, amount=777, name="X", doc=None))
    world.statement(lines, batch="b")


def test_same_inputs_same_outputs(world):
    _world(world)
    a = run(world, run_id="run-a")
    b = run(world, run_id="run-b")
    for name in ("matches.parquet", "exceptions.parquet"):
        ta = pq.read_table(a.path / name)
        tb = pq.read_table(b.path / name)
        drop = [c for c in ("run_id", "first_seen_run", "state") if c in ta.column_names]
        assert ta.drop(drop).equals(tb.drop(drop)), name
        assert ta.num_rows > 0
    sa, sb = a.summary.to_json(), b.summary.to_json()
    for key in ("run_id", "previous_run_id", "new_breaks", "persisting_breaks"):
        sa.pop(key), sb.pop(key)
    assert sa == sb


def test_run_folder_and_summary(world):
    _world(world)
    result = run(world, run_id="r1")
    assert sorted(p.name for p in result.path.iterdir()) == [
        "awaiting.parquet",
        "candidates.parquet",
        "exceptions.parquet",
        "flows.parquet",
        "history.parquet",
        "matches.parquet",
        "suggestions.parquet",
        "summary.json",
    ]
    assert not [p for p in world.data.runs.iterdir() if p.name.startswith(".tmp-")]
    loaded = load_run(result.path)
    assert loaded.summary == result.summary
    payload = json.loads((result.path / "summary.json").read_text())
    assert payload["as_of"] == AS_OF.isoformat()
    assert payload["settings"]["onramp_payment_grace"] == 1800
    # the catalog views now show this run
    con = catalog.connect(world.data)
    assert con.execute("SELECT count(*) FROM recon_exceptions").fetchone()[0] == 2
    assert con.execute("SELECT DISTINCT run_id FROM recon_matches").fetchall() == [("r1",)]


def test_break_ids_stable_and_states_carried(world):
    _world(world)
    first = run(world, run_id="r1")
    second = run(world, run_id="r2")
    one = {r["break_id"]: r for r in exception_rows(first)}
    two = {r["break_id"]: r for r in exception_rows(second)}
    assert set(one) == set(two)
    assert all(r["state"] == "new" and r["first_seen_run"] == "r1" for r in one.values())
    assert all(r["state"] == "persisting" and r["first_seen_run"] == "r1" for r in two.values())
    assert second.summary.previous_run_id == "r1"
    assert second.summary.persisting_breaks == 2 and second.summary.new_breaks == 0


def test_breaks_gone_are_listed_as_resolved(world):
    _world(world)
    first = run(world, run_id="r1")
    stranger = next(r for r in exception_rows(first) if r["category"] == "unmatched_credit")
    # the missing credit arrives; the stranger line is still there
    world.statement([line(2, amount=6_000, description="ORD-0002 obrigado")], batch="c")
    second = run(world, run_id="r2")
    assert breaks(second) == {("unmatched_credit", None, e2e(9))}
    missing = next(r for r in exception_rows(first) if r["category"] == "onramp_missing_credit")
    assert second.summary.resolved_breaks == (missing["break_id"],)
    assert stranger["break_id"] in {r["break_id"] for r in exception_rows(second)}


def test_decisions_are_kept_across_reruns(world):
    _world(world)
    first = run(world, run_id="r1")
    stranger = next(r for r in exception_rows(first) if r["category"] == "unmatched_credit")
    decision = resolve(stranger["break_id"], "  returned by hand,\nticket FIN-1 ", data=world.data,
                       decided_by="ana")  # fmt: skip
    assert decision.note == "returned by hand, ticket FIN-1"
    for run_id in ("r2", "r3"):
        later = run(world, run_id=run_id)
        assert ("unmatched_credit", None, e2e(9)) not in breaks(later)
        assert later.summary.counts["unmatched_credit"] == 0
        assert [d["break_id"] for d in later.summary.decided_breaks] == [stranger["break_id"]]
        assert later.summary.decided_breaks[0]["note"] == "returned by hand, ticket FIN-1"
        assert later.summary.resolved_breaks == ()
    # the CSV is the user's: deleting the row reopens the break
    path = world.data.root / "decisions.csv"
    assert path.read_text().splitlines()[0] == "break_id,note,decided_by,decided_at,action"
    path.write_text("break_id,note\n")
    assert ("unmatched_credit", None, e2e(9)) in breaks(run(world, run_id="r4"))


def test_decisions_csv_edited_by_hand(world):
    _world(world)
    first = run(world, run_id="r1")
    ids = sorted(r["break_id"] for r in exception_rows(first))
    (world.data.root / "decisions.csv").write_text(
        "break_id,note\n" + "".join(f"{i.upper()},checked\n" for i in ids), encoding="utf-8"
    )
    assert set(load_decisions(world.data)) == set(ids)
    assert run(world, run_id="r2").summary.breaks == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,comment\nabc,x\n", "missing"),
        ("break_id,note\nnot-hex!,x\n", "not a break id"),
        ("break_id,note\nabcdef0123,\n", "needs a note"),
    ],
)
def test_bad_decisions_file_is_a_clear_error(world, text, message):
    (world.data.root / "decisions.csv").write_text(text)
    with pytest.raises(UsageError, match=message):
        load_decisions(world.data)


def test_resolve_refuses_unknown_breaks_and_empty_notes(world):
    with pytest.raises(UsageError, match="no reconciliation run"):
        resolve("abcdef0123", "x", data=world.data)
    _world(world)
    run(world, run_id="r1")
    with pytest.raises(UsageError, match="not in the latest run"):
        resolve("abcdef0123", "x", data=world.data)
    with pytest.raises(UsageError, match="write a note"):
        resolve("abcdef0123", "   ", data=world.data, check_exists=False)
    with pytest.raises(UsageError, match="not a break id"):
        resolve("../etc", "x", data=world.data, check_exists=False)


def test_no_snapshot_is_a_snapshot_error(world):
    with pytest.raises(SnapshotError):
        reconcile(world.data, settings=ReconcileSettings())


def test_as_of_must_carry_a_zone_and_run_ids_are_unique(world):
    _world(world)
    with pytest.raises(UsageError, match="time zone"):
        run(world, as_of="2026-11-02T12:00:00")
    with pytest.raises(UsageError, match="ISO 8601"):
        run(world, as_of="yesterday")
    run(world, run_id="same")
    with pytest.raises(UsageError, match="already exists"):
        run(world, run_id="same")
    assert run(world, as_of="2026-11-02T16:00:00-03:00").summary.as_of.startswith(
        "2026-11-02T19:00"
    )


def _checked(world) -> tuple[duckdb.DuckDBPyConnection, dict[str, int]]:
    con = catalog.connect(world.data)
    results = build(con, AS_OF)
    return con, {r.name: r.failures for r in results}


def test_checks_pass_on_a_sound_run_and_catch_tampering(world):
    _world(world)
    con, failures = _checked(world)
    assert set(failures) >= {
        "no_line_matched_twice",
        "credits_accounted_once",
        "debits_accounted_once",
        "categories_in_vocabulary",
        "control_totals_balance",
        "break_ids_unique",
    }
    assert not any(failures.values())
    # a line matched twice; a break category outside the vocabulary, so the stranger's credit
    # is no longer accounted for
    con.execute("INSERT INTO int_matches SELECT * FROM int_matches")
    con.execute(
        "UPDATE recon_exceptions SET category = 'made_up' WHERE category = 'unmatched_credit'"
    )
    con.execute("UPDATE recon_control_totals SET explained_cents = explained_cents + 1, "
                "unexplained_cents = unexplained_cents - 1")  # fmt: skip
    tampered = {r.name: r.failures for r in runner.run_checks(con)}
    assert tampered["no_line_matched_twice"] == 1
    assert tampered["categories_in_vocabulary"] == 1
    assert tampered["credits_accounted_once"] == 2
    assert tampered["control_totals_balance"] >= 1


def test_failed_checks_publish_the_run_then_raise(world, monkeypatch):
    _world(world)
    real = runner.run_checks

    def broken(engine, **kw):
        engine.con.execute("DELETE FROM int_matches")
        return real(engine, **kw)

    monkeypatch.setattr(runner, "run_checks", broken)
    with pytest.raises(RunChecksFailed, match="credits_accounted_once") as info:
        run(world, run_id="bad")
    result = info.value.result
    assert (result.path / "summary.json").is_file()
    assert not result.summary.checks_passed
    assert result.summary.check_samples["credits_accounted_once"]
    assert info.value.exit_code == 2
    # strict=False returns instead of raising
    assert not run(world, run_id="bad2", strict=False).summary.checks_passed


def test_spill_folder_is_per_run_and_removed(world, tmp_path):
    _world(world)
    spill = tmp_path / "spill"
    result = run(world, run_id="r1", settings=ReconcileSettings(temp_directory=str(spill)))
    assert result.summary.checks_passed
    assert not (spill / "r1").exists()


def test_work_tables_on_disk_give_the_same_run(world, tmp_path, monkeypatch):
    _world(world)
    attached = []
    real = runner.use_work_database

    def spy(con, path=None):
        attached.append(path)
        real(con, path)

    monkeypatch.setattr(runner, "use_work_database", spy)
    spill = tmp_path / "spill"
    memory = run(world, run_id="in-memory", settings=ReconcileSettings(work_storage="memory"))
    disk = run(
        world,
        run_id="on-disk",
        settings=ReconcileSettings(work_storage="disk", temp_directory=str(spill)),
    )
    assert [p for p in attached if p is not None] == [spill / "on-disk" / "work.duckdb"]
    assert not (spill / "on-disk").exists()  # the scratch database went with the run
    for name in ("matches.parquet", "exceptions.parquet"):
        a, b = pq.read_table(memory.path / name), pq.read_table(disk.path / name)
        drop = [c for c in ("run_id", "first_seen_run", "state") if c in a.column_names]
        assert a.drop(drop).equals(b.drop(drop)), name
    assert memory.summary.counts == disk.summary.counts


def test_matches_file_is_the_same_whether_ids_are_taken_by_key_or_joined(world, tmp_path):
    """In memory the run file's ids are looked up by key (runs._matches); on disk a query
    joins them. Same rows in the same booking order, ties (lines booked at the same
    instant, as date-only statements have them) broken by line_id alike."""
    n = 40
    world.snapshot([intent(k, amount=1_000 + k) for k in range(1, n + 1)], AS_OF)
    same_time = T0 + timedelta(hours=3)

    def booked(k: int):
        return same_time if k % 3 else T0 + timedelta(minutes=k)

    world.statement(
        [
            line(k, amount=1_000 + k, txid=uid(k).replace("-", ""), at=booked(k))
            for k in range(1, n + 1)
        ]
    )
    memory = run(world, run_id="in-memory", settings=ReconcileSettings(work_storage="memory"))
    disk = run(
        world,
        run_id="on-disk",
        settings=ReconcileSettings(work_storage="disk", temp_directory=str(tmp_path / "t")),
    )
    a, b = (pq.read_table(r.matches_path).drop(["run_id"]) for r in (memory, disk))
    assert a.num_rows == n
    assert a.equals(b)
    rows = a.to_pylist()
    assert rows == sorted(rows, key=lambda r: (r["booked_at"], r["line_id"]))
    assert [r["line_id"] for r in rows] != sorted(r["line_id"] for r in rows)


def test_a_failed_matches_file_fails_the_run_and_leaves_nothing(world, tmp_path, monkeypatch):
    """matches.parquet is encoded on a thread while the checks run: its error (a full disk)
    still fails the run, no run folder is published and the temp folder goes."""
    import errno

    from recon.reconciliation import runs

    _world(world)
    real = runs._write

    def full_disk(reader, path, schema):
        if path.name == "matches.parquet":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(reader, path, schema)

    monkeypatch.setattr(runs, "_write", full_disk)
    spill = tmp_path / "spill"
    with pytest.raises(OSError, match="No space left"):
        run(world, run_id="r1", settings=ReconcileSettings(temp_directory=str(spill)))
    assert not (world.data.runs / "r1").exists()
    assert not (spill / "r1").exists()


def test_every_note_is_kept_and_a_break_can_be_reopened(world):
    from recon.reconciliation import audit
    from recon.reconciliation.decisions import load_history
    from recon.reconciliation.workflow import reopen

    _world(world)
    first = run(world, run_id="r1")
    bid = next(r["break_id"] for r in exception_rows(first) if r["category"] == "unmatched_credit")
    resolve(bid, "returned by hand", data=world.data, decided_by="ana")
    second = run(world, run_id="r2")
    assert ("unmatched_credit", None, e2e(9)) not in breaks(second)
    # a decided break is not resolved twice (a further word is a comment): nothing written
    with pytest.raises(UsageError, match="already resolved"):
        resolve(bid, "bank confirmed the return", data=world.data, decided_by="bia")
    with pytest.raises(UsageError, match="not resolved"):
        reopen("abcdef0123", "x", data=world.data)
    reopen(bid, "the return bounced", data=world.data, decided_by="caio")
    third = run(world, run_id="r3")
    assert ("unmatched_credit", None, e2e(9)) in breaks(third)
    assert [(d.action, d.note, d.decided_by) for d in load_history(world.data)[bid]] == [
        ("resolve", "returned by hand", "ana"),
        ("reopen", "the return bounced", "caio"),
    ]
    resolve(bid, "returned again", data=world.data, decided_by="ana")
    fourth = run(world, run_id="r4")
    [decided] = fourth.summary.decided_breaks
    assert decided["note"] == "returned again"
    assert [h["note"] for h in decided["history"]] == [
        "returned by hand", "the return bounced", "returned again"
    ]  # fmt: skip
    entries = audit.read_entries(world.data)
    assert [(e["action"], e["by"], e["before"], e["after"]) for e in entries] == [
        ("resolve", "ana", {"decision": "open"}, {"decision": "resolved"}),
        ("reopen", "caio", {"decision": "resolved"}, {"decision": "open"}),
        ("resolve", "ana", {"decision": "open"}, {"decision": "resolved"}),
    ]
    assert audit.verify(world.data).ok
    # the run carries the history of its breaks, for the report
    history = pq.read_table(fourth.path / "history.parquet").to_pylist()
    assert [(h["break_id"], h["action"], h["by"]) for h in history] == [
        (bid, "resolve", "ana"), (bid, "reopen", "caio"), (bid, "resolve", "ana"),
    ]  # fmt: skip
    assert json.loads(history[1]["after"]) == {"decision": "open"}


def test_a_four_column_decisions_file_is_migrated_on_the_next_write(world):
    _world(world)
    first = run(world, run_id="r1")
    ids = sorted(r["break_id"] for r in exception_rows(first))
    path = world.data.root / "decisions.csv"
    path.write_text(
        f"break_id,note,decided_by,decided_at\n{ids[0]},old note,ana,2026-11-01T00:00:00+00:00\n"
    )
    assert set(load_decisions(world.data)) == {ids[0]}
    resolve(ids[1], "new note", data=world.data, decided_by="bia")
    lines = path.read_text().splitlines()
    assert lines[0] == "break_id,note,decided_by,decided_at,action"
    assert lines[1] == f"{ids[0]},old note,ana,2026-11-01T00:00:00+00:00,resolve"
    assert set(load_decisions(world.data)) == {ids[0], ids[1]}


def test_a_bad_action_in_the_decisions_file_is_a_clear_error(world):
    (world.data.root / "decisions.csv").write_text("break_id,note,action\nabcdef0123,x,delete\n")
    with pytest.raises(UsageError, match=r"decisions.csv:2: action 'delete'"):
        load_decisions(world.data)


def _hand_written_manual_row(data, intent_id, line_id, by):
    """A row added to manual_matches.csv by hand (a spreadsheet), as the file format allows."""
    path = data.root / "manual_matches.csv"
    if not path.exists():
        path.write_text("intent_id,line_id,break_id,confirmed_by,confirmed_at,note,action\n")
    with path.open("a") as fh:
        fh.write(f"{intent_id},{line_id},{'ab' * 8},{by},2026-11-02T20:00:00+00:00,,confirm\n")


def test_a_confirmed_candidate_is_matched_by_the_next_run_as_manual(world):
    from recon.reconciliation.manual import load_manual_matches
    from recon.reconciliation.workflow import confirm
    from recon.testing.handbuilt import intent, line

    from .helpers import matches

    # one credit, two fitting onramps: ambiguous until a person picks one
    world.snapshot([intent(1, amount=5_000), intent(2, amount=5_000)], AS_OF)
    credit = line(1, amount=5_000)
    world.statement([credit], batch="b")
    first = run(world, run_id="r1")
    [amb] = exception_rows(first)
    assert amb["category"] == "ambiguous_match"
    candidates = pq.read_table(first.path / "candidates.parquet").to_pylist()
    assert candidates == [
        {"line_id": credit["line_id"], "intent_id": i, "rule": "attributes"}
        for i in sorted([uid(1), uid(2)])
    ]
    confirm(amb["break_id"], uid(2), "payer confirmed by phone", data=world.data)
    second = run(world, run_id="r2")
    assert matches(second) == {(uid(2), e2e(1), "manual")}
    assert second.summary.matches_by_rule["manual"] == 1
    # the other candidate has no money now: it is a missing credit
    assert breaks(second) == {("onramp_missing_credit", uid(1), None)}
    # a later row for the same line wins
    _hand_written_manual_row(world.data, uid(1), credit["line_id"], "bia")
    assert [m.intent_id for m in load_manual_matches(world.data)] == [uid(1)]
    assert matches(run(world, run_id="r3")) == {(uid(1), e2e(1), "manual")}


def test_a_manual_pair_of_the_wrong_direction_is_ignored(world):
    from recon.testing.handbuilt import intent, line

    world.snapshot([intent(1, amount=5_000, type="offramp")], AS_OF)
    credit = line(1, amount=5_000)
    world.statement([credit], batch="b")
    _hand_written_manual_row(world.data, uid(1), credit["line_id"], "ana")
    result = run(world, run_id="r1")
    assert result.summary.matches_by_rule["manual"] == 0
    assert result.summary.checks_passed
