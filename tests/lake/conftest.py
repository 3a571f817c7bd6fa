"""An S3 server on loopback (moto, in a child process), a fresh bucket per test, and the
sandbox's whole job committed once on a bucket of its own."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from recon.config import DataDir
from tests.shared import served_sandbox

SERVER = Path(__file__).with_name("s3_server.py")


@dataclass(frozen=True)
class S3:
    """A running server: its endpoint, a bucket of the test's own, and the fault switch."""

    endpoint: str
    bucket: str
    faults: Path

    def uri(self, prefix: str = "data") -> str:
        return f"s3://{self.bucket}/{prefix}"

    def client(self):  # boto3 client, for checks from outside recon
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="recon-test",
            aws_secret_access_key="recon-test-secret",
            region_name="us-east-1",
        )

    def keys(self, prefix: str = "") -> list[str]:
        pages = (
            self.client()
            .get_paginator("list_objects_v2")
            .paginate(Bucket=self.bucket, Prefix=prefix)
        )
        return sorted(o["Key"] for page in pages for o in page.get("Contents", []))

    def fail_commits(self, on: bool = True, only: str = "") -> None:
        """Refuse Delta commit entries (of tables whose path contains `only`)."""
        flag = self.faults / "fail-commits"
        if on:
            flag.write_text(only)
        else:
            flag.unlink(missing_ok=True)

    def fail_requests(self, *rules: str) -> None:
        """Refuse every request matching one of `rules` (``"DELETE /snapshots/"``: a method
        and a regular expression over the path); no rules: refuse nothing again."""
        flag = self.faults / "fail-requests"
        if rules:
            flag.write_text("\n".join(rules) + "\n")
        else:
            flag.unlink(missing_ok=True)

    def refused(self) -> list[str]:
        """The paths the fault switches refused so far (every test of the worker)."""
        log = self.faults / "refused.log"
        return log.read_text().splitlines() if log.is_file() else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """moto's S3 on 127.0.0.1 (a free port), one per test worker."""
    faults = tmp_path_factory.mktemp("s3-faults")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(port), str(faults)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", f"the S3 server did not start: {line!r}"
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the S3 server does not answer"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", faults
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


def reach(patch: pytest.MonkeyPatch, endpoint: str, local: Path) -> None:
    """Set the environment a user would set to reach the server (`local`: the local side of
    remote data directories: lock, inbox, reports, kept in the test's folder)."""
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "recon-test",
        "AWS_SECRET_ACCESS_KEY": "recon-test-secret",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "RECON_LOCAL_DIR": str(local),
    }
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
        patch.delenv(name, raising=False)
    for name, value in env.items():
        patch.setenv(name, value)


def new_bucket(s3_server: tuple[str, Path]) -> S3:
    """A fresh bucket on the server, its fault switches off."""
    endpoint, faults = s3_server
    server = S3(endpoint, f"recon-{uuid.uuid4().hex[:12]}", faults)
    server.client().create_bucket(Bucket=server.bucket)
    server.fail_commits(False)
    server.fail_requests()
    return server


@pytest.fixture
def s3(
    s3_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[S3]:
    """A fresh bucket, and the environment a user would set to reach it."""
    reach(monkeypatch, s3_server[0], tmp_path / "local")
    server = new_bucket(s3_server)
    yield server
    server.fail_commits(False)
    server.fail_requests()


def run_threads(*targets: Callable[[], object]) -> list[BaseException]:
    """Call each target on its own thread, all released at once; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(targets))

    def call(target: Callable[[], object]) -> None:
        try:
            start.wait()
            target()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield from served_sandbox(tmp_path_factory)


def job(data: str | DataDir, sandbox: dict[str, Any]) -> Any:
    """The whole job through the public API: extract, import every format, reconcile."""
    import recon

    recon.extract(data, base_url=sandbox["url"], api_key=sandbox["key"], quiet=True)
    report = recon.import_statements(sandbox["files"], data)
    run = recon.reconcile(data, as_of=sandbox["end"], flows=True)
    return report, run


JOB = "recon/prod"  # the prefix the shared job is committed under


@dataclass(frozen=True)
class Done:
    """The whole job, run once on a bucket of its own: what the tests that only read a
    committed job share, and what `copy_of` copies for those that write over one (a job on
    S3 is most of a minute of moto). `data` is the bucket's data directory as the machine
    that ran the job sees it (its local side)."""

    bucket: str
    report: Any
    run: Any
    data: DataDir


@pytest.fixture(scope="session")
def done(
    s3_server: tuple[str, Path], sandbox: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Done:
    with pytest.MonkeyPatch.context() as patch:
        reach(patch, s3_server[0], tmp_path_factory.mktemp("job-machine"))
        server = new_bucket(s3_server)
        report, run = job(server.uri(JOB), sandbox)
        return Done(server.bucket, report, run, DataDir.resolve(server.uri(JOB)))


def committed(s3: S3, done: Done) -> S3:
    """The `s3` fixture's server (and environment), on the bucket of the shared job."""
    return S3(s3.endpoint, done.bucket, s3.faults)


def copy_of(done: Done, s3: S3) -> DataDir:
    """The shared job in the test's own bucket, as its machine left it: every object copied
    on the server (Delta logs name their files relative to the table) and the job machine's
    local side copied to this test's."""
    client = s3.client()
    for key in committed(s3, done).keys(f"{JOB}/"):
        client.copy_object(
            Bucket=s3.bucket, Key=key, CopySource={"Bucket": done.bucket, "Key": key}
        )
    data = DataDir.resolve(s3.uri(JOB))
    shutil.copytree(done.data.root, data.root, dirs_exist_ok=True)
    return data
