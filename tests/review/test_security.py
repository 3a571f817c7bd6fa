"""The review desk under attack: a forged audit entry, a foreign Host, a session that must
end, a sign-in flood, cookies over https."""

from __future__ import annotations

import json
import re
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest

from recon.errors import ConfigError
from recon.reconciliation import audit
from recon.reconciliation.decisions import load_decisions
from recon.review import auth
from recon.review.app import COOKIE, ReviewSettings, create_app
from recon.review.guard import LOOPBACK_HOSTS, Throttle, allowed_hosts

from .conftest import PASSWORDS, ReviewWorld, add_users, csrf, serve, sign_in


def _act(client, bid: str, action: str, **form: str):
    return client.post(f"/breaks/{bid}/{action}", data={**form, "csrf_token": csrf(client)})


def test_a_forged_request_cannot_let_one_approver_approve_alone(
    rworld: ReviewWorld, open_app
) -> None:
    """Someone who can write the data dir appends a `request_approval` in another
    reviewer's name (hash and head recomputed): the app refuses the log, so ana cannot
    approve her own resolution through it, and nothing is written."""
    add_users(rworld.data)
    ana = open_app(rworld.data, four_eyes=True)
    sign_in(ana, "ana")
    assert _act(ana, rworld.stranger, "comment", note="looking").status_code == 303
    last = audit.read_entries(rworld.data)[-1]
    forged = {"seq": last["seq"] + 1, "at": last["at"], "by": "rita",
              "action": "request_approval", "break_id": rworld.missing,
              "before": {"decision": "open"}, "after": {"decision": "awaiting approval"},
              "note": "paid", "prev": last["hash"]}  # fmt: skip
    forged["hash"] = audit.entry_hash(last["hash"], forged)
    with audit.audit_path(rworld.data).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(forged) + "\n")
    audit.head_path(rworld.data).write_text(f"{forged['seq']} {forged['hash']}\n")
    page = ana.get(f"/breaks/{rworld.missing}")
    assert page.status_code == 503 and "audit chain broken" in page.text
    assert ana.get("/", headers={"Accept": "application/json"}).status_code == 503
    token = csrf(ana, "/login")  # a page that does not read the audit log
    r = ana.post(f"/breaks/{rworld.missing}/approve", data={"csrf_token": token})
    assert r.status_code == 503 and "audit.jsonl:2: audit chain broken" in r.text
    assert rworld.missing not in load_decisions(rworld.data)
    assert len(audit.read_entries(rworld.data)) == 2


# -- the Host header (DNS rebinding) -------------------------------------------------------


@contextmanager
def _app(rworld: ReviewWorld, **settings: Any) -> Iterator[tuple[str, Any]]:
    """The app with `settings` over the world, served on loopback: (base URL, the app)."""
    chosen = replace(ReviewSettings.load(rworld.data), **settings)
    app = create_app(rworld.data, settings=chosen)
    with serve(app) as base:
        yield base, app


def test_a_foreign_host_is_refused_before_any_handler(rworld: ReviewWorld) -> None:
    with _app(rworld, base_url="https://recon.example/review") as (base, _unused):
        port = base.rsplit(":", 1)[1]
        with httpx.Client(base_url=base) as c:
            json_ = {"Accept": "application/json"}
            for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}",
                         "", f"localhost.:{port}"):  # fmt: skip
                r = c.get("/", headers={**json_, "Host": host})
                assert r.status_code == 400 and "breaks" not in r.text, host
                assert "set-cookie" not in r.headers  # no session, no CSRF token handed out
                assert c.post("/login", headers={"Host": host}).status_code == 400
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}",
                         f"[::1]:{port}", "recon.example", "recon.example:443"):  # fmt: skip
                r = c.get("/", headers={**json_, "Host": host})
                assert r.status_code == 200 and "breaks" in r.json(), host


def test_the_listening_address_is_a_trusted_host_but_a_wildcard_is_not() -> None:
    assert "10.0.0.5" in allowed_hosts("", ["10.0.0.5"])
    assert allowed_hosts("", ["0.0.0.0", "[::]"]) == frozenset(LOOPBACK_HOSTS)
    assert "recon.example" in allowed_hosts("https://Recon.Example:8443/x")


# -- sessions that end --------------------------------------------------------------------


def _with_cookie(base: str, cookie: str) -> int:
    """The status of GET / with exactly this session cookie (a copy of someone's)."""
    return httpx.get(base + "/", headers={"Cookie": f"{COOKIE}={cookie}"}).status_code


def test_sign_out_ends_every_session_of_the_user(rworld: ReviewWorld) -> None:
    add_users(rworld.data)
    with _app(rworld) as (base, _a), httpx.Client(base_url=base) as a:
        sign_in(a, "ana")
        copied = a.cookies[COOKIE]  # taken before sign-out
        with httpx.Client(base_url=base) as bia, httpx.Client(base_url=base) as second:
            sign_in(bia, "bia")
            sign_in(second, "ana")  # ana's other browser
            assert _with_cookie(base, copied) == 200
            assert a.post("/logout", data={"csrf_token": csrf(a)}).status_code == 303
            assert _with_cookie(base, copied) == 303  # to the sign-in page
            assert second.get("/").status_code == 303
            assert bia.get("/").status_code == 200  # another user's session stands
        with _app(rworld) as (base2, _b):  # a second app process on the data dir agrees
            assert _with_cookie(base2, copied) == 303


def test_a_changed_password_or_a_removed_user_ends_the_session(rworld: ReviewWorld) -> None:
    add_users(rworld.data)
    path = auth.users_path(rworld.data)
    with _app(rworld) as (base, _a), httpx.Client(base_url=base) as ana:
        sign_in(ana, "ana")
        with httpx.Client(base_url=base) as bia:
            sign_in(bia, "bia")
            auth.add_user(path, "ana", "approver", "a-new-password-1")
            assert ana.get("/").status_code == 303
            assert bia.get("/").status_code == 200
            text = path.read_text()
            start = text.index('[users."bia"]')
            end = text.index("[users.", start + 1) if "[users." in text[start + 1 :] else len(text)
            path.write_text(text[:start] + text[end:])
            assert bia.get("/").status_code == 303


def test_idle_and_absolute_timeouts(rworld: ReviewWorld) -> None:
    add_users(rworld.data)
    (rworld.data.root / "recon.toml").write_text("[review]\nidle_minutes = 10\nsession_hours = 1\n")
    settings = ReviewSettings.load(rworld.data)
    assert (settings.idle_minutes, settings.session_hours) == (10, 1)
    now = [time.time()]
    with _app(rworld) as (base, app), httpx.Client(base_url=base) as ana:
        sessions = app.state.review.sessions
        sessions.clock = lambda: now[0]
        sign_in(ana, "ana")
        for _ in range(6):  # used every 9 minutes: the idle timeout never comes...
            now[0] += 9 * 60
            assert ana.get("/").status_code == 200
        now[0] += 9 * 60  # ...but past the hour the session ends all the same
        assert ana.get("/").status_code == 303
        sign_in(ana, "ana")
        now[0] += 11 * 60  # unused for 11 minutes
        assert ana.get("/").status_code == 303


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("idle_minutes = 0", "idle_minutes"),
        ('session_hours = "12"', "session_hours"),
        ('trust_proxy = "yes"', "trust_proxy"),
    ],
)
def test_bad_session_settings(rworld: ReviewWorld, setting: str, message: str) -> None:
    (rworld.data.root / "recon.toml").write_text(f"[review]\n{setting}\n")
    with pytest.raises(ConfigError, match=message):
        ReviewSettings.load(rworld.data)


# -- sign-in throttled, argon2 off the event loop ----------------------------------------


def _login(client: httpx.Client, name: str, password: str) -> httpx.Response:
    return client.post("/login", data={"name": name, "password": password,
                                       "csrf_token": csrf(client, "/login")})  # fmt: skip


def test_sign_in_is_throttled_per_user_and_per_address(rworld: ReviewWorld) -> None:
    add_users(rworld.data)
    now = [1000.0]
    with _app(rworld) as (base, app), httpx.Client(base_url=base) as c:
        app.state.review.throttle = Throttle(free_user=3, free_address=6, clock=lambda: now[0])
        for _ in range(4):
            assert _login(c, "ana", "wrong-password").status_code == 400
        r = _login(c, "ana", PASSWORDS["ana"])  # even the right password waits
        assert r.status_code == 429 and r.headers["Retry-After"] == "1"
        assert "Muitas tentativas de entrada falharam" in r.text and "espere 1 segundos" in r.text
        now[0] += 1
        assert _login(c, "ana", "wrong-password").status_code == 400
        r = _login(c, "ANA", "wrong-password")  # names are counted whatever their case
        assert r.status_code == 429 and r.headers["Retry-After"] == "2"  # twice as long
        now[0] += 2
        assert _login(c, "ana", PASSWORDS["ana"]).status_code == 303
        # per address: other names from the same address, past its free tries
        c.cookies.clear()
        assert _login(c, "nobody", "x").status_code == 400  # the address's 6th failure
        r = _login(c, "zed", "x")
        assert r.status_code == 400
        r = _login(c, "bia", PASSWORDS["bia"])
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1


def test_a_signed_in_request_stays_fast_while_wrong_passwords_loop(rworld: ReviewWorld) -> None:
    """Four clients loop wrong passwords (throttle off, so each one runs argon2): a
    signed-in page still answers in well under one argon2 check, because the checks run in
    a worker thread, one at a time, and never on the event loop."""
    add_users(rworld.data)
    user = auth.User("x", "viewer", auth.hash_password("some-password"))
    started = time.perf_counter()
    auth.verify_password(user, "wrong")
    one_check = time.perf_counter() - started
    with _app(rworld) as (base, app), httpx.Client(base_url=base) as ana:
        app.state.review.throttle = Throttle(free_user=10**9, free_address=10**9)
        sign_in(ana, "ana")
        ana.get("/")  # warm: the queue is loaded
        stop = threading.Event()

        def flood() -> None:
            with httpx.Client(base_url=base, timeout=120) as c:
                token = csrf(c, "/login")
                for _ in range(200):  # bounded; stopped when the measuring is done
                    if stop.is_set():
                        return
                    c.post("/login", data={"name": "ana", "password": "wrong",
                                           "csrf_token": token})  # fmt: skip

        threads = [threading.Thread(target=flood, daemon=True) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(max(0.5, 2 * one_check))  # the flood under way
        times = []
        for _ in range(9):
            t0 = time.perf_counter()
            assert ana.get("/", headers={"Accept": "application/json"}).status_code == 200
            times.append(time.perf_counter() - t0)
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert statistics.median(times) < one_check / 2, (times, one_check)


# -- Secure cookies over https -----------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "headers", "secure"),
    [
        ({}, {}, False),
        ({"base_url": "https://recon.example/"}, {}, True),
        ({"trust_proxy": True}, {"X-Forwarded-Proto": "https"}, True),
        ({"trust_proxy": False}, {"X-Forwarded-Proto": "https"}, False),
        ({"trust_proxy": True}, {"X-Forwarded-Proto": "http"}, False),
    ],
)
def test_the_session_cookie_is_secure_over_https(
    rworld: ReviewWorld, settings: dict[str, Any], headers: dict[str, str], secure: bool
) -> None:
    add_users(rworld.data)
    with _app(rworld, **settings) as (base, _a):
        # by hand: a client keeps a Secure cookie from a plain-http server to itself
        first = httpx.get(base + "/login", headers=headers)
        cookie = first.headers["set-cookie"]
        token = re.search(r'name="csrf_token" value="([^"]+)"', first.text)
        assert token
        r = httpx.post(
            base + "/login",
            headers={**headers, "Cookie": cookie.split(";")[0]},
            data={"name": "ana", "password": PASSWORDS["ana"], "csrf_token": token.group(1)},
        )
        assert r.status_code == 303
        for sent in (cookie, r.headers["set-cookie"]):
            flags = [f.strip().lower() for f in sent.split(";")]
            assert "httponly" in flags and "samesite=strict" in flags
            assert ("secure" in flags) is secure
