"""One workflow for every door: the rules and the lock that decisions are made under."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from recon import testing
from recon.cli import main as cli_main
from recon.config import DataDir
from recon.errors import UsageError
from recon.reconciliation import audit, workflow
from recon.reconciliation.decisions import load_decisions, load_history

P1 = "0123456789abcdef"  # an unmatched debit: P1
P2 = "fedcba9876543210"  # an unmatched credit: P2


@pytest.fixture
def desk(data_dir: DataDir) -> DataDir:
    testing.run(
        data_dir,
        [
            testing.break_row("unmatched_debit", 1, break_id=P1),
            testing.break_row("unmatched_credit", 2, break_id=P2),
        ],
        run_id="20261121T000000000000Z-cccc",
    )
    return data_dir


def main(argv: list[str]) -> int:
    try:
        return cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


_RACER = textwrap.dedent(
    """
    import pathlib, sys, time
    from recon.config import DataDir
    from recon.errors import UsageError
    from recon.reconciliation import workflow
    root, go, action, break_id, who = sys.argv[1:6]
    data = DataDir(pathlib.Path(root))
    while not pathlib.Path(go).exists():
        time.sleep(0.002)
    try:
        if action == "resolve":
            workflow.resolve(break_id, "done by " + who, data=data, decided_by=who)
        else:
            workflow.approve(break_id, "", data=data, decided_by=who)
        print("ok")
    except UsageError as exc:
        print("refused:", exc)
    """
)


def _race(data: DataDir, tmp_path: Path, action: str, break_id: str, names: list[str]) -> list[str]:
    """Start one process per name, release them at once, and return what each said."""
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(data.root), str(go), action, break_id, name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in names
    ]
    time.sleep(1.5)  # every process imported and waiting
    go.touch()
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outs.append(out.strip())
    return outs


def test_processes_racing_to_resolve_write_one_resolution(desk: DataDir, tmp_path: Path) -> None:
    outs = _race(desk, tmp_path, "resolve", P2, ["ana", "bia", "caio", "dora"])
    assert sorted(o.split(":")[0] for o in outs) == ["ok", "refused", "refused", "refused"], outs
    assert all("already resolved" in o for o in outs if o != "ok")
    assert [d.action for d in load_history(desk)[P2]] == ["resolve"]
    assert [e["action"] for e in audit.read_entries(desk)] == ["resolve"]
    assert audit.verify(desk).ok


def test_approvers_racing_to_approve_write_one_approval(desk: DataDir, tmp_path: Path) -> None:
    request = workflow.resolve(
        P1, "paid back", data=desk, decided_by="rita", policy=workflow.Policy(four_eyes_p1=True)
    )
    assert isinstance(request, workflow.Request)
    outs = _race(desk, tmp_path, "approve", P1, ["ana", "bia", "caio"])
    assert sorted(o.split(":")[0] for o in outs) == ["ok", "refused", "refused"], outs
    assert [d.action for d in load_history(desk)[P1]] == ["resolve"]
    assert [e["action"] for e in audit.read_entries(desk)] == [
        "request_approval", "approve", "resolve"
    ]  # fmt: skip


def test_four_eyes_makes_recon_resolve_of_a_p1_a_request(
    desk: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.config_path.write_text("[review]\nfour_eyes_p1 = true\n")
    root = str(desk.root)
    assert main(["resolve", P1, "--note", "paid back", "--by", "rita", "--data", root]) == 0
    assert "requested by rita" in capsys.readouterr().out
    assert P1 not in load_decisions(desk)  # still open
    assert workflow.State.read(desk).pending[P1]["by"] == "rita"
    # asked once: a second request is refused; the asker cannot approve; another approver can
    assert main(["resolve", P1, "--note", "again", "--by", "ana", "--data", root]) == 2
    assert "already waits for approval" in capsys.readouterr().err
    with pytest.raises(UsageError, match="different approver"):
        workflow.approve(P1, data=desk, decided_by="RITA")
    workflow.approve(P1, "checked", data=desk, decided_by="ana")
    assert (
        load_decisions(desk)[P1].note == "paid back (requested by rita, approved by ana); checked"
    )
    # a P2 is resolved at once
    assert main(["resolve", P2, "--note", "returned", "--data", root]) == 0
    assert P2 in load_decisions(desk)


def test_roles_bind_every_door(desk: DataDir) -> None:
    viewer = workflow.Actor("vera", "viewer")
    reviewer = workflow.Actor("rita", "reviewer")
    with pytest.raises(workflow.NotAllowed, match="cannot comment"):
        workflow.comment(P2, "hello", data=desk, actor=viewer)
    with pytest.raises(workflow.NotAllowed, match="approver role"):
        workflow.resolve(P1, "x", data=desk, actor=reviewer, policy=workflow.Policy())
    with pytest.raises(workflow.NotAllowed, match="cannot pair"):
        workflow.pair("intent-1", ["line"], "x", data=desk, actor=viewer)
    assert not audit.read_entries(desk) and not load_history(desk)


def test_start_up_warns_when_four_eyes_has_fewer_than_two_approvers(
    desk: DataDir, caplog: pytest.LogCaptureFixture
) -> None:
    from recon.review.app import ReviewSettings, create_app

    settings = ReviewSettings.load(desk, four_eyes_p1=True)
    with caplog.at_level(logging.WARNING):
        app = create_app(desk, settings=settings)
    assert "only 1 approver(s)" in app.state.review.warning
    assert "only 1 approver(s)" in caplog.text
    assert workflow.four_eyes_warning(workflow.Policy(True), 2) == ""
    assert workflow.four_eyes_warning(workflow.Policy(False), 0) == ""
