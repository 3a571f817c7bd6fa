"""`recon review` (the web app), `recon audit verify` and `recon audit init` (the audit
trail's keyed chain)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from recon.errors import UsageError


def _data(args: argparse.Namespace) -> Any:
    from recon.config import DataDir

    return DataDir.resolve(args.data)


def run_audit_verify(args: argparse.Namespace) -> int:
    from recon.reconciliation import audit

    dd = _data(args)
    result = audit.verify(dd, expect_head=args.expect_head)
    path = audit.audit_path(dd)
    if result.ok:
        print(result.describe(path))
        return 0
    raise UsageError(result.describe(path))


def run_audit_init(args: argparse.Namespace) -> int:
    from recon.reconciliation import audit

    dd = _data(args)
    made, sealed = audit.init(dd)
    if made is not None:
        print(f"audit key written to {made} (mode 0600): keep it, and out of the data directory")
    else:
        print("audit key found")
    if sealed:
        print(f"{sealed} entries written before the key sealed with a keyed entry")
    print(audit.verify(dd).describe(audit.audit_path(dd)))
    return 0


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    from recon.review.auth import ROLES

    r = sub.add_parser(
        "review",
        parents=parents,
        help="the break-review web app (queue, evidence, actions, sign-in)",
        description="Serve the review app over the data directory: the queue of open breaks, "
        "each break's evidence and history, and the actions on it (assign, comment, resolve, "
        "reopen, confirm a candidate). Loopback without sign-in unless users are configured.",
    )
    r.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    r.add_argument("--port", type=int, default=8710, help="port (default 8710; 0 = any free)")
    r.add_argument("--users", metavar="FILE", default=None, help="users file (default: "
                   "[review] users_file, else <data>/review/users.toml)")  # fmt: skip
    r.add_argument("--config", metavar="FILE", default=None, help="recon.toml to use")
    r.add_argument("--four-eyes", action="store_true",
                   help="resolving a P1 needs a second, different approver")  # fmt: skip
    r.set_defaults(func=run_review)
    verbs = r.add_subparsers(dest="review_command", metavar="VERB")
    a = verbs.add_parser("adduser", parents=parents, help="add or replace a user (argon2id hash)")
    a.add_argument("name", help="user name (letters, digits, . _ @ -)")
    a.add_argument("--role", choices=ROLES, required=True, help="viewer, reviewer or approver")
    a.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    a.add_argument("--users", metavar="FILE", default=None, help="users file")
    a.add_argument("--config", metavar="FILE", default=None, help="recon.toml to use")
    a.set_defaults(func=run_adduser)
    h = verbs.add_parser("hash-password", parents=parents, help="print an argon2id hash")
    h.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    h.set_defaults(func=run_hash_password)

    p = sub.add_parser(
        "audit",
        help="check the audit trail (data/audit.jsonl), or make its key",
        description="The audit trail of every action on a break, chained by a keyed MAC "
        "(HMAC-SHA256; the key from $RECON_AUDIT_KEY, else [audit] key_file in recon.toml, "
        "else ~/.config/recon/audit.key).",
    )
    verbs = p.add_subparsers(dest="audit_command", metavar="VERB")
    verbs.required = True
    v = verbs.add_parser(
        "verify",
        parents=parents,
        help="verify the chain: exit 0 when intact, 2 naming the line where it breaks",
    )
    v.add_argument("--expect-head", metavar="HASH", default=None,
                   help="a head the log held once (the daily record, a notification): "
                   "it must still be in the chain")  # fmt: skip
    v.set_defaults(func=run_audit_verify)
    i = verbs.add_parser(
        "init",
        parents=parents,
        help="make the audit key (0600, outside the data directory) and seal older entries",
    )
    i.set_defaults(func=run_audit_init)


# --------------------------------------------------------------------------- review


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_review(args: argparse.Namespace) -> int:
    import socket
    from dataclasses import replace

    from recon.errors import UsageError
    from recon.review.app import ReviewSettings, create_app

    dd = _data(args)
    if not (1 <= args.port <= 65535 or args.port == 0):
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}")
    settings = ReviewSettings.load(
        dd, users_file=args.users, config=args.config, four_eyes_p1=args.four_eyes or None
    )
    settings = replace(settings, listen=(args.host,))  # its own address is a trusted Host
    if not _is_loopback(args.host) and not settings.auth:
        raise UsageError(
            f"refusing to serve on {args.host} without sign-in: add users with "
            "`recon review adduser NAME --role ROLE` (or serve on 127.0.0.1)"
        )
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say TCP (no Nagle delay)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host.strip("[]"), args.port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    app = create_app(dd, settings=settings)
    if app.state.review.warning:
        print(f"recon: warning: {app.state.review.warning}", file=sys.stderr, flush=True)
    import uvicorn

    port = sock.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    mode = f"sign-in required ({len(settings.users)} users)" if settings.auth else "no sign-in"
    print(f"Serving review at http://{host}:{port}/ ({mode}; data {dd.root})", flush=True)
    # X-Forwarded-* are read only from a proxy trusted in recon.toml ([review] trust_proxy)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, proxy_headers=settings.trust_proxy
    )
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _password(args: argparse.Namespace) -> str:
    import getpass

    from recon.errors import UsageError

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    elif sys.stdin.isatty():
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            raise UsageError("the two passwords differ")
    else:
        raise UsageError("no terminal to ask for the password: use --password-stdin")
    return password


def run_adduser(args: argparse.Namespace) -> int:
    from recon.review.app import ReviewSettings
    from recon.review.auth import add_user

    dd = _data(args)
    path = ReviewSettings.load(dd, users_file=args.users, config=args.config).users_file
    user = add_user(path, args.name, args.role, _password(args))
    print(f"user {user.name} ({user.role}) saved in {path}")
    return 0


def run_hash_password(args: argparse.Namespace) -> int:
    from recon.review.auth import hash_password

    print(hash_password(_password(args)))
    return 0
