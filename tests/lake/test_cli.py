"""`--data URI` mistakes are one line `recon: error: …` and exit 2, never a traceback."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# a text that names a store's scheme (or file:) but is not a URI of one
_MALFORMED = ("s3:/x", "s3:x", "S3:bucket/p", "gs:", "gs:/bucket", "abfs:/c/p", "az:c",
              "s3:///x", "s3://b/../x", "file:data", "file://host/x", "file:")  # fmt: skip


@given(
    scheme=st.sampled_from(["s3", "S3", "s3a", "gs", "GS", "gcs", "abfs", "abfss", "az", "file"]),
    slashes=st.sampled_from(["", "/", "//", "///"]),
    rest=st.text(alphabet="ab./-_?#: ", max_size=12),
)
@settings(max_examples=300, deadline=None)
def test_a_text_naming_a_scheme_is_a_uri_or_a_mistake_never_a_local_folder(
    scheme: str, slashes: str, rest: str
) -> None:
    from recon import lake
    from recon.config import DataDir

    text = f"{scheme}:{slashes}{rest}"
    assert lake.scheme_of(text) == scheme.lower()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lake, "check", lambda _loc: None)  # no store here: the text alone
        patch.setenv("RECON_LOCAL_DIR", "/nonexistent-recon-local")
        try:
            data = DataDir.resolve(text)
        except lake.LakeError as exc:
            assert "\n" not in str(exc) and text.strip() in str(exc)
            return
    if scheme == "file":  # file:///abs, file:/abs, file://localhost/abs only
        assert not data.remote and data.root.is_absolute()
        after = text.partition(":")[2]
        assert after.startswith("/") and "?" not in after and "#" not in after
        assert not after.startswith("//") or after.startswith(("///", "//localhost/"))
    else:
        assert data.remote and data.uri == lake.parse(text).uri
        assert text.partition(":")[2].startswith("//") and lake.parse(text).bucket


def test_a_malformed_uri_is_one_line_for_every_command_and_writes_nothing(
    tmp_path: Path,
) -> None:
    env = base_env(tmp_path)
    (tmp_path / "x.csv").write_text("data;descricao;valor\n")
    commands = (["statements", "import", "x.csv"], ["sql", "select 1"], ["reconcile"],
                ["extract"], ["erase", "--document", "529.982.247-25"])  # fmt: skip
    for text, command in zip(_MALFORMED, commands, strict=False):
        proc = recon(*command, "--data", text, cwd=tmp_path, env=env)
        line = one_error_line(proc)
        assert repr(text) in line, (text, command, line)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]
    # a folder with a colon in its name stays reachable, written as a path
    proc = recon("sql", "select 1", "--data", "./s3:x", cwd=tmp_path, env=env)
    assert "no data directory at" in one_error_line(proc) and "s3:x" in proc.stderr


def test_a_file_uri_names_its_local_folder(tmp_path: Path) -> None:
    from recon.config import DataDir

    folder = tmp_path / "my data"
    assert DataDir.resolve(f"file://{folder.as_posix().replace(' ', '%20')}").root == folder
    assert DataDir.resolve(f"file://localhost{folder}").root == folder
    assert DataDir.resolve(f"file:{folder}").root == folder


@contextlib.contextmanager
def silent_endpoint() -> Iterator[str]:
    """A loopback server that accepts every connection and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def test_an_endpoint_that_accepts_and_never_answers_fails_in_seconds(tmp_path: Path) -> None:
    with silent_endpoint() as endpoint:
        env = dict(base_env(tmp_path), AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s",
                   AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true",
                   RECON_STORAGE_READ_TIMEOUT="1", RECON_STORAGE_CONNECT_TIMEOUT="1s")  # fmt: skip
        started = time.monotonic()
        proc = recon("sql", "select 1", "--data", "s3://recon-bucket/p", cwd=tmp_path, env=env)
        took = time.monotonic() - started
        line = one_error_line(proc)
        assert endpoint in line and "did not answer" in line and "2 attempts" in line, line
        # two attempts of one second, plus starting Python: far from the 93 s of the defaults
        # of the S3 client (three attempts of 30 s)
        assert took < 30, took
        # the same from recon.toml's [storage] (the environment variable wins over it)
        (tmp_path / "recon.toml").write_text("[storage]\nread_timeout = 1\nretries = 0\n")
        env.pop("RECON_STORAGE_READ_TIMEOUT")
        started = time.monotonic()
        proc = recon("sql", "select 1", "--data", "s3://recon-bucket/p", cwd=tmp_path, env=env)
        took = time.monotonic() - started
        line = one_error_line(proc)
        assert "waited 1 s to connect, 1 s for a reply, 1 attempts" in line, line
        assert took < 30, took


def test_the_storage_settings_are_checked(tmp_path: Path) -> None:
    from recon import lake

    env = dict(base_env(tmp_path), AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s")
    bad = dict(env, RECON_STORAGE_READ_TIMEOUT="soon")
    line = one_error_line(recon("sql", "select 1", "--data", "s3://bk/p", cwd=tmp_path, env=bad))
    assert "RECON_STORAGE_READ_TIMEOUT: 'soon' is not a timeout" in line
    (tmp_path / "recon.toml").write_text("[storage]\nread_timout = 3\n")
    line = one_error_line(recon("sql", "select 1", "--data", "s3://bk/p", cwd=tmp_path, env=env))
    assert "unknown key 'read_timout'" in line
    with pytest.MonkeyPatch.context() as patch:
        for variable, _field in lake.TIMEOUT_SETTINGS.values():
            patch.delenv(variable, raising=False)
        lake.configure({"connect_timeout": "500ms", "read_timeout": "1m", "retries": 3})
        assert lake.timeouts() == lake.Timeouts(connect=0.5, read=60.0, retries=3)
        options = lake.storage_options(lake.parse("s3://bk/p"))
        assert (options["connect_timeout"], options["timeout"], options["max_retries"]) == (
            "500ms", "60000ms", "3"
        )  # fmt: skip
        patch.setenv("RECON_STORAGE_RETRIES", "0")
        assert lake.timeouts().retries == 0
        lake.configure({})
        assert lake.timeouts() == lake.Timeouts(retries=0)


def test_a_server_that_is_not_s3_is_named_for_what_it_answered(tmp_path: Path) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        env = dict(base_env(tmp_path), AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s",
                   AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true")  # fmt: skip
        proc = recon("sql", "select 1", "--data", "s3://recon-bucket/p", cwd=tmp_path, env=env)
    finally:
        server.shutdown()
        server.server_close()
    line = one_error_line(proc)
    assert "does not exist" not in line, line
    assert f"{endpoint} is not an S3 endpoint" in line and "HTTP 404 (text/html" in line, line


def test_sql_on_s3_judges_the_data_by_its_remote_tables(s3: S3, tmp_path: Path) -> None:
    from recon import testing
    from recon.config import DataDir
    from recon.ops.migrate import _stored_lines
    from recon.statements import stored

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    env.pop("RECON_DATA", None)
    query = ("sql", "select count(*) AS n from statement_lines", "--format", "csv")
    local = DataDir(tmp_path / "local-data").ensure()
    testing.statement_lines(local, [testing.statement_line(1)])
    lines = [_stored_lines(pyarrow.parquet.read_table(f)) for f in stored.line_files(local)]
    remote = DataDir.resolve(s3.uri()).ensure()  # its local side, as an import leaves it
    stored.merge_remote(remote, lines, [], [], "one")
    proc = recon(*query, "--data", s3.uri(), cwd=tmp_path, env=env)
    assert proc.returncode == 0 and proc.stdout.split() == ["n", "1"], proc.stderr
    assert proc.stderr == ""  # the local side holds nothing, and that is not a warning
    empty = s3.uri("empty")
    DataDir.resolve(empty).ensure()
    proc = recon(*query, "--data", empty, cwd=tmp_path, env=env)
    assert proc.returncode == 0 and proc.stdout.split() == ["n", "0"], proc.stderr
    assert proc.stderr.strip() == (
        f"recon: warning: {empty} holds no snapshots or statements yet: the views are empty "
        "(run `recon extract` / `recon statements import`, or `make demo`)"
    )


def test_a_store_that_cannot_be_read_is_one_line_without_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.config import DataDir

    env = dict(base_env(tmp_path), RECON_STORAGE_CONNECT_TIMEOUT="1", RECON_STORAGE_READ_TIMEOUT="1",
               RECON_STORAGE_RETRIES="0")  # fmt: skip
    monkeypatch.setenv("RECON_LOCAL_DIR", env["RECON_LOCAL_DIR"])
    DataDir.resolve("gs://recon-bucket/p").ensure()  # the local side a failed import leaves
    proc = recon("sql", "select 1", "--data", "gs://recon-bucket/p", cwd=tmp_path, env=env)
    assert "gs://recon-bucket/p" in one_error_line(proc)
