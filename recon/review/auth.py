"""Who may do what in `recon review`: users, passwords, signed session cookies, CSRF tokens.

Users live in a TOML file (default `<data>/review/users.toml`, or `[review] users_file` in
recon.toml, or `--users FILE`), written by `recon review adduser`:

    [users.ana]
    role = "approver"                       # viewer | reviewer | approver
    password_hash = "$argon2id$v=19$..."     # argon2id (argon2-cffi)

With no users the app runs without sign-in, on loopback only, every action done as the OS
user with the approver role. Sessions are signed cookies (HMAC-SHA256 over the payload) with
a secret from `$RECON_REVIEW_SECRET`, else `<data>/review/secret` (generated, mode 0600),
ended on the server too (`Sessions`: sign-out, a changed password, a removed user, idle and
absolute timeouts).
Every POST carries a CSRF token bound to the session (HMAC of the session id); a POST
without the right one is refused with 403 and changes nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from filelock import FileLock

from recon.config import DataDir
from recon.errors import ConfigError, UsageError
from recon.reconciliation.workflow import ROLES

__all__ = [
    "IDLE_SECONDS",
    "ROLES",
    "SESSION_SECONDS",
    "Sessions",
    "User",
    "add_user",
    "hash_password",
    "load_secret",
    "load_users",
    "sessions_path",
    "users_path",
    "verify_password",
]

SESSION_SECONDS = 12 * 3600  # absolute: [review] session_hours
IDLE_SECONDS = 30 * 60  # unused this long, a session ends: [review] idle_minutes
_USER = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")
_hasher = PasswordHasher()


@dataclass(frozen=True)
class User:
    """A person who may sign in."""

    name: str
    role: str
    password_hash: str = ""

    def can(self, need: str) -> bool:
        """True if the user's role is at least `need`."""
        return ROLES.index(self.role) >= ROLES.index(need)


def users_path(data: DataDir, configured: str | None = None) -> Path:
    """The users file: `configured`, else `<data>/review/users.toml`."""
    return Path(configured).expanduser() if configured else data.root / "review" / "users.toml"


def hash_password(password: str) -> str:
    """An argon2id hash of `password` (argon2-cffi's defaults)."""
    if len(password) < 8:
        raise UsageError("a password needs at least 8 characters")
    return _hasher.hash(password)


def verify_password(user: User, password: str) -> bool:
    """True when `password` is the user's; never raises for a wrong or broken hash."""
    try:
        return _hasher.verify(user.password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def load_users(path: Path) -> dict[str, User]:
    """The users of the file ({} when it does not exist); a malformed one is a ConfigError."""
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    users: dict[str, User] = {}
    table = doc.get("users", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [users] must be a table of users")
    for name, entry in table.items():
        if not _USER.match(name) or not isinstance(entry, dict):
            raise ConfigError(f"{path}: [users.{name}] is not a valid user entry")
        role, hashed = entry.get("role"), entry.get("password_hash")
        if role not in ROLES:
            raise ConfigError(f"{path}: users.{name}.role must be one of {', '.join(ROLES)}")
        if not isinstance(hashed, str) or not hashed.startswith("$argon2"):
            raise ConfigError(f"{path}: users.{name}.password_hash must be an argon2 hash")
        users[name] = User(name, role, hashed)
    return users


def add_user(path: Path, name: str, role: str, password: str) -> User:
    """Add or replace a user in the file (written atomically, mode 0600)."""
    if not _USER.match(name):
        raise UsageError(f"user name {name!r}: letters, digits and . _ @ - only (1-64)")
    if role not in ROLES:
        raise UsageError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    users = load_users(path)
    users[name] = User(name, role, hash_password(password))
    lines = ["# recon review users (recon review adduser); passwords are argon2id hashes", ""]
    for user in sorted(users.values(), key=lambda u: u.name):
        lines += [
            f'[users."{user.name}"]',
            f'role = "{user.role}"',
            f'password_hash = "{user.password_hash}"',
            "",
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".tmp-" + path.name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    os.replace(tmp, path)
    return users[name]


def load_secret(data: DataDir) -> bytes:
    """`$RECON_REVIEW_SECRET`, else `<data>/review/secret` (made once, mode 0600)."""
    env = os.environ.get("RECON_REVIEW_SECRET", "")
    if env:
        if len(env) < 16:
            raise ConfigError("RECON_REVIEW_SECRET must have at least 16 characters")
        return env.encode()
    path = data.root / "review" / "secret"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first
        else:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(32))
    secret = path.read_text(encoding="ascii").strip()
    if len(secret) < 32:
        raise ConfigError(f"{path}: the session secret is too short; delete it to make a new one")
    return secret.encode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Sessions:
    """Signed cookie sessions, ended on the server: `payload.signature`, payload = {sid,
    user, gen, pw, iat, seen}.

    A cookie is refused when its signature is wrong, when it is older than `max_seconds`
    (absolute) or unused for `idle_seconds` (`seen`, refreshed at most every TOUCH_SECONDS
    by a new cookie), and, for a signed-in user, when the user is gone, their password hash
    is not the one it was issued under (`pw`: a MAC of the hash, so a changed password ends
    it), or their generation in `<data>/review/sessions.json` moved past `gen` (sign-out
    ends every session of the user, in every app process on the data dir).
    """

    TOUCH_SECONDS = 60

    def __init__(
        self,
        secret: bytes,
        store: Path | None = None,
        *,
        idle_seconds: int = IDLE_SECONDS,
        max_seconds: int = SESSION_SECONDS,
        clock: Callable[[], float] = time.time,
    ):
        self._key = hashlib.sha256(b"recon-review-session|" + secret).digest()
        self._csrf_key = hashlib.sha256(b"recon-review-csrf|" + secret).digest()
        self._pw_key = hashlib.sha256(b"recon-review-password|" + secret).digest()
        self.store = store
        self.idle, self.max_age, self.clock = idle_seconds, max_seconds, clock
        self._gens: dict[str, int] = {}
        self._gens_sig: tuple[int, int] | None = None

    def new(self, user: User | None) -> dict[str, Any]:
        now = int(self.clock())
        session: dict[str, Any] = {"sid": secrets.token_urlsafe(18), "user": None,
                                   "iat": now, "seen": now}  # fmt: skip
        if user is not None:
            session.update(user=user.name, gen=self.generation(user.name), pw=self._pw(user))
        return session

    def _pw(self, user: User) -> str:
        return _b64(hmac.new(self._pw_key, user.password_hash.encode(), hashlib.sha256).digest())

    def dump(self, session: dict[str, Any]) -> str:
        body = _b64(json.dumps(session, sort_keys=True, separators=(",", ":")).encode())
        sig = _b64(hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest())
        return f"{body}.{sig}"

    def load(self, cookie: str | None) -> dict[str, Any] | None:
        """The session of a cookie, or None if it is missing, forged, expired or idle."""
        if not cookie or cookie.count(".") != 1 or len(cookie) > 4096:
            return None
        body, sig = cookie.split(".")
        want = _b64(hmac.new(self._key, body.encode("ascii", "replace"), hashlib.sha256).digest())
        # as bytes: compare_digest refuses non-ASCII text, and a cookie can hold anything
        if not hmac.compare_digest(sig.encode("utf-8", "replace"), want.encode("ascii")):
            return None
        try:
            session = json.loads(_unb64(body))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(session, dict) or not isinstance(session.get("sid"), str):
            return None
        now = self.clock()
        iat, seen = session.get("iat"), session.get("seen")
        if not isinstance(iat, int) or not isinstance(seen, int):
            return None
        if now - iat > self.max_age or now - seen > self.idle:
            return None
        return session

    def user_of(self, session: dict[str, Any], users: Mapping[str, User]) -> User | None:
        """The session's user while the session stands (see the class), else None."""
        name = session.get("user")
        user = users.get(name) if isinstance(name, str) else None
        if user is None or not hmac.compare_digest(str(session.get("pw")), self._pw(user)):
            return None
        return user if session.get("gen") == self.generation(user.name) else None

    def due(self, session: dict[str, Any]) -> bool:
        """Whether `seen` is old enough to send a refreshed cookie."""
        return self.clock() - int(session["seen"]) >= self.TOUCH_SECONDS

    def touched(self, session: dict[str, Any]) -> dict[str, Any]:
        return {**session, "seen": int(self.clock())}

    # ------------------------------------------------------------------ generations

    def generation(self, name: str) -> int:
        """The user's session generation (0 until a sign-out)."""
        if self.store is None:
            return self._gens.get(name, 0)
        try:
            st = self.store.stat()
            sig: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            sig = None
        if sig != self._gens_sig:
            self._gens = _read_generations(self.store) if sig else {}
            self._gens_sig = sig
        return self._gens.get(name, 0)

    def end_all(self, name: str) -> None:
        """End every session of `name` (every app process on the data dir sees it)."""
        if self.store is None:
            self._gens[name] = self._gens.get(name, 0) + 1
            return
        self.store.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.store) + ".lock", timeout=30):
            gens = _read_generations(self.store)
            gens[name] = gens.get(name, 0) + 1
            tmp = self.store.with_name(".tmp-" + self.store.name)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(gens, fh, sort_keys=True)
            os.replace(tmp, self.store)
        self._gens_sig = None

    def csrf_token(self, session: dict[str, Any]) -> str:
        return _b64(hmac.new(self._csrf_key, session["sid"].encode(), hashlib.sha256).digest())

    def csrf_ok(self, session: dict[str, Any] | None, token: str | None) -> bool:
        if session is None or not token:
            return False
        expected = self.csrf_token(session).encode("ascii")
        return hmac.compare_digest(expected, token.encode("utf-8", "replace"))


def sessions_path(data: DataDir) -> Path:
    """`<data>/review/sessions.json`: each user's session generation."""
    return data.root / "review" / "sessions.json"


def _read_generations(path: Path) -> dict[str, int]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not the review app's session generations: {exc}") from exc
    if not isinstance(doc, dict) or not all(isinstance(v, int) for v in doc.values()):
        raise ConfigError(f"{path}: not the review app's session generations")
    return doc
