"""Funnel, expiry, duration, volume and statusReason analytics over the catalog.

Every function takes `data` (a data directory, a `DataDir`, a connection from
`recon.analytics.connect`, or None for ./data / $RECON_DATA) and returns a pandas DataFrame.
The SQL lives in `recon/analytics/sql/*.sql`; Python only picks the grouping, computes
confidence intervals and names the columns. Money stays integer cents; dates are the business
day (America/Sao_Paulo unless recon.toml says otherwise) of the intent's creation.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, Literal

import numpy as np
import pandas as pd

from recon.analytics._connect import AnalyticsConfig, DataLike, connection, query, read_sql
from recon.analytics.stats import wilson_interval
from recon.errors import UsageError
from recon.money import format_brl

__all__ = [
    "DEFAULT_AMOUNT_EDGES_CENTS",
    "WEEKDAY_NAMES",
    "duration_summary",
    "expiry_rates",
    "failures",
    "funnel",
    "intent_outcomes",
    "status_history",
    "status_reasons",
    "time_to_complete",
    "time_to_pay",
    "volumes",
]

Cohort = Literal["day", "week", "month", "all"]
DateLike = str | date | datetime | None

COHORT_EXPR = {
    "day": "created_date",
    "week": "CAST(date_trunc('week', created_date) AS DATE)",  # ISO weeks start on Monday
    "month": "CAST(date_trunc('month', created_date) AS DATE)",
    "all": "CAST(NULL AS DATE)",
}
DEFAULT_AMOUNT_EDGES_CENTS = (5_000, 20_000, 100_000, 500_000)
WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _cohort_expr(cohort: str, prefix: str = "") -> str:
    try:
        expr = COHORT_EXPR[cohort]
    except KeyError:
        raise UsageError(f"cohort must be one of {sorted(COHORT_EXPR)}, got {cohort!r}") from None
    return expr.replace("created_date", prefix + "created_date")


def _day(value: DateLike, name: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    try:
        return date.fromisoformat(str(value)[:10]).isoformat()
    except ValueError:
        raise UsageError(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def _window(start: DateLike, end: DateLike) -> dict[str, Any]:
    s, e = _day(start, "start"), _day(end, "end")
    if s and e and s > e:
        raise UsageError(f"start {s} is after end {e}")
    return {"start": s, "end": e}


def _intent_type(cfg: AnalyticsConfig, intent_type: str | None, *, optional: bool) -> str | None:
    if intent_type in (None, "all") and optional:
        return None
    if intent_type not in cfg.lifecycles:
        raise UsageError(
            f"intent_type must be one of {sorted(cfg.lifecycles)}, got {intent_type!r}"
        )
    return intent_type


def _label_cohort(df: pd.DataFrame, cohort: str) -> pd.DataFrame:
    if cohort == "all" and "cohort" in df:
        df["cohort"] = "all"
    return df


def status_history(
    data: DataLike = None,
    *,
    intent_type: str | None = None,
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """The `status_history` view (intent × status observed), filtered by type and creation day.

    Columns: intent_id, intent_type, status, stage_rank, stage_kind, status_reason,
    first_seen_at, last_seen_at, snapshots_seen, entered_at (exact, from updated_at, or NaT),
    entered_after / entered_before (the bracket), entry_source, intent_created_at.
    """
    with connection(data) as (con, cfg):
        params = {"intent_type": _intent_type(cfg, intent_type, optional=True)}
        params |= _window(start, end) | {"tz": cfg.business_tz}
        return query(
            con,
            """
            SELECT * FROM status_history
            WHERE ($intent_type IS NULL OR intent_type = $intent_type)
                AND ($start IS NULL
                    OR CAST(timezone($tz, intent_created_at) AS DATE) >= CAST($start AS DATE))
                AND ($end IS NULL
                    OR CAST(timezone($tz, intent_created_at) AS DATE) <= CAST($end AS DATE))
            ORDER BY intent_id, first_seen_at, stage_rank
            """,
            params,
        )


def intent_outcomes(
    data: DataLike = None,
    *,
    intent_type: str | None = None,
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """One row per intent as last observed, with its outcome and furthest stage reached.

    outcome is completed | expired | canceled | failed | refunded | open (open = not terminal
    when last seen, i.e. right-censored). created_date is the business-tz creation day.
    """
    with connection(data) as (con, cfg):
        params = {"intent_type": _intent_type(cfg, intent_type, optional=True)}
        params |= _window(start, end)
        return query(
            con,
            """
            SELECT * FROM analytics_intents
            WHERE ($intent_type IS NULL OR intent_type = $intent_type)
                AND ($start IS NULL OR created_date >= CAST($start AS DATE))
                AND ($end IS NULL OR created_date <= CAST($end AS DATE))
            ORDER BY created_at, intent_id
            """,
            params,
        )


def funnel(
    data: DataLike = None,
    *,
    intent_type: str = "onramp",
    cohort: Cohort = "day",
    stages: Sequence[str] | None = None,
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Funnel conversion of one intent type, per creation cohort and stage.

    A cohort is the intents created on a business day (or ISO week / month / "all"). An
    intent counts as having reached a stage when any snapshot saw it there or at a later stage
    (a later stage counts as passing the earlier ones), or when its exit implies the stage (an
    expired onramp waited for payment). `stages` defaults to the configured lifecycle without
    its optional stages (requires_compliance).

    One row per cohort × stage: cohort, intent_type, stage, stage_rank (lifecycle position), step
    (1..n in the funnel), cohort_size, reached, share (reached / cohort_size), dropped
    (previous step's reached − reached; the cohort for step 1) and step_conversion.
    """
    with connection(data) as (con, cfg):
        it = _intent_type(cfg, intent_type, optional=False)
        assert it is not None
        chosen = tuple(stages) if stages is not None else cfg.funnel_stages(it)
        unknown = [s for s in chosen if s not in cfg.lifecycle(it)]
        if unknown or not chosen:
            raise UsageError(f"stages {unknown or chosen} are not {it} lifecycle stages")
        sql = read_sql("funnel").format(cohort_expr=_cohort_expr(cohort))
        params = {"intent_type": it, "stages": list(chosen)} | _window(start, end)
        df = query(con, sql, params)
    df.insert(1, "intent_type", it)
    return _label_cohort(df, cohort)


def _amount_bucket_expr(edges: Sequence[int]) -> tuple[str, list[str]]:
    if list(edges) != sorted(set(edges)) or any(
        not isinstance(e, int) or isinstance(e, bool) or e <= 0 for e in edges
    ):
        raise UsageError("amount edges must be increasing positive integer cents")
    whens = " ".join(f"WHEN amount_cents < {int(e)} THEN {i}" for i, e in enumerate(edges))
    expr = f"CASE WHEN amount_cents IS NULL THEN NULL {whens} ELSE {len(edges)} END"
    labels = [f"< {format_brl(edges[0])}"]
    labels += [f"{format_brl(lo)} – {format_brl(hi)}" for lo, hi in itertools.pairwise(edges)]
    labels.append(f"≥ {format_brl(edges[-1])}")
    return expr, labels


def expiry_rates(
    data: DataLike = None,
    *,
    by: Literal["cohort", "amount", "hour", "weekday"] = "cohort",
    intent_type: str = "onramp",
    cohort: Cohort = "day",
    amount_edges_cents: Sequence[int] = DEFAULT_AMOUNT_EDGES_CENTS,
    confidence: float = 0.95,
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Expiry rate of one intent type by creation cohort, amount bucket, hour or weekday.

    Hours and weekdays are of the creation time in the business time zone. Intents that were
    not terminal when last seen are right-censored: they are counted in `still_open` and
    `open_share`, never dropped. Columns per group:

    - intents, expired, completed, other_exit (canceled/failed/refunded), still_open, closed;
    - expiry_rate = expired / intents, with a Wilson interval (ci_low, ci_high) at
      `confidence` — a lower bound while intents are still open;
    - expiry_rate_max = (expired + still_open) / intents: the rate if every open one expired;
    - expiry_rate_closed = expired / closed, with closed_ci_low / closed_ci_high.
    """
    with connection(data) as (con, cfg):
        it = _intent_type(cfg, intent_type, optional=False)
        labels: list[str] = []
        if by == "cohort":
            key, name = _cohort_expr(cohort), "cohort"
        elif by == "amount":
            key, labels = _amount_bucket_expr(amount_edges_cents)
            name = "amount_bucket"
        elif by == "hour":
            key, name = "CAST(hour(created_local) AS INTEGER)", "hour"
        elif by == "weekday":
            key, name = "CAST(isodow(created_local) AS INTEGER)", "weekday"
        else:
            raise UsageError(f"by must be cohort, amount, hour or weekday, got {by!r}")
        sql = read_sql("outcomes").format(key_expr=key)
        df = query(con, sql, {"intent_type": it} | _window(start, end))
    df = df.rename(columns={"group_key": name})
    counts = ["intents", "expired", "completed", "other_exit", "still_open"]
    # Show every hour / weekday, even with no intents, so gaps are visible (rates are NaN).
    full = {
        "hour": range(24),
        "weekday": range(1, 8),
        "amount_bucket": range(len(labels)),
    }.get(name)
    if full is not None:
        keyed = df[df[name].notna()].astype({name: "int64"}).set_index(name)
        df = pd.concat(
            [keyed.reindex(list(full), fill_value=0).reset_index(), df[df[name].isna()]],
            ignore_index=True,
        )
    df[counts] = df[counts].astype("int64")
    if name == "weekday":
        df.insert(1, "weekday_name", [WEEKDAY_NAMES[d - 1] for d in df["weekday"]])
    if name == "amount_bucket":
        df.insert(
            1,
            "amount_range",
            [labels[int(b)] if pd.notna(b) else "(no amount)" for b in df["amount_bucket"]],
        )
    df.insert(1, "intent_type", it)
    df["closed"] = df["intents"] - df["still_open"]
    n = df["intents"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["expiry_rate"] = df["expired"] / n
        df["ci_low"], df["ci_high"] = wilson_interval(df["expired"], df["intents"], confidence)
        df["open_share"] = df["still_open"] / n
        df["expiry_rate_max"] = (df["expired"] + df["still_open"]) / n
        df["expiry_rate_closed"] = df["expired"] / df["closed"].to_numpy(dtype=float)
        df["closed_ci_low"], df["closed_ci_high"] = wilson_interval(
            df["expired"], df["closed"], confidence
        )
    return _label_cohort(df, cohort)


def _durations(
    data: DataLike,
    stage_of: str,
    intent_type: str,
    cohort: Cohort,
    start: DateLike,
    end: DateLike,
) -> pd.DataFrame:
    with connection(data) as (con, cfg):
        it = _intent_type(cfg, intent_type, optional=False)
        assert it is not None
        stage = cfg.pay_stage[it] if stage_of == "pay" else cfg.lifecycle(it)[-1]
        sql = read_sql("durations").format(cohort_expr=_cohort_expr(cohort, "a."))
        df = query(con, sql, {"intent_type": it, "stage": stage} | _window(start, end))
    df.insert(2, "stage", stage)
    return _label_cohort(df, cohort)


def time_to_pay(
    data: DataLike = None,
    *,
    intent_type: str = "onramp",
    cohort: Cohort = "day",
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Seconds from creation to payment, one row per intent known to have paid.

    Payment is entering the pay stage (onramp: fiat_received; offramp: onchain_received;
    configurable). `exact` is True when the entry is known from updated_at; otherwise
    `seconds` is the midpoint of [seconds_low, seconds_high], the snapshot bracket.
    """
    return _durations(data, "pay", intent_type, cohort, start, end)


def time_to_complete(
    data: DataLike = None,
    *,
    intent_type: str = "onramp",
    cohort: Cohort = "day",
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Seconds from creation to the last lifecycle stage (completed); same columns as
    `time_to_pay`."""
    return _durations(data, "complete", intent_type, cohort, start, end)


def duration_summary(durations: pd.DataFrame, *, by: str | None = "cohort") -> pd.DataFrame:
    """Median and p90 (and count, share exact) of a `time_to_pay`/`time_to_complete` frame.

    Quantiles are linear-interpolated over `seconds`; minutes are given for reading.
    `by=None` summarises the whole frame in one row.
    """
    if "seconds" not in durations or "exact" not in durations:
        raise UsageError("duration_summary needs a time_to_pay / time_to_complete frame")

    def one(g: pd.DataFrame) -> pd.Series:
        s = g["seconds"].astype(float)
        return pd.Series(
            {
                "intents": len(g),
                "exact_share": float(g["exact"].mean()) if len(g) else np.nan,
                "median_seconds": s.quantile(0.5) if len(g) else np.nan,
                "p90_seconds": s.quantile(0.9) if len(g) else np.nan,
            }
        )

    if by is None:
        out = one(durations).to_frame().T
    else:
        out = pd.DataFrame(
            [{by: key} | one(g).to_dict() for key, g in durations.groupby(by, sort=True)],
            columns=[by, "intents", "exact_share", "median_seconds", "p90_seconds"],
        )
    out["intents"] = out["intents"].astype("int64")
    out["median_minutes"] = out["median_seconds"] / 60
    out["p90_minutes"] = out["p90_seconds"] / 60
    return out.reset_index(drop=True)


def volumes(
    data: DataLike = None,
    *,
    intent_type: str | None = None,
    cohort: Cohort = "day",
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Intents and amounts (integer cents) per cohort and intent type, split by outcome.

    Columns: cohort, intent_type, intents, amount_cents, completed, completed_cents, expired,
    expired_cents, other_exit, other_exit_cents, still_open, open_cents. Format for people
    with `recon.money.format_brl` (R$ 1.234,56) only when presenting.
    """
    with connection(data) as (con, cfg):
        it = _intent_type(cfg, intent_type, optional=True)
        sql = read_sql("volumes").format(cohort_expr=_cohort_expr(cohort))
        df = query(con, sql, {"intent_type": it} | _window(start, end))
    return _label_cohort(df, cohort)


def status_reasons(
    data: DataLike = None,
    *,
    intent_type: str | None = None,
    statuses: Sequence[str] | None = None,
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Intents by status (as last seen) and statusReason, with amounts and shares.

    `statuses` defaults to the terminal exits (expired, canceled, failed, refunded). A
    missing reason shows as "(none)". share is within (intent_type, status).
    """
    with connection(data) as (con, cfg):
        it = _intent_type(cfg, intent_type, optional=True)
        chosen = list(statuses) if statuses is not None else list(cfg.terminal_exits)
        params = {"intent_type": it, "statuses": chosen} | _window(start, end)
        return query(con, read_sql("status_reasons"), params)


def failures(
    data: DataLike = None,
    *,
    intent_type: str | None = None,
    start: DateLike = None,
    end: DateLike = None,
) -> pd.DataFrame:
    """Where intents that exited (expired/canceled/failed/refunded) left the lifecycle.

    One row per intent type × exit status × furthest stage reached before the exit, with
    intents, amount_cents and share_of_exits (within the intent type).
    """
    with connection(data) as (con, cfg):
        it = _intent_type(cfg, intent_type, optional=True)
        return query(con, read_sql("failures"), {"intent_type": it} | _window(start, end))
