"""Fault injection over real HTTP: the emulator served on loopback with WireFaults.

Each test asserts the snapshot's id set equals the server's, with no duplicate id. Worlds
are small and latencies short so the whole file runs in seconds.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from recon import catalog
from recon.api import AsyncClient
from recon.api._retry import RetryPolicy
from recon.cli import main
from recon.config import DataDir
from recon.extraction import InconsistentSnapshotError, SnapshotResult, extract_async
from recon.sandbox.asgi import create_app
from recon.sandbox.emulator import Emulator
from recon.sandbox.serving import run_in_thread
from recon.sandbox.wire_faults import WireFaults

FAST_RETRY = RetryPolicy(max_attempts=8, base_delay=0.01, max_delay=0.05, budget=30)


class Sandbox:
    def __init__(self, emu: Emulator, app: Any, url: str):
        self.emu = emu
        self.app = app
        self.url = url
        self.key = emu.instances[0].api_key
        self.http: list[httpx.AsyncClient] = []  # closed by run(), in the loop that used them
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def faults(self) -> WireFaults:
        return self.app.state.faults  # type: ignore[no-any-return]

    def set_faults(self, **kw: Any) -> None:
        self.app.state.faults = WireFaults(**kw)

    def server_state(self, status: str = "all") -> dict[str, str]:
        """id → status of every intent the server holds now (in-process, no faults)."""
        found: dict[str, str] = {}
        offset = 0
        while True:
            r = self.emu.handle(
                "GET",
                "/v2/intents",
                query={"limit": "100", "offset": str(offset), "status": status},
                headers={"x-api-key": self.key},
                body=b"",
            )
            assert r.status == 200, r.body
            for item in r.body["intents"]:
                found[item["id"]] = item["status"]
            offset += r.body["limit"]
            if offset >= r.body["total"]:
                return found

    def client(self, *, stop_drift_after: int | None = None) -> AsyncClient:
        """An AsyncClient with fast retries; optionally turns drift off after N list calls."""
        calls = {"n": 0}

        async def on_response(response: httpx.Response) -> None:
            self.in_flight -= 1

        async def hook(request: httpx.Request) -> None:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if request.url.path == "/v2/intents":
                calls["n"] += 1
                if stop_drift_after is not None and calls["n"] > stop_drift_after:
                    f = self.faults
                    f.drift_inserts_per_list = 0
                    f.drift_status_changes_per_list = 0

        http = httpx.AsyncClient(
            base_url=self.url, event_hooks={"request": [hook], "response": [on_response]}
        )
        self.http.append(http)
        return AsyncClient(api_key=self.key, client=http, retry=FAST_RETRY)


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    emu = Emulator(seed=11, keys=["key-a", "key-b"])
    emu.bulk_load(1200, days=3)
    app = create_app(emu)
    with run_in_thread(app) as url:
        yield Sandbox(emu, app, url)


def snapshot_rows(result: SnapshotResult) -> dict[str, str]:
    table = pq.read_table(result.path / "part-00000.parquet", columns=["id", "status"])
    ids = table.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "duplicate ids in the snapshot"
    return dict(zip(ids, table.column("status").to_pylist(), strict=True))


def run(data: DataDir, sb: Sandbox, client: AsyncClient | None = None, **kw: Any) -> SnapshotResult:
    """Extract in one event loop with a client that is closed in that same loop."""
    c = client or sb.client()

    async def go() -> SnapshotResult:
        try:
            return await extract_async(data, client=c, quiet=True, **kw)
        finally:
            for http in sb.http:
                await http.aclose()
            sb.http.clear()

    return asyncio.run(go())


def test_latency(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(latency_ms=30)
    client = sandbox.client()
    result = run(data_dir, sandbox, client, concurrency=4)
    assert snapshot_rows(result).keys() == sandbox.server_state().keys()
    assert result.manifest["pages"] == 12 and result.manifest["passes"] == 1
    # pages after the first were in flight together (bounded by the concurrency)
    assert 2 <= sandbox.max_in_flight <= 4


def test_429_with_retry_after_pauses_and_completes(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(rate_429=0.1, retry_after=1, seed=4)
    client = sandbox.client()
    t0 = time.monotonic()
    result = run(data_dir, sandbox, client)
    assert snapshot_rows(result).keys() == sandbox.server_state().keys()
    assert client.stats.rate_limited >= 1
    assert result.manifest["retries"] >= 1
    assert time.monotonic() - t0 >= 1.0  # Retry-After is honoured (a floor)


def test_5xx_bursts(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(rate_5xx=0.4, seed=2)
    client = sandbox.client()
    result = run(data_dir, sandbox, client)
    assert snapshot_rows(result).keys() == sandbox.server_state().keys()
    assert client.stats.server_errors >= 1
    assert result.manifest["retries"] == client.stats.retries >= 1


def test_limit_capped_below_the_ask(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(limit_cap=35, latency_ms=2)
    result = run(data_dir, sandbox)
    assert snapshot_rows(result).keys() == sandbox.server_state().keys()
    assert result.manifest["page_limit"] == 35
    assert result.manifest["pages"] == -(-1200 // 35)


def test_inserts_at_the_head_during_the_walk(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(drift_inserts_per_list=4, latency_ms=3, seed=5)
    result = run(data_dir, sandbox, sandbox.client(stop_drift_after=10))
    server = sandbox.server_state()
    assert len(server) > 1200
    assert snapshot_rows(result).keys() == server.keys()
    m = result.manifest
    assert m["consistent"] and m["passes"] >= 2 and m["total_first"] < m["total_last"]


def test_status_changes_keep_the_latest_version(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(drift_status_changes_per_list=5, latency_ms=3, seed=6)
    result = run(data_dir, sandbox, sandbox.client(stop_drift_after=8))
    server = sandbox.server_state()
    rows = snapshot_rows(result)
    assert rows.keys() == server.keys()
    # no pass re-read everything, but statuses changed mid-walk: every row is a version
    # the walk saw; the ones read after the change carry the new status
    assert sum(rows[i] == server[i] for i in server) >= len(server) - 5 * 8


def test_status_changes_under_a_status_filter(data_dir: DataDir, sandbox: Sandbox) -> None:
    status = "minting"  # intents leave it (→ awaiting_onchain_transfer) and enter it
    before = sandbox.server_state(status)
    assert len(before) > 10
    sandbox.set_faults(drift_status_changes_per_list=6, drift_inserts_per_list=1, seed=7)
    client = sandbox.client(stop_drift_after=6)
    result = run(data_dir, sandbox, client, status=status, page_size=4)
    server = sandbox.server_state(status)
    assert server.keys() != before.keys()  # the filtered list really moved
    assert snapshot_rows(result).keys() == server.keys()
    assert set(snapshot_rows(result).values()) == {status}
    assert result.manifest["kind"] == "filtered" and result.manifest["consistent"]


def test_never_ending_drift_exits_3(
    data_dir: DataDir, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two new intents before every list request; page 0 is read first, alone, so the
    # intents the later requests add are never in a response: the count cannot close
    sandbox.set_faults(drift_inserts_per_list=2)
    monkeypatch.setenv("RECON_API_KEY", sandbox.key)
    code = main(
        ["extract", "--data", str(data_dir.root), "--base-url", sandbox.url, "--max-passes", "1"]
    )
    assert code == 3
    [snap] = catalog.list_snapshots(data_dir)
    assert snap.manifest is not None and snap.manifest["consistent"] is False
    assert catalog.latest_snapshot(data_dir) is None  # never becomes `intents`
    with pytest.raises(InconsistentSnapshotError):
        run(data_dir, sandbox, max_passes=1)


def test_cli_without_base_url_or_key(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RECON_BASE_URL", raising=False)
    monkeypatch.setenv("RECON_API_KEY", "k")
    assert main(["extract", "--data", str(data_dir.root)]) == 2
    assert "--base-url" in capsys.readouterr().err
    monkeypatch.delenv("RECON_API_KEY")
    assert main(["extract", "--data", str(data_dir.root), "--base-url", "http://x"]) == 2
    assert "RECON_API_KEY" in capsys.readouterr().err


def test_cli_summary_and_env_base_url(
    data_dir: DataDir,
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RECON_API_KEY", sandbox.key)
    monkeypatch.setenv("RECON_BASE_URL", sandbox.url)
    assert main(["extract", "--data", str(data_dir.root), "--intent-type", "onramp"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "consistent" in out and sandbox.key not in out
    [snap] = catalog.list_snapshots(data_dir)
    assert snap.manifest is not None
    assert snap.manifest["filters"] == {"intent_type": "onramp", "status": "all"}
    assert sandbox.key not in (snap.path / "_manifest.json").read_text()
    assert main(["extract", "--data", str(data_dir.root), "--quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_crash_mid_walk_leaves_nothing_visible(data_dir: DataDir, sandbox: Sandbox) -> None:
    sandbox.set_faults(latency_ms=100)
    env = dict(os.environ, RECON_API_KEY=sandbox.key, RECON_BASE_URL=sandbox.url)
    cmd = [sys.executable, "-m", "recon", "extract", "--data", str(data_dir.root)]
    proc = subprocess.Popen([*cmd, "--concurrency", "1", "--quiet"], env=env)
    try:
        deadline = time.monotonic() + 20
        # wait until the walk is under way (12 pages, one at a time, 100 ms each), then kill
        # without any chance to clean up
        while not list(data_dir.snapshots.glob(".tmp-work-*")):
            assert proc.poll() is None, "extract ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(data_dir.snapshots.glob(".tmp-*")), "the crash should leave its temp folder"
    assert catalog.list_snapshots(data_dir) == []
    assert catalog.sql("select count(*) as n from intent_snapshots", data_dir)["n"].item() == 0
    # the next start cleans up and publishes one snapshot
    sandbox.set_faults()
    result = run(data_dir, sandbox)
    assert not list(data_dir.snapshots.rglob(".tmp-*"))
    assert [s.run_id for s in catalog.list_snapshots(data_dir)] == [result.run_id]
    assert snapshot_rows(result).keys() == sandbox.server_state().keys()


def test_credentials_in_the_base_url_never_show(data_dir: DataDir, sandbox: Sandbox) -> None:
    """`http://user:secret@host` sends Basic auth; the secret shows in no log line (`-vv`,
    httpx's own included), no output, no manifest, no repr."""
    secret = "url-secret-9d2f"
    url = sandbox.url.replace("http://", f"http://ops:{secret}@")
    env = dict(os.environ, RECON_API_KEY=sandbox.key, RECON_BASE_URL=url)
    cmd = [sys.executable, "-m", "recon", "extract", "-vv", "--data", str(data_dir.root)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "HTTP Request: GET" in proc.stderr  # -vv did log every request
    assert secret not in proc.stdout + proc.stderr
    assert sandbox.key not in proc.stdout + proc.stderr
    [snap] = catalog.list_snapshots(data_dir)
    manifest = (snap.path / "_manifest.json").read_text()
    assert secret not in manifest and "ops:" not in manifest
    client = AsyncClient(url, sandbox.key)
    assert secret not in repr(client) and client.base_url == sandbox.url


def test_a_walk_leaves_the_collector_as_it_found_it(
    data_dir: DataDir, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heap alive before a walk is frozen while it runs (the collector's full passes skip
    it) and unfrozen after, even when the walk fails; a heap the caller froze stays frozen."""
    import gc

    import recon.extraction.snapshot as snapshot

    during: list[int] = []
    walk = snapshot._extract

    async def watched(*args: Any, **kw: Any) -> SnapshotResult:
        during.append(gc.get_freeze_count())
        if kw.get("max_passes") == 2:  # marks the run that fails
            raise RuntimeError("the walk failed")
        return await walk(*args, **kw)

    monkeypatch.setattr(snapshot, "_extract", watched)
    gc.unfreeze()
    run(data_dir, sandbox)
    assert during[-1] > 0 and gc.get_freeze_count() == 0

    with pytest.raises(RuntimeError, match="the walk failed"):
        run(data_dir, sandbox, max_passes=2)
    assert during[-1] > 0 and gc.get_freeze_count() == 0

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run(data_dir, sandbox)
        # neither frozen again (more objects) nor unfrozen (none); frozen objects may die
        assert 0 < during[-1] <= frozen and 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
