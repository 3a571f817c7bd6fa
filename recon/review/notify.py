"""Notifications after `recon daily`: a Slack-compatible incoming webhook and e-mail (SMTP).

What is said: open breaks by priority (and how many are new), each P1 break with its reason,
the statements' coverage when the run reports it, and a link to the review app or the report.
Configured in recon.toml; secrets only from the environment:

    [notify]
    when = "always"                           # or "breaks": only when the run crosses the thresholds
    link = "https://recon.example/review"     # default: [review] base_url, else the report's path
    webhook_url_env = "RECON_NOTIFY_WEBHOOK_URL"   # the env var holding the webhook URL (a secret)

    [notify.email]
    host = "smtp.example.com"
    port = 587
    from = "recon@example.com"
    to = ["finance@example.com"]
    username = "recon"                        # optional
    password_env = "RECON_SMTP_PASSWORD"      # the env var holding the password
    starttls = true                           # default true; false only for a local relay
    cafile = "/etc/ssl/internal-ca.pem"       # optional: trust an internal CA too
    timeout_s = 10

The webhook is used when its environment variable is set; e-mail when `[notify.email]` names
a host and recipients. A failure to notify is logged (never with the secret) and returned in
the outcome; it never raises, so it never fails the reconciliation.
"""

from __future__ import annotations

import json
import logging
import os
import smtplib
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq

from recon import i18n
from recon.errors import ConfigError, redact
from recon.i18n import N_
from recon.money import format_brl
from recon.reconciliation.reasons import Renderer, row_reason
from recon.report.render import summary_tz
from recon.schemas import category_label

log = logging.getLogger(__name__)

__all__ = [
    "Message",
    "NotifySettings",
    "build_message",
    "notify_requests",
    "notify_run",
    "request_message",
]

DEFAULT_WEBHOOK_ENV = "RECON_NOTIFY_WEBHOOK_URL"
MAX_P1_LISTED = 20


@dataclass(frozen=True)
class EmailSettings:
    host: str
    port: int
    sender: str
    to: tuple[str, ...]
    username: str = ""
    password_env: str = "RECON_SMTP_PASSWORD"
    starttls: bool = True
    cafile: str = ""
    timeout_s: float = 10.0


@dataclass(frozen=True)
class NotifySettings:
    """`[notify]` of recon.toml, checked."""

    when: str = "always"
    link: str = ""
    webhook_url_env: str = DEFAULT_WEBHOOK_ENV
    email: EmailSettings | None = None
    timeout_s: float = 10.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> NotifySettings:
        section = config.get("notify", {})
        if not isinstance(section, Mapping):
            raise ConfigError("recon.toml: [notify] must be a table")
        unknown = sorted(set(section) - {"when", "link", "webhook_url_env", "email", "timeout_s"})
        if unknown:
            raise ConfigError(f"recon.toml [notify]: unknown setting(s) {', '.join(unknown)}")
        when = section.get("when", "always")
        if when not in ("always", "breaks"):
            raise ConfigError('recon.toml [notify] when must be "always" or "breaks"')
        link = section.get("link") or config.get("review", {}).get("base_url", "") or ""
        email = None
        mail = section.get("email")
        if mail is not None:
            if not isinstance(mail, Mapping):
                raise ConfigError("recon.toml: [notify.email] must be a table")
            to = mail.get("to", [])
            if isinstance(to, str):
                to = [to]
            if not mail.get("host") or not to or not mail.get("from"):
                raise ConfigError("recon.toml [notify.email] needs host, from and to")
            port = mail.get("port", 587)
            if not isinstance(port, int) or not 0 < port < 65536:
                raise ConfigError("recon.toml [notify.email] port must be a port number")
            email = EmailSettings(
                host=str(mail["host"]),
                port=port,
                sender=str(mail["from"]),
                to=tuple(str(t) for t in to),
                username=str(mail.get("username", "")),
                password_env=str(mail.get("password_env", "RECON_SMTP_PASSWORD")),
                starttls=bool(mail.get("starttls", True)),
                cafile=str(mail.get("cafile", "")),
                timeout_s=float(mail.get("timeout_s", 10)),
            )
        return cls(
            when=when,
            link=str(link),
            webhook_url_env=str(section.get("webhook_url_env", DEFAULT_WEBHOOK_ENV)),
            email=email,
            timeout_s=float(section.get("timeout_s", 10)),
        )


@dataclass(frozen=True)
class Message:
    """What a notification says: a subject, plain text, and the webhook's JSON body."""

    subject: str
    text: str
    payload: dict[str, Any]

    @classmethod
    def of(cls, subject: str, text: str) -> Message:
        """The message with its webhook body (a Slack-compatible header and section)."""
        payload = {
            "text": text,
            "blocks": [
                {"type": "header", "text": {"type": "plain_text", "text": subject[:150]}},
                {"type": "section", "text": {"type": "mrkdwn", "text": text[:2900]}},
            ],
        }
        return cls(subject, text, payload)


@dataclass
class Outcome:
    """What was sent and what failed (a failure never raises)."""

    sent: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: str = ""


def _p1_breaks(path: Path) -> list[dict[str, Any]]:
    """The run's open P1 breaks; a run stored before reason codes has only the sentence."""
    if not path.is_file():
        return []
    wanted = ["break_id", "category", "reason", "reason_code", "reason_params"]
    wanted += ["expected_cents", "actual_cents"]
    names = set(pq.read_schema(path).names)
    columns = [c for c in wanted if c in names]
    return pq.read_table(path, columns=columns, filters=[("priority", "=", "P1")]).to_pylist()


def build_message(
    run_dir: Path,
    *,
    link: str,
    exit_code: int,
    date: str = "",
    audit_head: str = "",
    lang: str | None = None,
) -> Message:
    """The message for a run, in the desk's language: counts by priority, the P1 breaks and
    reasons, coverage, link, and the audit trail's head (`<entries> <hash>`) when given."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    by_priority = summary.get("counts_by_priority", {})
    total = int(summary.get("breaks", 0))
    p1 = _p1_breaks(run_dir / "exceptions.parquet")
    reasons = Renderer(i18n.language(lang), summary_tz(summary))

    def say(message: str, **values: Any) -> str:
        return i18n.gettext(message, lang) % values

    when = say(N_(" for %(date)s"), date=date) if date else ""
    verdict = say(N_("needs attention")) if exit_code == 1 else say(N_("ok"))
    breaks = say(N_("%(n)s open break(s)"), n=total)
    subject = f"recon{when}: {breaks}, {by_priority.get('P1', 0)} P1 — {verdict}"
    lines = [
        say(
            N_("Reconciliation run %(run)s%(when)s (as of %(as_of)s): %(breaks)s, %(new)s new."),
            run=summary.get("run_id"),
            when=when,
            as_of=summary.get("as_of"),
            breaks=breaks,
            new=summary.get("new_breaks", 0),
        ),
        say(N_("By priority:"))
        + " "
        + ", ".join(f"{p} {by_priority.get(p, 0)}" for p in ("P1", "P2", "P3")),
    ]
    if not summary.get("checks_passed", True):
        failed = [k for k, v in summary.get("checks", {}).items() if v]
        lines.append(say(N_("Checks FAILED: %(checks)s"), checks=", ".join(failed)))
    coverage = summary.get("coverage_text")
    if coverage:
        lines.append(say(N_("Coverage: %(coverage)s"), coverage=coverage))
    if p1:
        lines += ["", say(N_("P1 breaks (%(n)s):"), n=len(p1))]
        for row in p1[:MAX_P1_LISTED]:
            money = row.get("expected_cents") or row.get("actual_cents")
            amount = f" ({format_brl(int(money))})" if money else ""
            reason = row_reason(row, reasons)
            lines.append(f"• {row['category']}{amount} [{row['break_id']}]: {reason}")
        if len(p1) > MAX_P1_LISTED:
            lines.append(say(N_("… and %(n)s more P1 break(s)"), n=len(p1) - MAX_P1_LISTED))
    if audit_head:
        count, _, head = audit_head.partition(" ")
        lines += [
            "",
            say(
                N_(
                    "Audit trail: %(count)s entries, head %(head)s "
                    "(check later: recon audit verify --expect-head %(head)s)"
                ),
                count=count,
                head=head,
            ),
        ]
    if link:
        lines += ["", say(N_("Review: %(link)s"), link=link)]
    return Message.of(subject, "\n".join(lines))


def notify_run(
    run_dir: Path,
    config: Mapping[str, Any],
    *,
    exit_code: int,
    report: Path | None = None,
    date: str = "",
    env: Mapping[str, str] | None = None,
    audit_head: str = "",
) -> Outcome:
    """Send the run's notification by every configured channel; never raises."""

    def compose(settings: NotifySettings) -> Message | str:
        if settings.when == "breaks" and exit_code != 1:
            return "no break crosses the thresholds"
        link = settings.link or (str(report) if report else "")
        return build_message(
            run_dir, link=link, exit_code=exit_code, date=date, audit_head=audit_head
        )

    return _send(config, env, compose)


def request_message(
    rows: Sequence[Mapping[str, Any]],
    pending: Mapping[str, Mapping[str, Any]],
    *,
    link: str,
    lang: str | None = None,
) -> Message:
    """The message that tells approvers P1 resolutions wait for them: each break with its
    category, money, reason, who asked and why, and a link to its page when the review
    app's address is known."""
    with i18n.override(lang):
        n = len(rows)
        subject = i18n.ngettext(
            "recon: %(n)s P1 resolution waits for your approval",
            "recon: %(n)s P1 resolutions wait for your approval", n, lang,
        ) % {"n": n}  # fmt: skip
        lines = [subject.removeprefix("recon: ") + ":"]
        for row in rows:
            bid = str(row["break_id"])
            asked = pending.get(bid, {})
            money = row.get("expected_cents") or row.get("actual_cents")
            amount = f" ({format_brl(abs(int(money)))})" if money else ""
            who = i18n.gettext("asked by %(who)s", lang) % {"who": asked.get("by", "?")}
            lines.append(
                f"• {category_label(str(row.get('category')), lang)}{amount}: {row.get('reason')}"
                f" — {who}: “{asked.get('note', '')}”"
            )
            if link:
                lines.append(f"  {link.rstrip('/')}/breaks/{bid}")
        if link:
            inbox = i18n.gettext("Everything awaiting approval: %(link)s", lang)
            lines += ["", inbox % {"link": f"{link.rstrip('/')}/?decision=pending"}]
    return Message.of(subject, "\n".join(lines))


def notify_requests(
    rows: Sequence[Mapping[str, Any]],
    pending: Mapping[str, Mapping[str, Any]],
    config: Mapping[str, Any],
    *,
    lang: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Outcome:
    """Tell the approvers, by every channel of `[notify]` (whatever its `when`), that P1
    resolutions wait for a second approver (four-eyes); never raises."""

    def compose(settings: NotifySettings) -> Message:
        review = config.get("review", {})
        link = (review.get("base_url") if isinstance(review, Mapping) else "") or settings.link
        return request_message(rows, pending, link=str(link or ""), lang=lang)

    return _send(config, env, compose)


def _send(
    config: Mapping[str, Any],
    env: Mapping[str, str] | None,
    compose: Callable[[NotifySettings], Message | str],
) -> Outcome:
    """The message `compose` makes from the settings (or the reason it skips), sent by every
    configured channel. Nothing raises: a notification never fails what it reports on."""
    outcome = Outcome()
    try:
        settings = NotifySettings.from_config(config)
        environ = os.environ if env is None else env
        webhook = environ.get(settings.webhook_url_env, "")
        if not webhook and settings.email is None:
            outcome.skipped = "no channel configured"
            return outcome
        message = compose(settings)
        if isinstance(message, str):
            outcome.skipped = message
            return outcome
    except Exception as exc:
        log.warning("notify: could not prepare the notification: %s", exc)
        outcome.failed["prepare"] = str(exc)
        return outcome
    return _deliver(settings, message, webhook, environ, outcome)


def _deliver(
    settings: NotifySettings,
    message: Message,
    webhook: str,
    environ: Mapping[str, str],
    outcome: Outcome,
) -> Outcome:
    """Send `message` by the webhook (when its URL is set) and e-mail (when configured)."""
    if webhook:
        try:
            _post_webhook(webhook, message, settings.timeout_s)
            outcome.sent.append("webhook")
        except Exception as exc:
            reason = redact(str(exc), webhook)
            log.warning("notify: the webhook failed: %s", reason)
            outcome.failed["webhook"] = reason
    if settings.email is not None:
        password = environ.get(settings.email.password_env, "")
        try:
            _send_email(settings.email, message, password)
            outcome.sent.append("email")
        except Exception as exc:
            reason = redact(str(exc), password)
            log.warning("notify: the e-mail failed: %s", reason)
            outcome.failed["email"] = reason
    return outcome


class _SecretsFilter(logging.Filter):
    """Masks the secrets of the calls under way (`_hiding`) in the HTTP libraries' records:
    httpx logs `HTTP Request: POST <url>` at INFO (shown with `-v`), and the webhook's URL
    is its secret. A logger's filter sees the records logged to that logger, so it sits on
    each of theirs."""

    LOGGERS = ("httpx", "httpcore", "httpcore.connection", "httpcore.http11",
               "httpcore.http2", "httpcore.proxy")  # fmt: skip

    def __init__(self) -> None:
        super().__init__()
        self.secrets: list[str] = []
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        with self.lock:
            secrets = list(self.secrets)
        if secrets:
            message = record.getMessage()
            masked = redact(message, *secrets)
            if masked != message:
                record.msg, record.args = masked, None
        return True


_FILTER = _SecretsFilter()
for _name in _SecretsFilter.LOGGERS:
    logging.getLogger(_name).addFilter(_FILTER)


@contextmanager
def _hiding(*secrets: str) -> Iterator[None]:
    """While the block runs, the HTTP libraries' log records never show `secrets`."""
    shown = [s for s in secrets if s]
    with _FILTER.lock:
        _FILTER.secrets.extend(shown)
    try:
        yield
    finally:
        with _FILTER.lock:
            for secret in shown:
                _FILTER.secrets.remove(secret)


def _post_webhook(url: str, message: Message, timeout: float) -> None:
    # as given, and as httpx writes it in its log (normalized, percent-encoded)
    with _hiding(url, str(httpx.URL(url))):
        response = httpx.post(url, json=message.payload, timeout=timeout)
    if response.status_code >= 300:
        raise RuntimeError(f"the webhook answered HTTP {response.status_code}")


def _send_email(cfg: EmailSettings, message: Message, password: str) -> None:
    # smtplib logs nothing (its debug output, off here, goes to stderr, not to logging)
    mail = EmailMessage()
    mail["Subject"] = message.subject
    mail["From"] = cfg.sender
    mail["To"] = ", ".join(cfg.to)
    mail.set_content(message.text)
    with smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout_s) as smtp:
        smtp.ehlo()
        if cfg.starttls:
            context = ssl.create_default_context()
            if cfg.cafile:
                context.load_verify_locations(cafile=cfg.cafile)
            smtp.starttls(context=context)
            smtp.ehlo()
        if cfg.username:
            smtp.login(cfg.username, password)
        smtp.send_message(mail)
