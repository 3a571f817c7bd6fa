"""`recon reconcile`, `recon resolve`, `recon pair` and `recon unpair`: argument handling only.

The work is done by the library (recon.reconcile, its decisions and alert thresholds);
these functions parse arguments, call it, print a summary and return the exit code
(docs/contracts.md; the codes themselves live in recon.errors).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recon.cli.console import (
    add_engine_argument,
    console,
    data_dir,
    parse_timestamp,
    print_line,
    print_verdict,
    progress,
)

if TYPE_CHECKING:
    from recon.reconciliation.workflow import Pairing

__all__ = ["register"]


def run_reconcile(args: argparse.Namespace) -> int:
    from recon.cli.tables import run_line, run_table
    from recon.config import load_config
    from recon.reconciliation import reconcile
    from recon.reconciliation.alerts import Thresholds, assess_run
    from recon.reconciliation.settings import settings_kw

    dd = data_dir(args)
    thresholds = Thresholds.from_config(load_config(args.config, dd))
    with progress("reconciling"):
        result = reconcile(dd, as_of=args.as_of, engine=args.engine, **settings_kw(args.config, dd))
    verdict = assess_run(Path(result.path), thresholds)
    out = console()
    out.print(run_table(Path(result.path), title=f"run {result.run_id}"))
    out.print(run_line(Path(result.path)))
    print_line(out, f"run written to {result.path}")
    print_verdict(verdict.exit_code, verdict.reasons)
    return verdict.exit_code


def run_resolve(args: argparse.Namespace) -> int:
    from recon.errors import UsageError

    # Check the arguments before importing the engine, so a typo fails fast.
    if args.decisions is not None and (args.break_id or args.note):
        raise UsageError("give either BREAK_ID --note TEXT or --decisions FILE.csv, not both")
    if args.decisions is None and not args.break_id:
        raise UsageError("give a BREAK_ID (with --note TEXT) or --decisions FILE.csv")
    if args.decisions is None and not (args.note or "").strip():
        raise UsageError("--note TEXT is required: say why the break is resolved")
    if args.reopen and args.decisions is not None:
        raise UsageError("--reopen takes one BREAK_ID, not --decisions")

    from recon.reconciliation import decisions, workflow

    dd = data_dir(args)
    if args.decisions is not None:
        rows = decisions.read_decisions_csv(Path(args.decisions))
        for n, (break_id, note, decided_by) in enumerate(rows, start=1):
            try:
                workflow.resolve(break_id, note, data=dd, decided_by=decided_by or args.by or None)
            except UsageError as exc:
                raise UsageError(
                    f"{args.decisions}: row {n + 1}: {exc} ({n - 1} decision(s) recorded before it)"
                ) from exc
        print(f"recorded {len(rows)} decision(s) from {args.decisions}")
        return 0
    if args.reopen:
        decision = workflow.reopen(args.break_id, args.note, data=dd, decided_by=args.by)
        print(f"break {decision.break_id} reopened by {decision.decided_by}; the next run lists it")
        return 0
    outcome = workflow.resolve(args.break_id, args.note, data=dd, decided_by=args.by)
    if isinstance(outcome, workflow.Request):
        _announce_request(dd, outcome, getattr(args, "config", None))
        print(
            f"break {outcome.break_id} is P1 and four-eyes is on: resolution requested by "
            f"{outcome.requested_by}; it stays open until a different approver approves it"
        )
        return 0
    print(
        f"break {outcome.break_id} resolved by {outcome.decided_by}; "
        "later runs list it as decided, not open"
    )
    return 0


def _announce_request(dd: Any, request: Any, config: str | None) -> None:
    """Tell the approvers ([notify] of recon.toml) that a P1 resolution waits for them."""
    from recon.config import load_config
    from recon.reconciliation import workflow
    from recon.review.notify import notify_requests

    row = workflow.latest_break(dd, request.break_id) or {"break_id": request.break_id}
    pending = {request.break_id: {"by": request.requested_by, "note": request.note}}
    notify_requests([row], pending, load_config(config, dd))


def run_pair(args: argparse.Namespace) -> int:
    from recon.reconciliation import workflow

    done = workflow.pair(args.intent, args.line, args.note or "", data=data_dir(args), by=args.by)
    print(pair_summary(done))
    return 0


def pair_summary(done: Pairing) -> str:
    """What a pair recorded, in one line: the lines, their sum against the intent's amount,
    and the difference that stays a break of its kind."""
    from recon.money import format_brl

    diff = done.difference_cents
    rest = (
        "the amounts agree"
        if diff == 0
        else f"difference {format_brl(abs(diff))} {'more' if diff > 0 else 'less'}, which "
        f"stays a break ({done.rest_category})"
    )
    what = "devolução" if done.refund else "payment"
    return (
        f"intent {done.intent_id} paired with {', '.join(done.line_ids)} by "
        f"{done.matches[0].confirmed_by}: {what} lines sum {format_brl(done.paired_cents)} "
        f"for {format_brl(done.expected_cents)} expected; {rest}; the next run matches "
        "each line (rule manual)"
    )


def run_unpair(args: argparse.Namespace) -> int:
    from recon.reconciliation import workflow

    undone = workflow.unpair(args.line, args.note or "", data=data_dir(args), by=args.by)
    print(
        f"{', '.join(u.line_id for u in undone)} unpaired from intent {undone[0].intent_id} by "
        f"{undone[0].confirmed_by}; the next run matches them as the passes would"
    )
    return 0


def _register_pairs(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "pair",
        parents=parents,
        help="pair statement line(s) by hand with an intent that lacks its money",
        description="Pair statement lines nobody explains with an intent whose money no pass "
        "matched (a missing credit, payout or devolução). Several lines are one payment in "
        "parts: their sum is compared with the intent, and a difference stays a break of its "
        "kind (say why in the note). Kept in data/manual_matches.csv and the audit log; the "
        "next run matches each line with rule manual. Undo with `recon unpair`.",
    )
    p.add_argument("--intent", metavar="ID", required=True, help="the intent")
    p.add_argument("--line", metavar="ID", action="append", required=True,
                   help="the statement line (repeatable)")  # fmt: skip
    p.add_argument("--note", metavar="TEXT", required=True, help="why they belong together")
    p.add_argument("--by", metavar="NAME", default=None, help="who (default: the OS user)")
    p.set_defaults(func=run_pair)
    p = sub.add_parser(
        "unpair",
        parents=parents,
        help="undo a pair made by hand (or a confirmed candidate)",
        description="Undo the manual match of a statement line, and of every line paired "
        "with it in the same pair: the next run matches them as the passes would.",
    )
    p.add_argument("--line", metavar="ID", required=True, help="the statement line")
    p.add_argument("--note", metavar="TEXT", required=True, help="why it is undone")
    p.add_argument("--by", metavar="NAME", default=None, help="who (default: the OS user)")
    p.set_defaults(func=run_unpair)


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add reconcile, resolve, pair and unpair to `recon`."""
    p = sub.add_parser(
        "reconcile",
        parents=parents,
        help="run the matching passes over the catalog; write a run",
        description="Match every intent to the statement lines, classify the breaks and "
        "write data/runs/<run_id>/. Exit 1 when P1 breaks exist or breaks exceed "
        "[alerts] max_breaks.",
    )
    p.add_argument(
        "--as-of",
        type=parse_timestamp,
        metavar="TS",
        default=None,
        help="reconcile as of this instant (ISO 8601 with offset; default: latest snapshot time)",
    )
    p.add_argument("--config", metavar="FILE", default=None, help="recon.toml to use")
    add_engine_argument(p)
    p.set_defaults(func=run_reconcile)

    p = sub.add_parser(
        "resolve",
        parents=parents,
        help="record a manual decision on a break (kept across runs)",
        description="Mark a break as resolved with a note, or record many from a CSV "
        "(columns: break_id,note[,decided_by]); --reopen opens a resolved one again. Every "
        "decision is appended to data/decisions.csv and to the audit log (data/audit.jsonl).",
    )
    p.add_argument("break_id", nargs="?", metavar="BREAK_ID", help="the break to resolve")
    p.add_argument("--note", metavar="TEXT", default=None, help="why it is resolved")
    p.add_argument("--decisions", metavar="FILE.csv", default=None, help="CSV of decisions")
    p.add_argument(
        "--by",
        metavar="NAME",
        default=None,
        help="who decided (default: the OS user; a CSV's decided_by column wins)",
    )
    p.add_argument(
        "--reopen",
        action="store_true",
        help="reopen a resolved break (the note says why); the next run lists it as open",
    )
    p.set_defaults(func=run_resolve)
    _register_pairs(sub, parents)
