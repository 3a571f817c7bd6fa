"""`recon review` refusals (exit 2, one line), `adduser` and `hash-password`."""

from __future__ import annotations

import io
import socket

import pytest

from recon.cli import main as cli_main
from recon.config import DataDir
from recon.review import auth


def main(argv: list[str]) -> int:
    try:
        return cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _one_error(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("recon: error:"), err
    return lines[0]


def test_a_public_host_without_users_is_refused(data_dir: DataDir, capsys) -> None:
    assert main(["review", "--host", "0.0.0.0", "--data", str(data_dir.root)]) == 2
    assert "refusing to serve on 0.0.0.0 without sign-in" in _one_error(capsys.readouterr().err)


def test_a_busy_port_is_one_line(data_dir: DataDir, capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["review", "--port", str(port), "--data", str(data_dir.root)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in _one_error(capsys.readouterr().err)
    assert main(["review", "--port", "70000", "--data", str(data_dir.root)]) == 2


def test_adduser_and_hash_password(data_dir: DataDir, capsys, monkeypatch) -> None:
    root = str(data_dir.root)
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret-pass\n"))
    assert main(["review", "adduser", "ana", "--role", "approver", "--password-stdin",
                 "--data", root]) == 0  # fmt: skip
    path = auth.users_path(data_dir)
    assert path.stat().st_mode & 0o777 == 0o600
    users = auth.load_users(path)
    assert users["ana"].role == "approver"
    assert auth.verify_password(users["ana"], "s3cret-pass")
    assert not auth.verify_password(users["ana"], "wrong")
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["review", "adduser", "bia", "--role", "viewer", "--password-stdin",
                 "--data", root]) == 2  # fmt: skip
    assert "at least 8 characters" in _one_error(capsys.readouterr().err)
    assert set(auth.load_users(path)) == {"ana"}
    monkeypatch.setattr("sys.stdin", io.StringIO("another-pass\n"))
    assert main(["review", "hash-password", "--password-stdin"]) == 0
    hashed = capsys.readouterr().out.strip()
    assert hashed.startswith("$argon2id$")
    assert auth.verify_password(auth.User("x", "viewer", hashed), "another-pass")
    # with users, a public host is accepted (the refusal is about sign-in); a bad role is not
    assert main(["review", "adduser", "c", "--role", "boss", "--password-stdin"]) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[users.ana]\nrole = 'king'\npassword_hash = '$argon2id$x'\n", "role must be one of"),
        ("[users.ana]\nrole = 'viewer'\npassword_hash = 'plain'\n", "must be an argon2 hash"),
        ("[users\n", "not valid TOML"),
        ('[users."a b"]\nrole = "viewer"\n', "not a valid user entry"),
    ],
)
def test_a_bad_users_file_is_a_clear_error(data_dir: DataDir, capsys, text, message) -> None:
    path = auth.users_path(data_dir)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert main(["review", "--data", str(data_dir.root)]) == 2
    assert message in _one_error(capsys.readouterr().err)
