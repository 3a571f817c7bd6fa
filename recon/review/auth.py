"""Who may do what in `recon review`: users, passwords, signed session cookies, CSRF tokens.

Users live in a TOML file (default `<data>/review/users.toml`, or `[review] users_file` in
recon.toml, or `--users FILE`), written by `recon review adduser`:

    [users.ana]
    role = "approver"                       # viewer | reviewer | approver
    password_hash = "$argon2id$v=19$..."     # argon2id (argon2-cffi)

With no users the app runs without sign-in, on loopback only, every action done as the OS
user with the approver role. Sessions are signed cookies (HMAC-SHA256 over the payload) with
a secret from `$RECON_REVIEW_SECRET`, else `<data>/review/secret` (generated, mode 0600).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from recon.config import DataDir
from recon.errors import ConfigError, UsageError
from recon.reconciliation.workflow import ROLES

__all__ = [
    "ROLES",
    "SESSION_SECONDS",
    "Sessions",
    "User",
    "add_user",
    "hash_password",
    "load_secret",
    "load_users",
    "users_path",
    "verify_password",
]

SESSION_SECONDS = 12 * 3600
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
    """Signed cookie sessions: `payload.signature`, payload = {sid, user, exp}."""

    def __init__(self, secret: bytes):
        self._key = hashlib.sha256(b"recon-review-session|" + secret).digest()
        self._csrf_key = hashlib.sha256(b"recon-review-csrf|" + secret).digest()

    def new(self, user: str | None) -> dict[str, Any]:
        return {
            "sid": secrets.token_urlsafe(18),
            "user": user,
            "exp": int(time.time()) + SESSION_SECONDS,
        }

    def dump(self, session: dict[str, Any]) -> str:
        body = _b64(json.dumps(session, sort_keys=True, separators=(",", ":")).encode())
        sig = _b64(hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest())
        return f"{body}.{sig}"

    def load(self, cookie: str | None) -> dict[str, Any] | None:
        """The session of a cookie, or None if it is missing, forged or expired."""
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
        if int(session.get("exp", 0)) < time.time():
            return None
        return session

    def csrf_token(self, session: dict[str, Any]) -> str:
        return _b64(hmac.new(self._csrf_key, session["sid"].encode(), hashlib.sha256).digest())

    def csrf_ok(self, session: dict[str, Any] | None, token: str | None) -> bool:
        if session is None or not token:
            return False
        expected = self.csrf_token(session).encode("ascii")
        return hmac.compare_digest(expected, token.encode("utf-8", "replace"))
