"""`recon sandbox serve|export` (argument handling only; the work is in recon.sandbox)."""

from __future__ import annotations

import argparse
from typing import Any

from recon.errors import UsageError

#: recon.sandbox.world.collisions.PROFILES, named here so the CLI starts without the world
PROFILE_NAMES = ("default", "collisions")


def _world_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=7, help="world seed (default 7)")
    p.add_argument("--days", type=int, default=14, help="days of history (default 14)")
    p.add_argument(
        "--intents-per-day", type=int, default=200, help="mean intents per day (default 200)"
    )
    p.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default="default",
        help="world profile: 'collisions' plants shared amounts, unreferenced payments, "
        "bank-written names and keys, partial refunds, returned payouts, look-alike keys",
    )
    p.add_argument(
        "--end",
        default=None,
        metavar="ISO_DATETIME",
        help="end of the history, with offset (default 2026-11-01T12:00:00-03:00)",
    )


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add `recon sandbox serve` and `recon sandbox export`."""
    p = sub.add_parser(
        "sandbox",
        help="embedded v2 API emulator with a simulated world and its bank statements",
        description="Serve or export a deterministic simulated world (no credentials needed).",
    )
    inner = p.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND")
    inner.required = True

    s = inner.add_parser(
        "serve",
        parents=parents,
        help="serve the v2 API, GET /pix and POST /oauth/token on loopback",
        description=(
            "Build the world, then serve it. Prints `Serving v2 API at <url>`, one "
            "`API key <instance_id> <key>` line per instance and the API Pix client "
            "credentials, then serves until Ctrl-C."
        ),
    )
    s.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    s.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host that is not loopback (the sandbox's keys are printed, not secret)",
    )
    s.add_argument("--port", type=int, default=8700, help="port (default 8700; 0 = any free)")
    _world_args(s)
    s.add_argument("--latency-ms", type=int, default=0, help="added delay per /v2 request")
    s.add_argument("--rate-429", type=float, default=0.0, help="share of requests answered 429")
    s.add_argument("--retry-after", type=int, default=1, help="Retry-After seconds on 429")
    s.add_argument("--rate-5xx", type=float, default=0.0, help="share answered 500/502/503")
    s.add_argument("--limit-cap", type=int, default=None, help="cap the list page size")
    s.add_argument(
        "--drift-inserts", type=int, default=0, help="intents inserted on every list request"
    )
    s.add_argument(
        "--drift-status-changes",
        type=int,
        default=0,
        help="intents moved one status on every list request",
    )
    s.add_argument(
        "--export-dir", default=None, metavar="DIR", help="also write statements + ground truth"
    )
    s.set_defaults(func=run_serve)

    e = inner.add_parser(
        "export",
        parents=parents,
        help="write the world's statements in every format + the ground truth",
        description=(
            "Build the world and write pix.json, statement.ofx, extrato.cnab240, "
            "extrato_psp.csv, extrato_banco.csv, extrato_inter.csv, extrato_nubank.csv, "
            "expected_breaks.csv, expected_matches.csv, "
            "planted_faults.csv and README.md into --out, without serving."
        ),
    )
    _world_args(e)
    e.add_argument("--out", required=True, metavar="DIR", help="output folder")
    e.add_argument("--start", default=None, help="first day (YYYY-MM-DD, local) to export")
    e.add_argument("--until", default=None, help="day after the last one to export (YYYY-MM-DD)")
    e.set_defaults(func=run_export)


def _build(args: argparse.Namespace) -> Any:
    from datetime import datetime

    from recon.sandbox.compose import build_world

    end = None
    if args.end:
        try:
            end = datetime.fromisoformat(args.end)
        except ValueError as exc:
            raise UsageError(f"--end: not an ISO date-time: {args.end!r}") from exc
        if end.tzinfo is None:
            raise UsageError("--end needs a UTC offset, e.g. 2026-11-01T12:00:00-03:00")
    if args.days < 1 or args.intents_per_day < 1:
        raise UsageError("--days and --intents-per-day must be at least 1")
    return build_world(
        seed=args.seed,
        days=args.days,
        intents_per_day=args.intents_per_day,
        end=end,
        profile=args.profile,
    )


def _date(text: str | None, flag: str) -> Any:
    from datetime import date

    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: not a date (YYYY-MM-DD): {text!r}") from exc


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1), brackets allowed."""
    import ipaddress

    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    """Build the world and serve it until interrupted."""
    if not args.allow_remote and not is_loopback(args.host):
        raise UsageError(
            f"--host {args.host} is not a loopback address; the sandbox prints its keys and "
            "holds no real data, so it serves this machine only unless --allow-remote is given"
        )
    from recon.sandbox.serving import serve
    from recon.sandbox.wire_faults import WireFaults

    try:
        faults = WireFaults(
            latency_ms=args.latency_ms,
            rate_429=args.rate_429,
            retry_after=args.retry_after,
            rate_5xx=args.rate_5xx,
            limit_cap=args.limit_cap,
            drift_inserts_per_list=args.drift_inserts,
            drift_status_changes_per_list=args.drift_status_changes,
            seed=args.seed,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    _check_listen(args.host, args.port)  # before the world is built: fail fast
    sandbox = _build(args)
    if args.export_dir:
        from recon.sandbox.exports import export_statements

        export_statements(sandbox.bank, args.export_dir)
    serve(sandbox, host=args.host, port=args.port, faults=faults)
    return 0


def _check_listen(host: str, port: int) -> None:
    """A port that is taken (or a host that is not ours) is the caller's to fix: exit 2."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.bind(infos[0][4])
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} "
            "(another server may be using it: pick another --port, or 0 for a free one)"
        ) from None


def run_export(args: argparse.Namespace) -> int:
    """Build the world and write its statements and ground truth."""
    from recon.sandbox.exports import export_statements

    start, until = _date(args.start, "--start"), _date(args.until, "--until")
    sandbox = _build(args)
    written = export_statements(sandbox.bank, args.out, start, until)
    print(sandbox.summary())
    for path in written.values():
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0
