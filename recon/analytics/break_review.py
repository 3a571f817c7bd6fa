"""Break (recon_exceptions) summaries for review: aging by category, counts and amounts."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pandas as pd

from recon import catalog
from recon.config import DataDir
from recon.errors import UsageError
from recon.schemas import CATEGORIES

__all__ = [
    "AGE_BUCKETS",
    "break_aging",
    "break_amount_cents",
    "breaks",
    "breaks_by_category",
    "control_totals",
    "matches_by_rule",
    "run_overview",
    "run_summary",
]

# (label, lowest age in days, highest age in days or None for open-ended); the same buckets
# as the HTML report, so the notebook and the report agree.
AGE_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0 d", 0, 0),
    ("1 d", 1, 1),
    ("2–3 d", 2, 3),
    ("4–7 d", 4, 7),
    ("8–30 d", 8, 30),
    ("> 30 d", 31, None),
)
_PRIORITY = {"P1": 0, "P2": 1, "P3": 2}


def breaks(data: str | os.PathLike[str] | DataDir | None = None) -> pd.DataFrame:
    """The latest run's breaks (the `recon_exceptions` view), newest categories first."""
    con = catalog.connect(data)
    try:
        rel = con.sql("SELECT * FROM recon_exceptions ORDER BY priority, category, break_id")
        return catalog.to_frame(rel.to_arrow_table())
    finally:
        con.close()


def _query(data: str | os.PathLike[str] | DataDir | None, sql_text: str) -> pd.DataFrame:
    con = catalog.connect(data)
    try:
        return catalog.to_frame(con.sql(sql_text).to_arrow_table())
    finally:
        con.close()


def matches_by_rule(data: str | os.PathLike[str] | DataDir | None = None) -> pd.DataFrame:
    """The latest run's matches per rule and intent type: matches and cents matched."""
    return _query(
        data,
        """
        SELECT rule, intent_type, count(*) AS matches,
            CAST(coalesce(sum(abs(actual_cents)), 0) AS BIGINT) AS actual_cents
        FROM recon_matches
        GROUP BY rule, intent_type
        ORDER BY matches DESC, rule, intent_type
        """,
    )


def run_summary(data: str | os.PathLike[str] | DataDir | None = None) -> dict[str, Any]:
    """The latest committed run's summary.json as a dict ({} when there is no run yet)."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    run = catalog.latest_run(dd)
    if run is None:
        return {}
    value = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    return value if isinstance(value, dict) else {}


OVERVIEW_KEYS = (
    "run_id",
    "as_of",
    "intents",
    "statement_lines",
    "matched_lines",
    "auto_match_rate",
    "breaks",
    "new_breaks",
    "persisting_breaks",
    "checks_passed",
)


def run_overview(data: str | os.PathLike[str] | DataDir | None = None) -> pd.DataFrame:
    """The latest run's headline numbers as one row (no rows when there is no run yet):
    run_id, as_of, intents, statement_lines, matched_lines, auto_match_rate, breaks,
    new_breaks, persisting_breaks, checks_passed."""
    summary = run_summary(data)
    rows = [{key: summary.get(key) for key in OVERVIEW_KEYS}] if summary else []
    return pd.DataFrame(rows, columns=list(OVERVIEW_KEYS))


CONTROL_TOTAL_COLUMNS = (
    "business_day",
    "direction",
    "intents_cents",
    "statement_cents",
    "fees_cents",
    "interest_cents",
    "yield_cents",
    "difference_cents",
    "explained_cents",
    "unexplained_cents",
)


def control_totals(data: str | os.PathLike[str] | DataDir | None = None) -> pd.DataFrame:
    """The latest run's control totals: per business day and direction, the cents the intents
    say should have moved, what the statement shows, and how much of the difference the
    breaks explain (unexplained_cents should be 0)."""
    rows = run_summary(data).get("control_totals") or []
    df = pd.DataFrame(list(rows))
    for col in CONTROL_TOTAL_COLUMNS:
        if col not in df:
            df[col] = pd.Series(dtype="int64" if col.endswith("_cents") else "object")
    df["business_day"] = pd.to_datetime(df["business_day"])
    cents = [c for c in df.columns if c.endswith("_cents")]
    df[cents] = df[cents].fillna(0).astype("int64")
    return df.sort_values(["business_day", "direction"]).reset_index(drop=True)


def _require(df: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise UsageError(f"breaks frame lacks columns {missing} (use recon_exceptions rows)")


def break_amount_cents(df: pd.DataFrame) -> pd.Series:
    """Money at stake per break, in cents: |delta| when the amounts differ; otherwise the
    whole amount (a duplicate credit, a payout for a failed intent or a credit after expiry
    match in amount but the money itself is at stake), actual before expected."""
    _require(df, ["delta_cents", "expected_cents", "actual_cents"])
    delta = df["delta_cents"].abs()
    whole = df["actual_cents"].abs().fillna(df["expected_cents"].abs())
    amount = delta.where(delta.notna() & (delta != 0), whole)
    return amount.fillna(0).astype("int64")


def _category_order(categories: pd.Index | list[str]) -> list[str]:
    def key(name: str) -> tuple[int, int, str]:
        cat = CATEGORIES.get(name)
        known = list(CATEGORIES).index(name) if cat else len(CATEGORIES)
        return (_PRIORITY.get(cat.priority, 9) if cat else 9, known, name)

    return sorted(categories, key=key)


def break_aging(exceptions: pd.DataFrame, *, value: str = "count") -> pd.DataFrame:
    """Categories × age buckets: how many breaks (value="count") or how much money
    (value="cents", see `break_amount_cents`) has been open for how long.

    Rows are the categories present, by priority (P1 first); columns are every bucket of
    AGE_BUCKETS, in order, so an empty bucket shows as 0.
    """
    _require(exceptions, ["category", "age_days"])
    if value not in {"count", "cents"}:
        raise UsageError(f"value must be 'count' or 'cents', got {value!r}")
    labels = [label for label, _, _ in AGE_BUCKETS]
    ages = exceptions["age_days"].fillna(0).astype("int64").to_numpy()
    bucket = np.full(len(ages), labels[-1], dtype=object)
    for label, low, high in reversed(AGE_BUCKETS):
        inside = (ages >= low) & (ages <= high if high is not None else True)
        bucket[inside] = label
    frame = pd.DataFrame(
        {
            "category": exceptions["category"].to_numpy(),
            "age_bucket": pd.Categorical(bucket, categories=labels, ordered=True),
            "value": (
                np.ones(len(ages), dtype="int64")
                if value == "count"
                else break_amount_cents(exceptions).to_numpy()
            ),
        }
    )
    table = frame.pivot_table(
        index="category",
        columns="age_bucket",
        values="value",
        aggfunc="sum",
        fill_value=0,
        observed=False,
    )
    table = table.reindex(columns=labels, fill_value=0)
    table = table.reindex(_category_order(table.index))
    table.columns = pd.Index(labels, name="age_bucket")
    return table.astype("int64")


def breaks_by_category(exceptions: pd.DataFrame) -> pd.DataFrame:
    """One row per category: priority, breaks, amount_cents at stake, new and persisting."""
    _require(exceptions, ["category"])
    df = exceptions.assign(amount_cents=break_amount_cents(exceptions))
    state = df["state"] if "state" in df else pd.Series("new", index=df.index)
    out = (
        df.assign(new=(state == "new").astype("int64"))
        .groupby("category", sort=False)
        .agg(breaks=("category", "size"), amount_cents=("amount_cents", "sum"), new=("new", "sum"))
    )
    out["persisting"] = out["breaks"] - out["new"]
    out.insert(
        0, "priority", [CATEGORIES[c].priority if c in CATEGORIES else "" for c in out.index]
    )
    out = out.reindex(_category_order(out.index))
    return out.reset_index().astype({"breaks": "int64", "amount_cents": "int64"})
