"""A small reconciled world for the review app, and the app served on loopback."""

from __future__ import annotations

import functools
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest
import uvicorn

from recon.config import DataDir
from recon.reconciliation import ReconcileSettings, reconcile
from recon.review import auth
from recon.review.app import ReviewSettings, create_app
from recon.testing.handbuilt import T0, World, intent, line, uid

AS_OF = T0 + timedelta(hours=6)
PASSWORDS = {"vera": "viewer-pass-1", "rita": "reviewer-pass-1", "ana": "approver-pass-1",
             "bia": "approver-pass-2"}  # fmt: skip
ROLES = {"vera": "viewer", "rita": "reviewer", "ana": "approver", "bia": "approver"}


@dataclass
class ReviewWorld:
    """The data dir, and the break ids of the planted cases."""

    data: DataDir
    ambiguous: str  # one credit, two fitting onramps (uid(1), uid(2))
    missing: str  # P1: onramp uid(3) completed, no credit
    stranger: str  # P2: a credit nobody explains (MARIA DA SILVA, R$ 1.234,56)
    credit_line: str  # the ambiguous credit's line_id

    def rerun(self, run_id: str) -> Any:
        return reconcile(self.data, settings=ReconcileSettings(), run_id=run_id)


def build_world(data: DataDir) -> ReviewWorld:
    world = World(data)
    world.snapshot(
        [
            intent(1, amount=5_000, name="JOAO PEREIRA", doc="***.111.222-**"),
            intent(2, amount=5_000, name="JOAO PEREIRA", doc="***.111.222-**"),
            intent(3, amount=8_800, client_reference="ORD-3", name="CARLA DIAS"),
        ],
        AS_OF,
    )
    credit = line(1, amount=5_000, name="JOAO PEREIRA", doc="***.111.222-**")
    stranger = line(9, amount=123_456, name="MARIA DA SILVA", doc=None)
    world.statement([credit, stranger], batch="b")
    result = reconcile(data, settings=ReconcileSettings(), run_id="20261102T190000000000Z-0001")
    rows = pq.read_table(result.exceptions_path).to_pylist()
    by = {r["category"]: r["break_id"] for r in rows}
    assert set(by) == {"ambiguous_match", "onramp_missing_credit", "unmatched_credit"}, by
    return ReviewWorld(
        data, by["ambiguous_match"], by["onramp_missing_credit"], by["unmatched_credit"],
        credit["line_id"],
    )  # fmt: skip


@pytest.fixture(scope="session")
def _rworld_template(tmp_path_factory: pytest.TempPathFactory) -> ReviewWorld:
    """The world reconciled once per test process: each test gets a copy (a data dir holds
    no absolute path, so a copy is the same world)."""
    return build_world(DataDir(tmp_path_factory.mktemp("review-template") / "data").ensure())


@pytest.fixture
def rworld(data_dir: DataDir, _rworld_template: ReviewWorld) -> ReviewWorld:
    shutil.copytree(_rworld_template.data.root, data_dir.root, dirs_exist_ok=True)
    return replace(_rworld_template, data=data_dir)


def add_parts(rworld: ReviewWorld) -> tuple[str, str]:
    """Two more credits nobody explains, R$ 55,00 and R$ 25,00 from JOSE ESTRANHO (for the
    onramp uid(3) of R$ 88,00, paid in parts and R$ 8,00 short), and a run that lists them;
    their line ids."""
    jose = {"name": "JOSE ESTRANHO", "doc": "***.999.000-**"}
    parts = [
        line(21, amount=5_500, at=T0 + timedelta(minutes=15), **jose),
        line(22, amount=2_500, at=T0 + timedelta(minutes=25), **jose),
    ]
    World(rworld.data).statement(parts, batch="parts")
    rworld.rerun("20261102T193000000000Z-0001")
    return parts[0]["line_id"], parts[1]["line_id"]


@functools.cache
def _users_file() -> bytes:
    """The users file `recon review adduser` writes for the four users, hashed once: an
    argon2id hash at its defaults costs a third of a CPU-second, four per call."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "users.toml"
        for name, password in PASSWORDS.items():
            auth.add_user(path, name, ROLES[name], password)
        return path.read_bytes()


def add_users(data: DataDir) -> None:
    path = auth.users_path(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_users_file())
    path.chmod(0o600)


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn in a thread on a free loopback port; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # as `recon review` serves it: X-Forwarded-* left to the app ([review] trust_proxy)
    config = uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


Open = Callable[..., AbstractContextManager[httpx.Client]]


@pytest.fixture
def open_app() -> Iterator[Callable[..., httpx.Client]]:
    """open_app(data, **settings) -> an httpx client of the app served on loopback."""
    from contextlib import ExitStack

    with ExitStack() as stack:

        def open_(data: DataDir, *, four_eyes: bool = False) -> httpx.Client:
            settings = ReviewSettings.load(data, four_eyes_p1=four_eyes)
            base = stack.enter_context(serve(create_app(data, settings=settings)))
            return stack.enter_context(httpx.Client(base_url=base, follow_redirects=False))

        yield open_


def csrf(client: httpx.Client, path: str = "/") -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text[:300]
    found = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert found, "no CSRF token on the page"
    return found.group(1)


def sign_in(client: httpx.Client, name: str) -> None:
    token = csrf(client, "/login")
    r = client.post("/login", data={"name": name, "password": PASSWORDS[name], "csrf_token": token})
    assert r.status_code == 303, r.text[:300]


def listed(html: str) -> list[str]:
    return re.findall(r'data-break-id="([0-9a-f]+)"', html)


__all__ = ["AS_OF", "ReviewWorld", "add_users", "build_world", "csrf", "listed", "serve",
           "sign_in", "uid"]  # fmt: skip
