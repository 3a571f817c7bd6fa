"""`recon resolve --by / --reopen` and `recon audit verify` from the command line."""

from __future__ import annotations

import json

import pytest

from recon import testing
from recon.cli import main as cli_main
from recon.config import DataDir
from recon.reconciliation import audit
from recon.reconciliation.decisions import load_history


def main(argv: list[str]) -> int:
    try:
        return cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_resolve_by_reopen_and_verify(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("getpass.getuser", lambda: "osuser")
    bid = "0123456789abcdef"
    testing.run(
        data_dir,
        [testing.break_row("unmatched_debit", 1, break_id=bid)],
        run_id="20261121T000000000000Z-cccc",
    )
    root = str(data_dir.root)
    assert main(["audit", "verify", "--data", root]) == 0  # no log yet: an empty chain
    assert main(["resolve", bid, "--note", "paid back", "--data", root]) == 0
    assert "resolved by osuser" in capsys.readouterr().out
    # resolved already: refused, nothing written (a further word is a comment)
    assert main(["resolve", bid, "--note", "ticket FIN-9", "--by", "ana", "--data", root]) == 2
    assert "already resolved" in capsys.readouterr().err
    assert (
        main(["resolve", bid, "--reopen", "--note", "bounced", "--by", "bia", "--data", root]) == 0
    )
    out = capsys.readouterr().out
    assert "reopened by bia" in out
    assert [(d.decided_by, d.action) for d in load_history(data_dir)[bid]] == [
        ("osuser", "resolve"), ("bia", "reopen")
    ]  # fmt: skip
    assert main(["audit", "verify", "--data", root]) == 0
    assert "2 entries, chain intact" in capsys.readouterr().out
    # reopening an open break is refused, and nothing is written
    assert main(["resolve", bid, "--reopen", "--note", "x", "--data", root]) == 2
    assert "not resolved" in capsys.readouterr().err
    assert len(audit.read_entries(data_dir)) == 2

    path = audit.audit_path(data_dir)
    lines = path.read_text(encoding="utf-8").split("\n")
    entry = json.loads(lines[1])
    entry["note"] = "changed later"
    lines[1] = json.dumps(entry)
    path.write_text("\n".join(lines), encoding="utf-8")
    assert main(["audit", "verify", "--data", root]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recon: error:")
    assert "audit.jsonl:2: audit chain broken" in err[0]


def test_audit_init_and_verify_expect_head(
    data_dir: DataDir,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path,
) -> None:
    monkeypatch.delenv(audit.KEY_ENV)
    key = tmp_path / "keys" / "audit.key"
    monkeypatch.setenv("RECON_CONFIG", str(tmp_path / "recon.toml"))
    (tmp_path / "recon.toml").write_text(f'[audit]\nkey_file = "{key}"\n')
    root = str(data_dir.root)
    assert main(["audit", "init", "--data", root]) == 0
    assert f"audit key written to {key}" in capsys.readouterr().out
    assert key.stat().st_mode & 0o777 == 0o600
    with audit.locked(data_dir) as log:
        log.append(by="ana", action="comment", break_id="ab" * 8, note="one")
    head = audit.verify(data_dir).head
    assert main(["audit", "verify", "--expect-head", head, "--data", root]) == 0
    assert f"1 entries, chain intact, head {head}" in capsys.readouterr().out
    audit.audit_path(data_dir).unlink()
    audit.head_path(data_dir).unlink()
    assert main(["audit", "verify", "--data", root]) == 0  # empty, as far as it can tell
    capsys.readouterr()
    assert main(["audit", "verify", "--expect-head", head, "--data", root]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recon: error:") and head in err[0]
    assert main(["audit", "verify", "--expect-head", "nothex", "--data", root]) == 2
    assert "64 hexadecimal" in capsys.readouterr().err
