"""`recon sql`: ad-hoc SQL over the catalog views, or write data/recon.duckdb."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from recon.errors import UsageError


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "sql",
        parents=parents,
        help="run SQL over the catalog views (no query: write data/recon.duckdb)",
        description=(
            "Run a query over the catalog views (intents, intent_snapshots, snapshots, "
            "status_history, statement_lines, recon_matches, recon_exceptions). With no query, write "
            "data/recon.duckdb holding the views, for any DuckDB client."
        ),
    )
    p.add_argument("query", nargs="?", help="SQL text; '-' reads it from standard input")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import duckdb

    from recon.catalog import VIEW_NAMES, holds_nothing, sql, write_database
    from recon.config import DataDir

    data = DataDir.resolve(args.data)
    if args.query is None:
        path = write_database(data)
        print(
            f"wrote {path} (views: {', '.join(VIEW_NAMES)}); it reads the Parquet files in "
            f"place: run `recon sql` again after new snapshots, statements or runs"
        )
        return 0
    query = sys.stdin.read() if args.query == "-" else args.query
    if holds_nothing(data):
        print(
            f"recon: warning: {data} holds no snapshots or statements yet: the views are "
            "empty (run `recon extract` / `recon statements import`, or `make demo`)",
            file=sys.stderr,
        )
    try:
        df = sql(query, data)
    except duckdb.Error as exc:
        raise UsageError(f"SQL error: {str(exc).splitlines()[0]}") from exc
    if args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        records = json.loads(df.to_json(orient="records", date_format="iso"))
        json.dump(records, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(show_lines=False)
        for col in df.columns:
            table.add_column(str(col))
        for row in df.itertuples(index=False):
            table.add_row(*["" if _isnull(v) else str(v) for v in row])
        Console(width=max(120, Console().width)).print(table)
        print(f"({len(df)} rows)")
    return 0


def _isnull(v: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False
