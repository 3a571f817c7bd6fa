"""Notifications: a local webhook receiver and a local SMTP server with STARTTLS (aiosmtpd)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import logging
import socket
import ssl
import threading
from collections.abc import Iterator
from email import message_from_bytes, policy
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from recon.config import DataDir
from recon.errors import ConfigError
from recon.reconciliation import audit
from recon.review.notify import NotifySettings, build_message, notify_run

from .conftest import ReviewWorld

SECRET_URL_PART = "T000/B000/very-secret-token"


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[Any], list[int]]]:
    """A loopback HTTP server that records JSON bodies; status[0] is what it answers."""
    received: list[Any] = []
    status = [200]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"path": self.path, "json": json.loads(body),
                             "type": self.headers["Content-Type"]})  # fmt: skip
            self.send_response(status[0])
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/services/{SECRET_URL_PART}", received, status
    finally:
        server.shutdown()
        server.server_close()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(
            (envelope, message_from_bytes(envelope.content, policy=policy.default))
        )
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def smtp(tmp_path: Path) -> Iterator[tuple[int, _Inbox, Path]]:
    """aiosmtpd on loopback, STARTTLS required, login required (user recon / pw s3cret)."""
    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    inbox = _Inbox()

    def check(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            b"recon",
            b"s3cret",
        )
        return AuthResult(success=ok, handled=False)

    port = _free_port()
    controller = Controller(
        inbox, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
        authenticator=check, auth_require_tls=True,
    )  # fmt: skip
    controller.start()
    try:
        yield port, inbox, cert
    finally:
        controller.stop()


def _config(port: int, cafile: Path, **email: Any) -> dict[str, Any]:
    mail = {"host": "127.0.0.1", "port": port, "from": "recon@example.com",
            "to": ["fin@example.com", "ops@example.com"], "username": "recon",
            "password_env": "TEST_SMTP_PASSWORD", "cafile": str(cafile), "timeout_s": 5}  # fmt: skip
    mail.update(email)
    return {"notify": {"link": "http://127.0.0.1:8710/?priority=P1", "email": mail,
                       "webhook_url_env": "TEST_WEBHOOK_URL"}}  # fmt: skip


def _run(rworld: ReviewWorld) -> Path:
    from recon.catalog import latest_run

    run = latest_run(rworld.data)
    assert run is not None
    return run


def test_the_message_says_counts_p1_reasons_and_the_link(rworld: ReviewWorld) -> None:
    message = build_message(
        _run(rworld), link="http://x/review", exit_code=1, date="2026-11-02", lang="en"
    )
    assert message.subject == "recon for 2026-11-02: 3 open break(s), 1 P1 — needs attention"
    assert "By priority: P1 1, P2 1, P3 1" in message.text
    assert "onramp_missing_credit (R$ 88,00)" in message.text
    assert (
        f"[{rworld.missing}]" in message.text
        and "no PIX credit in the statements matches it" in message.text
    )
    assert message.text.endswith("Review: http://x/review")
    assert message.payload["text"] == message.text


def test_the_message_speaks_the_desk_language_reasons_included(rworld: ReviewWorld) -> None:
    """The desk reads Portuguese by default: the frame and each P1 reason (rendered from its
    reason code, whatever language the run was made in) are in pt-BR."""
    message = build_message(_run(rworld), link="http://x/review", exit_code=1, date="2026-11-02")
    assert (
        message.subject == "recon de 2026-11-02: 3 divergência(s) em aberto, 1 P1 — requer atenção"
    )
    assert "Por prioridade: P1 1, P2 1, P3 1" in message.text
    assert (
        f"[{rworld.missing}]" in message.text
        and "no PIX credit in the statements matches it" not in message.text
    )
    assert "nenhum crédito PIX" in message.text
    assert message.text.endswith("Revisar: http://x/review")
    english = build_message(_run(rworld), link="", exit_code=0, lang="en")
    assert english.subject == "recon: 3 open break(s), 1 P1 — ok"
    assert (
        "no PIX credit in the statements matches it" in english.text
        and "Review:" not in english.text
    )


def test_webhook_and_email_over_starttls(rworld: ReviewWorld, webhook, smtp) -> None:
    url, received, _status = webhook
    port, inbox, cafile = smtp
    env = {"TEST_WEBHOOK_URL": url, "TEST_SMTP_PASSWORD": "s3cret"}
    outcome = notify_run(_run(rworld), _config(port, cafile), exit_code=1, env=env)
    assert outcome.sent == ["webhook", "email"] and outcome.failed == {}
    [hook] = received
    assert hook["type"] == "application/json"
    assert "P1 1, P2 1, P3 1" in hook["json"]["text"]
    assert hook["json"]["blocks"][0]["type"] == "header"
    [(envelope, mail)] = inbox.messages
    assert envelope.rcpt_tos == ["fin@example.com", "ops@example.com"]
    assert mail["Subject"].startswith("recon: 3 divergência(s) em aberto, 1 P1")
    body = mail.get_payload(decode=True).decode()
    assert rworld.missing in body and "Revisar: http://127.0.0.1:8710/?priority=P1" in body


def test_failures_are_logged_never_raised_and_never_show_secrets(
    rworld: ReviewWorld, webhook, smtp, caplog: pytest.LogCaptureFixture
) -> None:
    url, _received, status = webhook
    port, inbox, cafile = smtp
    status[0] = 500
    env = {"TEST_WEBHOOK_URL": url, "TEST_SMTP_PASSWORD": "wrong-password"}
    outcome = notify_run(_run(rworld), _config(port, cafile), exit_code=1, env=env)
    assert outcome.sent == []
    assert "HTTP 500" in outcome.failed["webhook"]
    assert "535" in outcome.failed["email"] or "uthentication" in outcome.failed["email"]
    assert inbox.messages == []
    assert SECRET_URL_PART not in caplog.text and "wrong-password" not in caplog.text
    # an untrusted certificate: STARTTLS fails, nothing is sent
    (cafile.parent / "other").mkdir()
    other, _ = _self_signed(cafile.parent / "other")
    env["TEST_SMTP_PASSWORD"] = "s3cret"
    outcome = notify_run(_run(rworld), _config(port, other), exit_code=1, env=env)
    assert "certificate" in outcome.failed["email"].lower() and inbox.messages == []
    # nobody listening
    outcome = notify_run(_run(rworld), _config(_free_port(), cafile), exit_code=1,
                         env={"TEST_WEBHOOK_URL": f"http://127.0.0.1:{_free_port()}/x"})  # fmt: skip
    assert set(outcome.failed) == {"webhook", "email"}


def test_when_breaks_and_no_channel(rworld: ReviewWorld, webhook) -> None:
    url, received, _ = webhook
    cfg = {"notify": {"when": "breaks", "webhook_url_env": "W"}}
    assert notify_run(_run(rworld), cfg, exit_code=0, env={"W": url}).skipped
    assert notify_run(_run(rworld), cfg, exit_code=1, env={"W": url}).sent == ["webhook"]
    assert notify_run(_run(rworld), {}, exit_code=1, env={}).skipped == "no channel configured"
    assert len(received) == 1


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"notify": {"when": "sometimes"}}, "when must be"),
        ({"notify": {"colour": "red"}}, "unknown setting"),
        ({"notify": {"email": {"host": "h"}}}, "needs host, from and to"),
        ({"notify": {"email": {"host": "h", "from": "a", "to": "b", "port": 0}}}, "port"),
    ],
)
def test_bad_notify_settings(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        NotifySettings.from_config(config)
    # ...and through notify_run they are logged, never raised
    outcome = notify_run(Path("/nonexistent"), config, exit_code=1, env={})
    assert message.split()[0] in outcome.failed["prepare"]


def test_recon_daily_notifies_and_a_failure_does_not_fail_it(
    data_dir: DataDir, webhook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daily job with fake steps: the webhook hears of the run; a dead one changes nothing."""
    from cli.test_commands import use_fake_steps

    from recon.ops.daily import run_daily
    from recon.testing.daily import FakeSteps

    url, received, status = webhook
    (data_dir.root / "recon.toml").write_text('[notify]\nwebhook_url_env = "TEST_HOOK"\n')
    monkeypatch.setenv("TEST_HOOK", url)
    use_fake_steps(monkeypatch, FakeSteps())
    result = run_daily(
        data_dir, date=dt.date(2026, 11, 20), now=dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
    )
    assert len(received) == 1 and result.run_id in received[0]["json"]["text"]
    status[0] = 503
    again = run_daily(data_dir, date=dt.date(2026, 11, 20), force=True,
                      now=dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC))  # fmt: skip
    assert again.exit_code == result.exit_code and len(received) == 2


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG], ids=["-v", "-vv"])
def test_no_secret_in_any_log_record_at_v_and_vv(
    rworld: ReviewWorld, webhook, smtp, caplog: pytest.LogCaptureFixture, level: int
) -> None:
    """With every logger at -v (INFO) or -vv (DEBUG), a sent webhook and e-mail leave
    neither the webhook's URL nor the SMTP password in any record (httpx logs the URL)."""
    url, received, _status = webhook
    port, inbox, cafile = smtp
    caplog.set_level(level)
    for name in ("httpx", "httpcore", "smtplib"):
        caplog.set_level(level, logger=name)
    env = {"TEST_WEBHOOK_URL": url, "TEST_SMTP_PASSWORD": "s3cret"}
    outcome = notify_run(_run(rworld), _config(port, cafile), exit_code=1, env=env)
    assert outcome.sent == ["webhook", "email"] and len(received) == 1 and inbox.messages
    assert any(r.name == "httpx" for r in caplog.records)  # httpx did log the request
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert SECRET_URL_PART not in text and "s3cret" not in text


def test_the_daily_job_anchors_the_audit_head_and_logs_no_secret_at_vv(
    data_dir: DataDir, webhook, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from cli.test_commands import use_fake_steps

    from recon.ops.daily import run_daily
    from recon.testing.daily import FakeSteps

    url, received, _status = webhook
    (data_dir.root / "recon.toml").write_text('[notify]\nwebhook_url_env = "TEST_HOOK"\n')
    monkeypatch.setenv("TEST_HOOK", url)
    use_fake_steps(monkeypatch, FakeSteps())
    caplog.set_level(logging.DEBUG)
    with audit.locked(data_dir) as log:
        log.append(by="ana", action="comment", break_id="ab" * 8, note="seen")
    head = audit.verify(data_dir).head
    run_daily(
        data_dir, date=dt.date(2026, 11, 20), now=dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
    )
    assert len(received) == 1 and any(r.name == "httpx" for r in caplog.records)
    assert SECRET_URL_PART not in "\n".join(r.getMessage() for r in caplog.records)
    # the audit trail's head leaves the data dir: in the day's record and the message
    record = json.loads((data_dir.root / "daily" / "2026-11-20.json").read_text())
    assert record["audit_head"] == f"1 {head}"
    assert f"recon audit verify --expect-head {head}" in received[0]["json"]["text"]


def _wait_for(check: Any, seconds: float = 15) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "nothing arrived"
        time.sleep(0.05)


def _request_config(data: DataDir, port: int, cafile: Path, four_eyes: bool = True) -> None:
    data.config_path.write_text(
        f"[review]\nfour_eyes_p1 = {'true' if four_eyes else 'false'}\n\n"
        '[notify]\nlink = "http://desk.example/review/"\nwebhook_url_env = "TEST_WEBHOOK_URL"\n\n'
        f'[notify.email]\nhost = "127.0.0.1"\nport = {port}\nfrom = "recon@example.com"\n'
        'to = ["approvers@example.com"]\nusername = "recon"\n'
        f'password_env = "TEST_SMTP_PASSWORD"\ncafile = "{cafile}"\ntimeout_s = 5\n',
        encoding="utf-8",
    )


def _channels(
    rworld: ReviewWorld, webhook: Any, smtp: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], _Inbox]:
    """recon.toml with four-eyes and both channels, their secrets in the environment:
    (the webhook's bodies, the SMTP inbox)."""
    url, received, _status = webhook
    port, inbox, cafile = smtp
    monkeypatch.setenv("TEST_WEBHOOK_URL", url)
    monkeypatch.setenv("TEST_SMTP_PASSWORD", "s3cret")
    _request_config(rworld.data, port, cafile)
    return received, inbox


def test_a_p1_resolution_request_tells_the_approvers(
    rworld: ReviewWorld, webhook, smtp, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .conftest import add_users, csrf, sign_in

    received, inbox = _channels(rworld, webhook, smtp, monkeypatch)
    add_users(rworld.data)
    rita = open_app(rworld.data, four_eyes=True)
    sign_in(rita, "rita")
    # a P2 resolved at once tells nobody
    token = csrf(rita, f"/breaks/{rworld.stranger}")
    r = rita.post(f"/breaks/{rworld.stranger}/resolve", data={"note": "ok", "csrf_token": token})
    assert r.status_code == 303 and received == [] and inbox.messages == []
    token = csrf(rita, f"/breaks/{rworld.missing}")
    r = rita.post(
        f"/breaks/{rworld.missing}/resolve",
        data={"note": "devolvido ao cliente", "csrf_token": token},
    )
    assert r.headers["location"].startswith(f"/breaks/{rworld.missing}?done=requested")
    _wait_for(lambda: received and inbox.messages)
    [hook] = received
    text = hook["json"]["text"]
    assert "1 resolução P1 aguarda sua aprovação" in text
    assert "Crédito PIX não encontrado (R$ 88,00)" in text
    assert "pedido por rita: “devolvido ao cliente”" in text
    assert f"http://desk.example/review/breaks/{rworld.missing}" in text
    assert "http://desk.example/review/?decision=pending" in text
    [(envelope, mail)] = inbox.messages
    assert envelope.rcpt_tos == ["approvers@example.com"]
    from email.header import decode_header, make_header

    subject = str(make_header(decode_header(mail["Subject"])))
    assert subject == "recon: 1 resolução P1 aguarda sua aprovação"
    assert rworld.missing in mail.get_payload(decode=True).decode()


def test_recon_resolve_of_a_p1_under_four_eyes_tells_the_approvers(
    rworld: ReviewWorld, webhook, smtp, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.cli import main

    received, inbox = _channels(rworld, webhook, smtp, monkeypatch)
    port, cafile = smtp[0], smtp[2]
    root = str(rworld.data.root)
    args = ["resolve", rworld.missing, "--note", "pago", "--by", "rita", "--data", root]
    assert main(args) == 0
    [hook] = received
    assert "pedido por rita: “pago”" in hook["json"]["text"]
    assert len(inbox.messages) == 1
    # without four-eyes a resolution is a resolution: nobody is asked
    _request_config(rworld.data, port, cafile, four_eyes=False)
    assert main(["resolve", rworld.stranger, "--note", "ok", "--data", root]) == 0
    assert len(received) == 1 and len(inbox.messages) == 1
