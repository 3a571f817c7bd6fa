"""The review web app: the queue of open breaks, a break's evidence, and the actions on it.

Starlette, server-rendered HTML (Jinja2), every asset shipped in this package. Routes:

    GET  /                         the queue (filters, search, sort and pages as query parameters;
                                   JSON with `Accept: application/json` or `format=json`)
    GET  /breaks/<break_id>        a break: evidence side by side, reason, history, actions
    POST /breaks/<break_id>/<action>   assign | comment | resolve | reopen | confirm | approve |
                                   pair | unpair
                                   (or POST /breaks/<break_id> with the form field `action`)
    GET  /export.xlsx, /export.csv the queue's current filter (every page) as a spreadsheet
    GET  /login, POST /login, POST /logout
    GET  /static/...               CSS and the few lines of JavaScript

Every POST needs the session's CSRF token (403 and nothing changed without it); bad input
re-renders the page with status 400 and a message, and changes nothing. Every change is
written through recon.reconcile (decisions, manual matches) and appended to the audit log.
"""

from __future__ import annotations

import getpass
import html
import io
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode
from zoneinfo import ZoneInfo

import anyio
import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from recon import i18n
from recon.config import DataDir, load_config, ui_language
from recon.errors import ConfigError, UsageError
from recon.i18n import N_
from recon.money import format_brl
from recon.reconciliation import ReconcileSettings, audit, workflow
from recon.reconciliation.reasons import Renderer, differences, row_reason
from recon.report.exports import REVIEW_COLUMNS, write_br_csv, write_xlsx
from recon.review import auth, guard, notify
from recon.review.queue import (
    COVERAGE,
    DECISIONS,
    MAX_PER_PAGE,
    SORTS,
    BreakView,
    FilterError,
    Filters,
    Page,
    Store,
)
from recon.schemas import CATEGORIES, category_label

log = logging.getLogger(__name__)

__all__ = ["ReviewSettings", "create_app"]

COOKIE = "recon_review"
MAX_FORM_BYTES = 64 * 1024
_BREAK_ID = re.compile(r"^[0-9a-f]{8,64}$")
MAX_BULK = 1000  # breaks one bulk action may touch
DONE = {
    "assigned": N_("Assignment saved."),
    "commented": N_("Comment added."),
    "resolved": N_("Resolved: the next run lists the break as decided."),
    "reopened": N_("Reopened: the next run lists the break as open again."),
    "confirmed": N_("Candidate confirmed: the next run matches it (rule manual)."),
    "paired": N_("Paired: the next run matches them (rule manual); a difference stays a break."),
    "unpaired": N_("Pair undone: the next run matches the line as the passes would."),
    "requested": N_("Resolution requested: a different approver must approve it (P1, four-eyes)."),
    "approved": N_("Approved and resolved."),
}
# what the export's decision column says of a break
DECISION_WORDS = {
    "open": N_("open, no decision yet"), "pending": N_("awaiting approval"),
    "resolved": N_("resolved"), "approved": N_("approved"), "paired": N_("paired"),
    "cleared by the data": N_("cleared by the data"),
}  # fmt: skip
# the words a page shows for the values of the queue's filters and the audit log's actions
LABELS = {
    "open": N_("open"), "pending": N_("awaiting approval"), "closed": N_("closed"),
    "all": N_("all"), "new": N_("new"), "persisting": N_("persisting"),
    "covered": N_("covered"), "not_covered": N_("not covered"), "unknown": N_("unknown"),
    "priority": N_("priority, then money at stake"), "age": N_("oldest first"),
    "-age": N_("newest first"), "amount": N_("most money at stake first"),
    "-amount": N_("least money at stake first"), "category": N_("category"),
    "first_seen": N_("first seen"), "assign": N_("assigned"), "comment": N_("commented"),
    "request_approval": N_("asked for approval"), "approve": N_("approved"),
    "resolve": N_("resolved"), "reopen": N_("reopened"), "confirm": N_("confirmed a candidate"),
    "pair": N_("paired by hand"), "unpair": N_("undid a pair"),
    "approved": N_("approved"), "resolved": N_("resolved"), "paired": N_("paired"),
    "cleared by the data": N_("cleared by the data"),
}  # fmt: skip


@dataclass(frozen=True)
class ReviewSettings:
    """`[review]` of recon.toml, and the users it points to."""

    users: dict[str, auth.User]
    users_file: Path
    four_eyes_p1: bool = False
    base_url: str = ""
    business_tz: str = "America/Sao_Paulo"  # [reconcile] business_tz: times are shown in it
    language: str = i18n.DEFAULT_LANGUAGE  # --lang, $RECON_LANG, else [ui] language
    trust_proxy: bool = False  # X-Forwarded-Proto / -For from a proxy in front
    idle_minutes: int = auth.IDLE_SECONDS // 60
    session_hours: int = auth.SESSION_SECONDS // 3600
    listen: tuple[str, ...] = ()  # the addresses served on (trusted as Host names too)
    notify: Mapping[str, Any] = field(default_factory=dict)  # recon.toml: [notify], [review]

    @property
    def auth(self) -> bool:
        return bool(self.users)

    @classmethod
    def load(
        cls,
        data: DataDir,
        *,
        users_file: str | None = None,
        config: str | None = None,
        four_eyes_p1: bool | None = None,
    ) -> ReviewSettings:
        toml = load_config(config, data)
        section = toml.get("review", {})
        if not isinstance(section, dict):
            raise ConfigError("recon.toml: [review] must be a table")
        known = {"users_file", "four_eyes_p1", "base_url", "trust_proxy", "idle_minutes",
                 "session_hours"}  # fmt: skip
        unknown = sorted(set(section) - known)
        if unknown:
            raise ConfigError(f"recon.toml [review]: unknown setting(s) {', '.join(unknown)}")
        four = section.get("four_eyes_p1", False) if four_eyes_p1 is None else four_eyes_p1
        for name, value in (("four_eyes_p1", four), ("trust_proxy", section.get("trust_proxy"))):
            if value is not None and not isinstance(value, bool):
                raise ConfigError(f"recon.toml [review] {name} must be true or false")
        limits = {"idle_minutes": (1, 24 * 60), "session_hours": (1, 24 * 30)}
        for name, (low, high) in limits.items():
            value = section.get(name, getattr(cls, name))
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(
                    f"recon.toml [review] {name} must be a whole number from {low} to {high}"
                )
        path = auth.users_path(data, users_file or section.get("users_file"))
        tz = ReconcileSettings.load(data, config).business_tz
        return cls(
            auth.load_users(path), path, four, str(section.get("base_url", "")), tz,
            ui_language(toml),
            trust_proxy=bool(section.get("trust_proxy", False)),
            idle_minutes=section.get("idle_minutes", cls.idle_minutes),
            session_hours=section.get("session_hours", cls.session_hours),
            notify={k: toml[k] for k in ("notify", "review") if k in toml},
        )  # fmt: skip


@dataclass(frozen=True)
class Actor(workflow.Actor):
    """Who is acting: a signed-in user, or the OS user when the app runs without sign-in."""

    signed_in: bool = False


class Form(dict[str, str]):
    """A posted form: the last value of each field, and every value of the repeatable ones."""

    def __init__(self, parsed: dict[str, list[str]]):
        super().__init__({k: v[-1] for k, v in parsed.items()})
        self.lists = parsed

    def getlist(self, key: str) -> list[str]:
        return list(self.lists.get(key, []))


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "local"


# ---------------------------------------------------------------------------- formatting


def _brl(cents: Any) -> str:
    if cents is None:
        return "—"
    value = int(cents)
    return ("−" if value < 0 else "") + format_brl(abs(value))


def _when(value: Any, tz: ZoneInfo, lang: str | None = None) -> str:
    """A time in the business time zone as `lang` writes it (the page names the zone once)."""
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return i18n.format_datetime(value, tz, lang)
    return str(value)


def _short(value: Any, keep: int = 10) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= keep + 1 else text[:keep] + "…"


def _environment(tz: ZoneInfo, lang: str) -> Environment:
    env = Environment(
        loader=PackageLoader("recon.review", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    i18n.install_jinja(env, lang)
    env.globals["time_zone"] = str(tz)
    env.filters.update(
        brl=_brl, when=lambda v: _when(v, tz, lang), short=_short,
        category=lambda name: category_label(str(name or ""), lang),
        label=lambda value: i18n.gettext(LABELS[value], lang) if value in LABELS else value,
        differences=lambda text: differences(text, lang),
    )  # fmt: skip
    env.globals["urlencode"] = urlencode
    # a break's reason from its code and parameters, in the page's language: on the break
    # page with ids to copy, in a queue row (inside its link) with short ids alone
    renderers = {c: Renderer(lang, str(tz), c) for c in ("page", "link")}
    env.filters["reason"] = lambda row, context="page": row_reason(row, renderers[context])
    return env


# ---------------------------------------------------------------------------- the app


class ReviewApp:
    """Request handlers over one data directory."""

    def __init__(self, data: DataDir, settings: ReviewSettings):
        self.data = data
        self.settings = settings
        self.store = Store(data, settings.business_tz)
        self.sessions = auth.Sessions(
            auth.load_secret(data), auth.sessions_path(data),
            idle_seconds=settings.idle_minutes * 60, max_seconds=settings.session_hours * 3600,
        )  # fmt: skip
        self.throttle = guard.Throttle()
        self._hashing: anyio.CapacityLimiter | None = None
        self.env = _environment(ZoneInfo(settings.business_tz), settings.language)
        self.local_user = _os_user()
        self.policy = workflow.Policy(settings.four_eyes_p1)
        approvers = (
            sum(u.role == "approver" for u in settings.users.values()) if settings.auth else 1
        )
        self.warning = workflow.four_eyes_warning(self.policy, approvers)
        if self.warning:
            log.warning("review: %s", self.warning)
        self._users = (settings.users, _signature(settings.users_file))

    # ------------------------------------------------------------------ sessions

    def _session(self, request: Request) -> tuple[dict[str, Any], bool]:
        """(session, is_new): the cookie's session while it stands, or a fresh anonymous
        one (whose cookie goes out with the response, as does a refreshed one's)."""
        session = self.sessions.load(request.cookies.get(COOKIE))
        signed = session is not None and session.get("user") is not None
        if signed and self.sessions.user_of(session or {}, self.users()) is None:
            session = None  # signed out, password changed, or user removed
        if session is None:
            fresh = self.sessions.new(None)
            setattr(request.state, guard.COOKIE_STATE, self.sessions.dump(fresh))
            return fresh, True
        if self.sessions.due(session):
            session = self.sessions.touched(session)
            setattr(request.state, guard.COOKIE_STATE, self.sessions.dump(session))
        return session, False

    def users(self) -> dict[str, auth.User]:
        """The users file as it is now (re-read when it changes: a removed user is out)."""
        users, sig = self._users
        now = _signature(self.settings.users_file)
        if now != sig:
            users = auth.load_users(self.settings.users_file)
            self._users = (users, now)
        return users

    def _actor(self, session: dict[str, Any]) -> Actor | None:
        if not self.settings.auth:
            return Actor(self.local_user, "approver", False)
        user = self.sessions.user_of(session, self.users())
        return Actor(user.name, user.role, True) if user else None

    def _render(
        self,
        template: str,
        session: dict[str, Any],
        new: bool,
        status: int = 200,
        **context: Any,
    ) -> HTMLResponse:
        actor = context.pop("actor", None) or self._actor(session)
        html = self.env.get_template(template).render(
            actor=actor,
            auth=self.settings.auth,
            csrf=self.sessions.csrf_token(session),
            **context,
        )
        response = HTMLResponse(html, status_code=status)
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "form-action 'self'; frame-ancestors 'none'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    def _login_redirect(self, request: Request) -> RedirectResponse:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse("/login?" + urlencode({"next": target}), status_code=303)

    async def _form(self, request: Request) -> Form | None:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                return None
        try:
            parsed = parse_qs(
                body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_BULK + 20
            )
        except (UnicodeDecodeError, ValueError):
            return None
        return Form(parsed)

    def gettext(self, message: str) -> str:
        """`message` in the app's language."""
        return i18n.gettext(message, self.settings.language)

    def _forbidden(self) -> HTMLResponse:
        message = self.gettext(
            "The form's security token is missing or wrong; nothing was changed. "
            "Reload the page and try again."
        )
        return HTMLResponse(
            f'<!doctype html><html lang="{i18n.html_lang(self.settings.language)}">'
            f"<title>403</title><p>{html.escape(message)}</p>",
            status_code=403,
        )

    # ------------------------------------------------------------------ pages

    async def queue(self, request: Request) -> Response:
        session, new = self._session(request)
        actor = self._actor(session)
        if actor is None:
            return self._login_redirect(request)
        try:
            filters = Filters.parse(request.query_params)
        except FilterError as exc:
            if _wants_json(request):
                return JSONResponse({"error": str(exc)}, status_code=400)
            filters = Filters()
            page = self.store.queue(filters)
            return self._render(
                "queue.html", session, new, 400, page=page, error=str(exc), actor=actor,
                done="", **self._choices(actor),
            )  # fmt: skip
        page = self.store.queue(filters)
        if _wants_json(request):
            return JSONResponse(_page_json(page))
        return self._render(
            "queue.html", session, new, page=page, error="", actor=actor,
            done=self._bulk_done(request.query_params), **self._choices(actor),
        )  # fmt: skip

    def _bulk_done(self, params: Any) -> str:
        """The flash after a bulk action (?bulk=<action>&n=<done>&asked=<requests>)."""
        n, asked = _count(params.get("n")), _count(params.get("asked"))
        if params.get("bulk") not in ("assign", "resolve") or n + asked == 0:
            return ""
        lang = self.settings.language
        parts = []
        if n:
            word = (
                i18n.ngettext("%(n)s break assigned.", "%(n)s breaks assigned.", n, lang)
                if params.get("bulk") == "assign"
                else i18n.ngettext("%(n)s break resolved.", "%(n)s breaks resolved.", n, lang)
            )
            parts.append(word % {"n": n})
        if asked:
            parts.append(
                i18n.ngettext(
                    "%(n)s P1 resolution waits for a second approver (four-eyes).",
                    "%(n)s P1 resolutions wait for a second approver (four-eyes).",
                    asked, lang,
                ) % {"n": asked}
            )  # fmt: skip
        return " ".join(parts)

    def _choices(self, actor: Actor | None = None) -> dict[str, Any]:
        people = sorted(set(self.settings.users) | set(self.store.assignees()))
        return {
            "categories": list(CATEGORIES),
            "decisions": DECISIONS,
            "coverages": COVERAGE,
            "sorts": list(SORTS),
            "people": people,
            "inbox": self.store.awaiting(actor) if actor is not None else [],
        }

    async def break_page(self, request: Request) -> Response:
        session, new = self._session(request)
        actor = self._actor(session)
        if actor is None:
            return self._login_redirect(request)
        break_id = request.path_params["break_id"]
        view = self.store.find(break_id) if _BREAK_ID.match(break_id) else None
        if view is None:
            return self._render("missing.html", session, new, 404, break_id=break_id, actor=actor)
        key = request.query_params.get("done", "")
        done = self.gettext(DONE[key]) if key in DONE else ""
        filters = _filters_of(request.query_params)
        return self._page(session, new, view, actor, done=done, filters=filters)

    def _page(
        self,
        session: dict[str, Any],
        new: bool,
        view: BreakView,
        actor: Actor,
        *,
        status: int = 200,
        error: str = "",
        done: str = "",
        form: dict[str, str] | None = None,
        filters: Filters | None = None,
    ) -> HTMLResponse:
        filters = filters or Filters()
        paired = self.store.paired(view)
        return self._render(
            "break.html",
            session,
            new,
            status,
            actor=actor,
            view=view,
            b=view.row,
            error=error,
            done=done,
            form=form or {},
            four_eyes=self.settings.four_eyes_p1 and view.row.get("priority") == "P1",
            pair_options=self.store.pair_options(view),
            paired=paired,
            paired_rest=category_label(paired.rest_category, self.settings.language)
            if paired is not None and paired.rest_category
            else "",
            people=sorted(set(self.settings.users) | set(self.store.assignees())),
            nav=self.store.neighbours(filters, _bid(view)),
            qs=urlencode(filters.query()),
        )

    # ------------------------------------------------------------------ exports

    async def export(self, request: Request) -> Response:
        """The queue's current filter (every page) as XLSX or a Brazilian CSV."""
        session, _new = self._session(request)
        if self._actor(session) is None:
            return self._login_redirect(request)
        fmt = request.path_params["fmt"]
        if fmt not in EXPORTS:
            return HTMLResponse("<!doctype html><p>Exports are .xlsx or .csv.</p>", 404)
        try:
            filters = Filters.parse(request.query_params)
        except FilterError as exc:
            return HTMLResponse(f"<!doctype html><p>{html.escape(str(exc))}</p>", 400)
        page = self.store.queue(replace(filters, page=1, per_page=MAX_PER_PAGE))
        writer, media = EXPORTS[fmt]
        body = io.BytesIO()
        rows = [self._export_row(r) for r in page.rows]
        writer(
            rows, body, columns=REVIEW_COLUMNS, lang=self.settings.language,
            tz=self.settings.business_tz,
        )  # fmt: skip
        name = f"breaks-{page.run_id or 'none'}.{fmt}"
        return Response(
            body.getvalue(),
            media_type=media,
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def _export_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """A queue row with the team's work in words: the counterparty, the decision (open,
        awaiting approval, or what closed it), the approval state, and when it was decided."""
        closed = row.get("closed") or {}
        how = closed.get("how") or ("pending" if row.get("pending") else "open")
        approval = ""
        if row.get("pending"):
            asked = self.store.state().pending.get(str(row["break_id"]), {})
            approval = self.gettext("awaiting approval (asked by %(who)s)") % {
                "who": asked.get("by", "?")
            }
        elif how == "approved":
            approval = self.gettext("approved by %(who)s") % {"who": closed.get("by", "")}
        by = closed.get("by") if how not in ("approved", "open", "pending") else ""
        decision = self.gettext(DECISION_WORDS[how]) + (
            " " + self.gettext("by %(who)s") % {"who": by} if by else ""
        )
        return row | {
            "counterparty": row.get("line_name") or row.get("intent_name") or "",
            "created_at": row.get("intent_created_at"), "booked_at": row.get("line_booked_at"),
            "decision": decision, "approval": approval, "decided_at": closed.get("at") or None,
        }  # fmt: skip

    # ------------------------------------------------------------------ sign-in

    async def login_page(self, request: Request) -> Response:
        session, new = self._session(request)
        if not self.settings.auth:
            return RedirectResponse("/", status_code=303)
        nxt = _safe_next(request.query_params.get("next", "/"))
        return self._render("login.html", session, new, error="", next=nxt, name="")

    async def login(self, request: Request) -> Response:
        session, new = self._session(request)
        form = await self._form(request)
        if form is None or not self.sessions.csrf_ok(
            None if new else session, form.get("csrf_token")
        ):
            return self._forbidden()
        if not self.settings.auth:
            return RedirectResponse("/", status_code=303)
        name, password = form.get("name", "").strip(), form.get("password", "")
        nxt = _safe_next(form.get("next", "/"))
        address = guard.client_address(request, trust_proxy=self.settings.trust_proxy)
        wait = self.throttle.wait(name, address)
        if wait:
            response = self._render(
                "login.html", session, new, 429, next=nxt, name=name, actor=None,
                error=self.gettext(
                    "Too many failed sign-ins for this user or from this address: "
                    "wait %(seconds)s seconds, then try again."
                ) % {"seconds": wait},
            )  # fmt: skip
            response.headers["Retry-After"] = str(wait)
            return response
        user = self.users().get(name)
        if not await self._password_ok(user, password):
            self.throttle.failed(name, address)
            return self._render(
                "login.html", session, new, 400, error=self.gettext("Wrong user name or password."),
                next=nxt, name=name, actor=None,
            )  # fmt: skip
        assert user is not None  # _password_ok is False without a user
        self.throttle.succeeded(name)
        fresh = self.sessions.new(user)  # a new session id at sign-in
        setattr(request.state, guard.COOKIE_STATE, self.sessions.dump(fresh))
        return RedirectResponse(nxt, status_code=303)

    async def _password_ok(self, user: auth.User | None, password: str) -> bool:
        """argon2 in a worker thread, one at a time: a flood of sign-ins neither blocks the
        event loop nor takes every core. An unknown user costs the same as a known one."""
        if self._hashing is None:
            self._hashing = anyio.CapacityLimiter(1)
        check = user or auth.User("x", "viewer", _DUMMY_HASH)
        ok = await anyio.to_thread.run_sync(
            auth.verify_password, check, password, limiter=self._hashing
        )
        return ok and user is not None

    async def logout(self, request: Request) -> Response:
        session, new = self._session(request)
        form = await self._form(request)
        if form is None or new or not self.sessions.csrf_ok(session, form.get("csrf_token")):
            return self._forbidden()
        actor = self._actor(session)
        if actor is not None and actor.signed_in:
            self.sessions.end_all(actor.name)  # every session of the user, everywhere
        setattr(request.state, guard.COOKIE_STATE, "")
        return RedirectResponse("/login" if self.settings.auth else "/", status_code=303)

    # ------------------------------------------------------------------ actions

    async def _posted(
        self, request: Request
    ) -> tuple[dict[str, Any], bool, Form, Actor] | Response:
        """(session, is_new, form, actor) of a POST that may act, else the response that
        refuses it: the CSRF token first (without it nothing changes, whoever sends it),
        then a signed-in person."""
        session, new = self._session(request)
        form = await self._form(request)
        if form is None or new or not self.sessions.csrf_ok(session, form.get("csrf_token")):
            return self._forbidden()
        actor = self._actor(session)
        if actor is None:
            return self._login_redirect(request)
        return session, new, form, actor

    async def action(self, request: Request) -> Response:
        posted = await self._posted(request)
        if isinstance(posted, Response):
            return posted
        session, new, form, actor = posted
        break_id = request.path_params["break_id"]
        # /breaks/<id>/<action>, or /breaks/<id> with the action in the form
        name = request.path_params.get("action") or form.get("action", "")
        filters = _filters_of(request.query_params)  # the queue's filter the page came from
        view = self.store.find(break_id) if _BREAK_ID.match(break_id) else None
        if view is None:
            return self._render("missing.html", session, new, 404, break_id=break_id, actor=actor)
        handler = _ACTIONS.get(name)
        if handler is None:
            return self._page(
                session, new, view, actor, status=404, error=f"unknown action {name!r}",
                filters=filters,
            )  # fmt: skip
        try:
            workflow.permit(actor, name)
            done = handler(self, view, actor, form)
        except workflow.NotAllowed as exc:
            return self._page(
                session, new, view, actor, status=403, error=_sentence(exc), form=form,
                filters=filters,
            )  # fmt: skip
        except UsageError as exc:
            return self._page(
                session, new, view, actor, status=400, error=str(exc), form=form, filters=filters
            )
        target = f"/breaks/{break_id}?" + urlencode({"done": done, **filters.query()})
        return RedirectResponse(target, status_code=303, background=self._announce(done, [view]))

    async def bulk(self, request: Request) -> Response:
        """One action on every break ticked in the queue (`break_id` repeated): assign (to
        `assignee`, or to the person acting with `action=assign-me`) or resolve with one note;
        a P1 under four-eyes becomes a request. Back to the same filter with the counts."""
        posted = await self._posted(request)
        if isinstance(posted, Response):
            return posted
        session, new, form, actor = posted
        filters = _filters_of(request.query_params)
        name = form.get("action", "")
        if name == "assign-me":
            name, form["assignee"] = "assign", actor.name
        ids = list(dict.fromkeys(form.getlist("break_id")))
        problem = ""
        if name not in ("assign", "resolve"):
            problem = self.gettext("Choose what to do with the ticked breaks: assign or resolve.")
        elif not ids:
            problem = self.gettext("Tick at least one break first.")
        elif len(ids) > MAX_BULK:
            problem = self.gettext("At most %(n)s breaks at once.") % {"n": MAX_BULK}
        results = [] if problem else self._bulk_each(name, ids, actor, form)
        failed = [f"{_short(bid, 8)}: {why}" for bid, why in results if why not in DONE]
        if problem or failed:
            page = self.store.queue(filters)
            done = self._bulk_counts(name, results)
            return self._render(
                "queue.html", session, new, 400, page=page, actor=actor,
                error=problem or "; ".join(failed), done=done, **self._choices(actor),
            )  # fmt: skip
        asked = sum(why == "requested" for _bid_, why in results)
        query = {"bulk": name, "n": str(len(results) - asked), "asked": str(asked)}
        views = [v for v in (self.store.find(bid) for bid, why in results if why == "requested")
                 if v is not None]  # fmt: skip
        return RedirectResponse(
            "/?" + urlencode({**filters.query(), **query}), status_code=303,
            background=self._announce("requested" if views else "", views),
        )  # fmt: skip

    def _bulk_each(
        self, name: str, ids: list[str], actor: Actor, form: Form
    ) -> list[tuple[str, str]]:
        """(break id, the DONE key or why it failed) for each break, in order."""
        handler = _ACTIONS[name]
        out = []
        for bid in ids:
            view = self.store.find(bid) if _BREAK_ID.match(bid) else None
            if view is None:
                out.append((bid, self.gettext("no such break")))
                continue
            try:
                workflow.permit(actor, name)
                out.append((bid, handler(self, view, actor, form)))
            except (workflow.NotAllowed, UsageError) as exc:
                out.append((bid, str(exc)))
        return out

    def _bulk_counts(self, name: str, results: list[tuple[str, str]]) -> str:
        done = [why for _bid_, why in results if why in DONE]
        asked = done.count("requested")
        params = {"bulk": name, "n": str(len(done) - asked), "asked": str(asked)}
        return self._bulk_done(params)

    def _announce(self, done: str, views: list[BreakView]) -> BackgroundTask | None:
        """After the response: tell the approvers a P1 resolution waits for them
        ([notify] of recon.toml, the channels `recon daily` uses)."""
        if done != "requested" or not views:
            return None
        rows = [v.row for v in views]
        state = self.store.state()
        return BackgroundTask(
            notify.notify_requests, rows, state.pending, self.settings.notify,
            lang=self.settings.language,
        )  # fmt: skip

    # each returns the DONE key, or raises UsageError (nothing written); the rules, and the
    # checks against the state under the data dir's lock, are recon.reconciliation.workflow's

    def _assign(self, view: BreakView, actor: Actor, form: Form) -> str:
        who = form.get("assignee", "").strip()
        if who and not re.fullmatch(r"[A-Za-z0-9._@-]{1,64}", who):
            raise UsageError(f"assignee {who!r} is not a user name")
        if who and self.settings.auth and who not in self.settings.users:
            raise UsageError(f"{who!r} is not a user of this review app")
        workflow.assign(_bid(view), who, form.get("note", ""), data=self.data, actor=actor)
        return "assigned"

    def _comment(self, view: BreakView, actor: Actor, form: Form) -> str:
        workflow.comment(_bid(view), form.get("note", ""), data=self.data, actor=actor)
        return "commented"

    def _resolve(self, view: BreakView, actor: Actor, form: Form) -> str:
        outcome = workflow.resolve(
            _bid(view), form.get("note", ""), data=self.data, actor=actor, policy=self.policy
        )
        return "requested" if isinstance(outcome, workflow.Request) else "resolved"

    def _approve(self, view: BreakView, actor: Actor, form: Form) -> str:
        workflow.approve(_bid(view), form.get("note", ""), data=self.data, actor=actor)
        return "approved"

    def _reopen(self, view: BreakView, actor: Actor, form: Form) -> str:
        workflow.reopen(_bid(view), form.get("note", ""), data=self.data, actor=actor)
        return "reopened"

    def _confirm(self, view: BreakView, actor: Actor, form: Form) -> str:
        workflow.confirm(
            _bid(view), form.get("intent_id", ""), form.get("note", ""),
            data=self.data, actor=actor,
        )  # fmt: skip
        return "confirmed"

    def _pair(self, view: BreakView, actor: Actor, form: Form) -> str:
        workflow.pair_break(
            _bid(view), line_ids=form.getlist("line_id"), intent_id=form.get("intent_id", ""),
            note=form.get("note", ""), data=self.data, actor=actor,
        )  # fmt: skip
        return "paired"

    def _unpair(self, view: BreakView, actor: Actor, form: Form) -> str:
        """Undo the whole pair the line belongs to (every line of a payment in parts)."""
        workflow.unpair(form.get("line_id", ""), form.get("note", ""), data=self.data, actor=actor)
        return "unpaired"


EXPORTS: dict[str, tuple[Callable[..., None], str]] = {
    "xlsx": (
        write_xlsx,
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    "csv": (write_br_csv, "text/csv; charset=utf-8"),
}

_DUMMY_HASH = auth.hash_password("dummy-password-for-timing")


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _wants_json(request: Request) -> bool:
    return request.query_params.get("format") == "json" or request.headers.get(
        "accept", ""
    ).startswith("application/json")


def _page_json(page: Page) -> dict[str, Any]:
    """The queue page as JSON: the same rows as the HTML, amounts in cents."""
    keep = ("break_id", "run_id", "category", "priority", "intent_id", "line_id",
            "end_to_end_id", "expected_cents", "actual_cents", "delta_cents", "reason", "reason_code",
            "reason_params",
            "first_seen_run", "age_days", "state", "coverage", "assignee", "comments",
            "pending", "manual", "closed")  # fmt: skip
    rename = {"money_at_stake": "at_stake_cents"}
    rows = []
    for row in page.rows:
        out = {k: _plain(row.get(k)) for k in keep}
        out |= {new: _plain(row.get(old)) for old, new in rename.items()}
        out["decided"] = row.get("decided") is not None
        rows.append(out)
    return {"run_id": page.run_id, "total": page.total, "page": page.page,
            "pages": page.pages, "per_page": page.filters.per_page,
            "at_stake_cents_total": page.at_stake_total, "breaks": rows}  # fmt: skip


def _plain(value: Any) -> Any:
    """numpy scalars as Python ones (JSON)."""
    return value.item() if hasattr(value, "item") else value


def _bid(view: BreakView) -> str:
    return str(view.row["break_id"])


def _filters_of(params: Any) -> Filters:
    """The queue filter in `params` (a bad one reads as the default queue)."""
    try:
        return Filters.parse(params)
    except FilterError:
        return Filters()


def _count(value: str | None) -> int:
    return int(value) if value and value.isdigit() and len(value) < 8 else 0


def _safe_next(target: str) -> str:
    """Only a local path: never an open redirect to another site."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _sentence(exc: Exception) -> str:
    text = str(exc)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


_ACTIONS: dict[str, Callable[[ReviewApp, BreakView, Actor, Form], str]] = {
    "assign": ReviewApp._assign,
    "comment": ReviewApp._comment,
    "resolve": ReviewApp._resolve,
    "reopen": ReviewApp._reopen,
    "confirm": ReviewApp._confirm,
    "approve": ReviewApp._approve,
    "pair": ReviewApp._pair,
    "unpair": ReviewApp._unpair,
}


def create_app(
    data: str | Path | DataDir | None = None,
    *,
    settings: ReviewSettings | None = None,
) -> Starlette:
    """The review app over a data directory (settings from recon.toml's `[review]`)."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    app_settings = settings or ReviewSettings.load(dd)
    review = ReviewApp(dd, app_settings)

    def handler(
        fn: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        return fn

    static = Path(__file__).parent / "static"
    routes = [
        Route("/", handler(review.queue), methods=["GET"]),
        Route("/breaks/{break_id}", handler(review.break_page), methods=["GET"]),
        Route("/breaks/{break_id}", handler(review.action), methods=["POST"]),
        Route("/breaks/{break_id}/{action}", handler(review.action), methods=["POST"]),
        Route("/bulk", handler(review.bulk), methods=["POST"]),
        Route("/export.{fmt}", handler(review.export), methods=["GET"]),
        Route("/login", handler(review.login_page), methods=["GET"]),
        Route("/login", handler(review.login), methods=["POST"]),
        Route("/logout", handler(review.logout), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=static), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={audit.AuditBroken: _audit_broken})
    app.state.review = review
    s = app_settings

    def https(scope: Any) -> bool:
        return guard.is_https(scope, base_url=s.base_url, trust_proxy=s.trust_proxy)

    app.add_middleware(
        guard.Guard, hosts=guard.allowed_hosts(s.base_url, s.listen), https=https,
        cookie=COOKIE, max_age=s.session_hours * 3600,
    )  # fmt: skip
    return app


async def _audit_broken(request: Request, exc: Exception) -> Response:
    """The audit log does not verify: nothing is shown from it or done on it (503)."""
    message = f"recon: error: {exc}. The review app will not act on a broken audit trail."
    log.error("%s", message)
    if _wants_json(request):
        return JSONResponse({"error": message}, status_code=503)
    return HTMLResponse(
        f"<!doctype html><title>Audit trail broken</title><p>{html.escape(message)}</p>", 503
    )
