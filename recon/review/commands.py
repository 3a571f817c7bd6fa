"""`recon review` (the web app) and `recon audit verify` (the audit trail's hash chain)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _data(args: argparse.Namespace) -> Any:
    from recon.config import DataDir

    return DataDir.resolve(args.data)


def run_audit_verify(args: argparse.Namespace) -> int:
    from recon.reconcile import audit

    dd = _data(args)
    result = audit.verify(dd)
    path = audit.audit_path(dd)
    if result.ok:
        print(f"{path}: {result.entries} entries, chain intact")
        return 0
    print(
        f"recon: error: {path}:{result.line}: audit chain broken: {result.problem} "
        f"({result.entries} entries verified before it)",
        file=sys.stderr,
    )
    return 2


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="check the audit trail (data/audit.jsonl)",
        description="The audit trail of every action on a break, chained by hash.",
    )
    verbs = p.add_subparsers(dest="audit_command", metavar="VERB")
    verbs.required = True
    v = verbs.add_parser(
        "verify",
        parents=parents,
        help="verify the hash chain: exit 0 when intact, 2 naming the line where it breaks",
    )
    v.set_defaults(func=run_audit_verify)
