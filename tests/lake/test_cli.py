"""`--data URI` mistakes are one line `recon: error: …` and exit 2, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from tests.lake.conftest import S3
from tests.shared import run_recon


def recon(*argv: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_recon(*argv, cwd=cwd, env=env)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("recon: error: "), proc.stderr
    return lines[0]


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RECON_DATA"))}
    env["HOME"] = str(tmp_path / "home")  # no ~/.aws/credentials to fall back on
    env["RECON_LOCAL_DIR"] = str(tmp_path / "local")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def test_an_unknown_scheme(tmp_path: Path) -> None:
    for command in (["reconcile"], ["sql", "select 1"], ["statements", "import", "x.csv"]):
        proc = recon(*command, "--data", "ftp://host/recon", cwd=tmp_path, env=base_env(tmp_path))
        line = one_error_line(proc)
        assert "unsupported data directory scheme ftp://" in line and "s3://" in line


def test_missing_credentials(tmp_path: Path) -> None:
    proc = recon("reconcile", "--data", "s3://recon-bucket/p", cwd=tmp_path, env=base_env(tmp_path))
    assert "no S3 credentials: set AWS_ACCESS_KEY_ID" in one_error_line(proc)
    env = dict(base_env(tmp_path), AWS_ACCESS_KEY_ID="key")
    proc = recon("sql", "select 1", "--data", "s3://recon-bucket/p", cwd=tmp_path, env=env)
    assert "AWS_SECRET_ACCESS_KEY is not" in one_error_line(proc)


def test_an_endpoint_that_does_not_answer(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    env = dict(
        base_env(tmp_path),
        AWS_ACCESS_KEY_ID="k",
        AWS_SECRET_ACCESS_KEY="s",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_ALLOW_HTTP="true",
    )
    proc = recon("extract", "--data", "s3://recon-bucket/p", cwd=tmp_path, env=env)
    line = one_error_line(proc)
    assert "s3://recon-bucket/p: cannot reach the bucket" in line


def test_a_bucket_that_does_not_exist_and_a_query_that_works(s3: S3, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    env.pop("RECON_DATA", None)
    proc = recon("sql", "select 1", "--data", f"s3://{s3.bucket}-nope/p", cwd=tmp_path, env=env)
    assert "does not exist" in one_error_line(proc)
    proc = recon(
        "sql", "select count(*) AS n from intents", "--data", s3.uri(), "--format", "csv",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["n", "0"]
    proc = recon("sql", "--data", s3.uri(), cwd=tmp_path, env=env)
    assert "recon.duckdb holds views over local files" in one_error_line(proc)
