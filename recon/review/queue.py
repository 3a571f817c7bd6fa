"""What the review app shows: the latest run's open breaks with the review state laid over them.

The queue is the latest run's `exceptions.parquet` (exactly `recon_exceptions`), joined once
per run with the names and times of its evidence (catalog views) and kept in memory as a
DataFrame; the review state (assignee, comments, decisions since the run, manual matches,
pending approvals) is replayed from the audit log and the decisions file, re-read only when
those files change. Filtering, sorting and paging are vectorised pandas on that frame.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from recon import catalog
from recon.config import DataDir
from recon.errors import FilterError, UsageError
from recon.money import AmountError, parse_cents
from recon.reconciliation import audit, workflow
from recon.reconciliation.decisions import Decision, decisions_path
from recon.reconciliation.manual import ManualMatch, load_manual_matches, manual_path
from recon.schemas import CATEGORIES

log = logging.getLogger(__name__)

__all__ = [
    "COVERAGE",
    "DECISIONS",
    "SORTS",
    "BreakView",
    "FilterError",
    "Filters",
    "Neighbours",
    "Page",
    "ReviewState",
    "Store",
]

DECISIONS = ("open", "pending", "closed", "all")
COVERAGE = ("covered", "not_covered", "unknown")
SORTS = {
    "priority": (["priority_rank", "money_at_stake", "age_days"], [True, False, False]),
    "age": (["age_days", "priority_rank"], [False, True]),
    "-age": (["age_days", "priority_rank"], [True, True]),
    "amount": (["money_at_stake", "priority_rank"], [False, True]),
    "-amount": (["money_at_stake", "priority_rank"], [True, True]),
    "category": (["category", "priority_rank"], [True, True]),
    "first_seen": (["first_seen_run", "priority_rank"], [True, True]),
}
MAX_PER_PAGE = 100_000
_NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")


@dataclass(frozen=True)
class Filters:
    """The queue's query parameters, validated."""

    category: str = ""
    priority: str = ""
    state: str = ""  # new | persisting
    assignee: str = ""  # a name, or "-" for unassigned
    decision: str = "open"  # open | pending (approval) | closed (any run) | all
    coverage: str = ""
    min_age: int | None = None
    max_age: int | None = None
    q: str = ""
    sort: str = "priority"
    page: int = 1
    per_page: int = 50
    decided_from: date | None = None  # the period view: closed by a person on these days
    decided_to: date | None = None  # (inclusive, business time zone)

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Filters:
        """From query parameters; a bad value is a FilterError saying which and why."""

        def text(name: str) -> str:
            return (params.get(name) or "").strip()

        def integer(name: str, low: int, high: int) -> int | None:
            raw = text(name)
            if not raw:
                return None
            if not re.fullmatch(r"\d{1,7}", raw):
                raise FilterError(f"{name} must be a whole number, got {raw!r}")
            value = int(raw)
            if not low <= value <= high:
                raise FilterError(f"{name} must be between {low} and {high}, got {value}")
            return value

        category = text("category")
        if category and category not in CATEGORIES:
            raise FilterError(f"unknown category {category!r}")
        priority = text("priority").upper()
        if priority and priority not in ("P1", "P2", "P3"):
            raise FilterError(f"priority must be P1, P2 or P3, got {priority!r}")
        state = text("state")
        if state and state not in ("new", "persisting"):
            raise FilterError(f"state must be new or persisting, got {state!r}")

        def day(name: str) -> date | None:
            raw = text(name)
            if not raw:
                return None
            try:
                return date.fromisoformat(raw)
            except ValueError:
                raise FilterError(f"{name} must be a date as YYYY-MM-DD, got {raw!r}") from None

        decided_from, decided_to = day("decided_from"), day("decided_to")
        if decided_from and decided_to and decided_from > decided_to:
            raise FilterError(f"decided_from {decided_from} is after decided_to {decided_to}")
        period = decided_from is not None or decided_to is not None
        # `status` is the parameter's older name, `resolved` its older word for closed; a
        # period alone asks for what was closed in it
        decision = text("decision") or text("status") or ("closed" if period else "open")
        decision = "closed" if decision == "resolved" else decision
        if decision not in DECISIONS:
            raise FilterError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        coverage = text("coverage")
        if coverage and coverage not in COVERAGE:
            raise FilterError(f"coverage must be one of {', '.join(COVERAGE)}, got {coverage!r}")
        assignee = text("assignee")
        if assignee and assignee != "-" and not _NAME.match(assignee):
            raise FilterError(f"assignee {assignee!r} is not a user name")
        sort = text("sort") or "priority"
        if sort not in SORTS:
            raise FilterError(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
        q = text("q")
        if len(q) > 200:
            raise FilterError("the search text is longer than 200 characters")
        min_age, max_age = integer("min_age", 0, 100_000), integer("max_age", 0, 100_000)
        if min_age is not None and max_age is not None and min_age > max_age:
            raise FilterError(f"min_age {min_age} is above max_age {max_age}")
        return cls(
            category=category,
            priority=priority,
            state=state,
            assignee=assignee,
            decision=decision,
            coverage=coverage,
            min_age=min_age,
            max_age=max_age,
            q=q,
            sort=sort,
            page=integer("page", 1, 10_000_000) or 1,
            per_page=integer("per_page", 1, MAX_PER_PAGE) or 50,
            decided_from=decided_from,
            decided_to=decided_to,
        )

    def query(self, **changes: Any) -> dict[str, str]:
        """The non-default parameters (with `changes`), for links that keep the filter."""
        merged = replace(self, **changes)
        default = Filters()
        return {
            k: str(v)
            for k, v in merged.__dict__.items()
            if v != getattr(default, k) and v is not None and v != ""
        }


@dataclass(frozen=True)
class Page:
    """One page of the filtered queue."""

    rows: list[dict[str, Any]]
    total: int
    page: int
    pages: int
    filters: Filters
    run_id: str | None
    counts: dict[str, int]  # open breaks per priority, whole run
    at_stake_total: int = 0  # cents at stake over every page of the filter


@dataclass(frozen=True)
class Neighbours:
    """A break's place in the filtered queue: the previous and next break, its position
    (1-based; 0 when the filter does not hold it) and the filter's total."""

    previous: str | None
    next: str | None
    position: int
    total: int


ReviewState = workflow.State  # the review state, replayed once for every door


@dataclass(frozen=True)
class BreakView:
    """Everything the break page shows."""

    row: dict[str, Any]
    run_id: str
    in_latest_run: bool
    snapshots: list[dict[str, Any]]  # the intent as each snapshot showed it
    lines: list[dict[str, Any]]  # the statement line(s), with source file and line
    candidates: list[dict[str, Any]]  # of an ambiguous line: the intents it could belong to
    suggestions: list[dict[str, Any]]  # recon_suggestions of the break, best first
    runs: list[dict[str, Any]]  # the break in every run that listed it
    decisions: list[Decision]
    audit: list[dict[str, Any]]
    assignee: str
    pending: dict[str, Any] | None
    decided: Decision | None
    manual_intent: str | None


def _signature(*paths: Path) -> tuple[tuple[int, int], ...]:
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            out.append((0, -1))
    return tuple(out)


_PRIORITY_RANK = {"P1": 1, "P2": 2, "P3": 3}
_INT64 = {pa.int64(): pd.Int64Dtype()}  # cents stay integers, nulls as <NA>

_ENRICH_SQL = """
SELECT
    e.break_id,
    coalesce(i.party_display_name, '') AS intent_name,
    coalesce(l.counterparty_name, '') AS line_name,
    i.created_at AS intent_created_at,
    l.booked_at AS line_booked_at,
    CASE
        WHEN NOT (SELECT count(*) > 0 FROM statement_coverage) THEN 'unknown'
        WHEN EXISTS (
            SELECT 1 FROM statement_coverage AS c
            WHERE coalesce(l.booked_at, i.created_at) >= c.covered_from
              AND coalesce(l.booked_at, i.created_at) < c.covered_to
        ) THEN 'covered'
        WHEN coalesce(l.booked_at, i.created_at) IS NULL THEN 'unknown'
        ELSE 'not_covered'
    END AS coverage
FROM read_parquet(?) AS e
LEFT JOIN intents AS i ON i.id = e.intent_id
LEFT JOIN statement_lines AS l ON l.line_id = e.line_id
"""


# how long the review app reuses one catalog connection at most (see Store.cursor)
CATALOG_TTL_S = 30


def _mtimes(path: Path) -> tuple[int, ...]:
    """When `path` and each folder in it last changed: a new file in one of its partitions
    (snapshot_date=…, source=…) shows here without walking the files."""
    try:
        with os.scandir(path) as entries:
            inner = sorted(e.stat().st_mtime_ns for e in entries if e.is_dir())
        return (path.stat().st_mtime_ns, *inner)
    except OSError:
        return ()


class Store:
    """Reads a data directory for the review app; safe to share between request threads."""

    def __init__(self, data: DataDir, tz: str = "America/Sao_Paulo"):
        self.data = data
        self.tz = tz  # the business time zone: a period view's days are its days
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._orders: dict[str, np.ndarray[Any, Any]] = {}
        self._run: Path | None = None
        self._state: ReviewState = ReviewState()
        self._state_sig: tuple[tuple[int, int], ...] | None = None
        self._catalog: tuple[tuple[Any, ...], duckdb.DuckDBPyConnection] | None = None
        self._runs: tuple[tuple[str, ...], duckdb.DuckDBPyConnection] | None = None

    # ------------------------------------------------------------------ loading

    def latest_run(self) -> Path | None:
        return catalog.latest_run(self.data)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor on the data directory's catalog (close it after use). Opening a catalog
        reads every source's listing (a tenth of a second locally, seconds on object
        storage), so one connection serves every request until a new run, a new snapshot or
        statement file, or CATALOG_TTL_S seconds; a superseded connection is left to the requests still
        using it. On object storage the sources are Arrow datasets registered on their own
        connection, which a cursor does not see: each request opens its own."""
        if self.data.remote:
            return catalog.connect(self.data)
        key = (
            self.latest_run(),
            _mtimes(self.data.snapshots),
            _mtimes(self.data.statements),
            int(time.monotonic() // CATALOG_TTL_S),
        )
        with self._lock:
            if self._catalog is not None and self._catalog[0] == key:
                return self._catalog[1].cursor()
        con = catalog.connect(self.data)
        with self._lock:
            self._catalog = (key, con)
            return con.cursor()

    def frame(self) -> tuple[Path | None, pd.DataFrame]:
        """The latest run's breaks with names and coverage (cached per run)."""
        run = self.latest_run()
        with self._lock:
            if self._frame is not None and run == self._run:
                return run, self._frame
        frame = self._load(run)
        with self._lock:
            self._run, self._frame, self._orders = run, frame, {}
        return run, frame

    def _load(self, run: Path | None) -> pd.DataFrame:
        if run is None:
            from recon.schemas import EXCEPTIONS_SCHEMA

            df = EXCEPTIONS_SCHEMA.empty_table().to_pandas(types_mapper=_INT64.get)
        else:
            df = pq.read_table(run / "exceptions.parquet").to_pandas(types_mapper=_INT64.get)
        extra = pd.DataFrame(
            {"break_id": df["break_id"], "intent_name": "", "line_name": "", "coverage": "unknown",
             "intent_created_at": None, "line_booked_at": None}
        )  # fmt: skip
        if run is not None and len(df):
            try:
                con = catalog.connect(self.data)
                try:
                    extra = con.execute(_ENRICH_SQL, [str(run / "exceptions.parquet")]).fetch_df()
                finally:
                    con.close()
            except (duckdb.Error, UsageError) as exc:  # names are a help, not a need
                log.warning("review: evidence names unavailable: %s", exc)
        df = df.merge(extra, on="break_id", how="left")
        df["in_latest"] = True
        older = self._older(run, df["break_id"])
        if len(older):
            df = pd.concat([df, older.assign(in_latest=False)], ignore_index=True)
        for col in ("intent_name", "line_name"):
            df[col] = df[col].fillna("").astype(str)
        df["coverage"] = df["coverage"].fillna("unknown").astype(str)
        df["priority_rank"] = df["priority"].map(_PRIORITY_RANK).fillna(9).astype("int64")
        df["money_at_stake"] = at_stake(df)
        df["age_days"] = df["age_days"].fillna(0).astype("int64")
        hay = (
            df["break_id"].fillna("")
            + "|"
            + df["intent_id"].fillna("")
            + "|"
            + df["end_to_end_id"].fillna("")
            + "|"
            + df["line_id"].fillna("")
            + "|"
            + df["intent_name"]
            + "|"
            + df["line_name"]
        )
        df["_hay"] = hay.str.lower()
        return df.reset_index(drop=True)

    def _older(self, run: Path | None, latest: pd.Series) -> pd.DataFrame:
        """The breaks earlier runs listed and the latest does not: each as its last run
        listed it (closed by a decision, a pair, or the data)."""
        files = [
            f for f in (sorted(self.data.runs.glob("*/exceptions.parquet"))
                        if self.data.runs.is_dir() else [])
            if not f.parent.name.startswith(".") and run is not None and f.parent != run
        ]  # fmt: skip
        if not files:
            return pd.DataFrame()
        con = duckdb.connect()
        try:
            con.register("latest", pd.DataFrame({"break_id": latest.astype(str)}))
            older = con.sql(
                "SELECT * FROM read_parquet($files) "
                "WHERE break_id NOT IN (SELECT break_id FROM latest) "
                "QUALIFY row_number() OVER (PARTITION BY break_id ORDER BY run_id DESC) = 1",
                params={"files": [str(f) for f in files]},
            ).to_arrow_table()
        finally:
            con.close()
        return older.to_pandas(types_mapper=_INT64.get)

    def state(self) -> ReviewState:
        """The review state, re-read when the audit log, decisions or manual matches change;
        `audit.AuditBroken` when the log does not verify (nothing is shown or done on it)."""
        sig = _signature(
            audit.audit_path(self.data), decisions_path(self.data), manual_path(self.data)
        )
        with self._lock:
            if sig == self._state_sig:
                return self._state
        st = ReviewState.read(self.data)
        with self._lock:
            self._state, self._state_sig = st, sig
        return st

    # ------------------------------------------------------------------ the queue

    def queue(self, filters: Filters) -> Page:
        """One page of the breaks that pass `filters`, sorted."""
        run, df, st, hits = self._hits(filters)
        counts = self._counts(df)
        total = len(hits)
        pages = max(1, -(-total // filters.per_page))
        page = min(filters.page, pages)
        start = (page - 1) * filters.per_page
        chunk = df.iloc[hits[start : start + filters.per_page]]
        rows = []
        pairs = load_manual_matches(self.data) if filters.decision in ("closed", "all") else []
        for raw in chunk.drop(columns=["_hay"]).to_dict("records"):
            rec = {str(k): v for k, v in raw.items()}
            bid = rec["break_id"]
            rec["assignee"] = st.assignee.get(bid, "")
            rec["comments"] = st.comments.get(bid, 0)
            rec["decided"] = st.decided.get(bid)
            rec["pending"] = bid in st.pending
            rec["manual"] = bool(rec.get("line_id") and rec["line_id"] in st.manual)
            rec["closed"] = _closed(rec, st, pairs)
            rec["last_comment"] = st.last_comment.get(bid, "")
            rows.append({str(k): (None if _isna(v) else v) for k, v in rec.items()})
        stake = int(df["money_at_stake"].to_numpy()[hits].sum())
        return Page(rows, total, page, pages, filters, run.name if run else None, counts, stake)

    def _hits(
        self, filters: Filters
    ) -> tuple[Path | None, pd.DataFrame, ReviewState, np.ndarray[Any, Any]]:
        """(run, frame, state, the frame's row positions that pass `filters`, in its order)."""
        run, df = self.frame()
        st = self.state()
        mask = pd.Series(True, index=df.index)
        ids = df["break_id"]
        latest = df["in_latest"]
        if filters.decision == "open":
            mask &= latest & ~ids.isin(st.decided.keys())
        elif filters.decision == "closed":
            mask &= ~latest | ids.isin(st.decided.keys())
        elif filters.decision == "pending":
            mask &= latest & ids.isin(st.pending.keys())
        for column in ("category", "priority", "state", "coverage"):
            if getattr(filters, column):
                mask &= df[column] == getattr(filters, column)
        if filters.min_age is not None:
            mask &= df["age_days"] >= filters.min_age
        if filters.max_age is not None:
            mask &= df["age_days"] <= filters.max_age
        if filters.assignee:
            assigned = {b for b, who in st.assignee.items() if who}
            if filters.assignee == "-":
                mask &= ~ids.isin(assigned)
            else:
                mine = {b for b, who in st.assignee.items() if who == filters.assignee}
                mask &= ids.isin(mine)
        if filters.q:
            mask &= self._search(df, filters.q)
        if filters.decided_from or filters.decided_to:
            mask &= self._decided_within(ids, st, filters.decided_from, filters.decided_to)
        # the frame's rows in this sort's order (computed once per run), kept where the mask is
        order = self._order(df, filters.sort)
        return run, df, st, order[mask.to_numpy()[order]]

    def _decided_within(
        self, ids: pd.Series, st: ReviewState, start: date | None, end: date | None
    ) -> pd.Series:
        """Whether each break was closed by a person (resolved, approved, paired by hand or
        a confirmed candidate) on a business day from `start` to `end`, both included."""
        when = {b: d.decided_at for b, d in st.decided.items()}
        for m in load_manual_matches(self.data):
            if m.action in ("pair", "confirm") and m.break_id:
                when.setdefault(m.break_id, m.confirmed_at)
        zone = ZoneInfo(self.tz)
        days: dict[str, date] = {}
        for bid, at in when.items():
            try:
                stamp = datetime.fromisoformat(str(at))
            except ValueError:
                continue
            stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
            days[bid] = stamp.astimezone(zone).date()
        inside = {
            b for b, d in days.items()
            if (start is None or d >= start) and (end is None or d <= end)
        }  # fmt: skip
        return ids.isin(inside)

    def neighbours(self, filters: Filters, break_id: str) -> Neighbours:
        """Where `break_id` stands in the queue under `filters`: the break before and after
        it (None at an end, or when the filter does not hold it)."""
        _run, df, _st, hits = self._hits(filters)
        ids = df["break_id"].to_numpy()[hits]
        where = np.flatnonzero(ids == break_id)
        if not len(where):
            return Neighbours(None, None, 0, len(ids))
        at = int(where[0])
        before = str(ids[at - 1]) if at > 0 else None
        after = str(ids[at + 1]) if at + 1 < len(ids) else None
        return Neighbours(before, after, at + 1, len(ids))

    def _counts(self, df: pd.DataFrame) -> dict[str, int]:
        """Open breaks per priority in the whole run (cached with the frame)."""
        with self._lock:
            cached = self._orders.get("#counts") if df is self._frame else None
        if cached is None:
            counts = df.loc[df["in_latest"], "priority"].value_counts()
            cached = np.array([int(counts.get(p, 0)) for p in ("P1", "P2", "P3")])
            with self._lock:
                if df is self._frame:
                    self._orders["#counts"] = cached
        return {p: int(n) for p, n in zip(("P1", "P2", "P3"), cached, strict=True)}

    def _order(self, df: pd.DataFrame, sort: str) -> np.ndarray[Any, Any]:
        """Row positions of `df` sorted by `sort` (then break_id), cached with the frame."""
        with self._lock:
            cached = self._orders.get(sort) if df is self._frame else None
        if cached is not None:
            return cached
        keys, ascending = SORTS[sort]
        ordered = df.sort_values([*keys, "break_id"], ascending=[*ascending, True], kind="stable")
        positions = df.index.get_indexer(ordered.index)
        with self._lock:
            if df is self._frame:
                self._orders[sort] = positions
        return positions

    @staticmethod
    def _search(df: pd.DataFrame, q: str) -> pd.Series:
        """Ids and names contain `q` (case-insensitive), or an amount equals it in R$."""
        found = df["_hay"].str.contains(q.lower(), regex=False)
        if re.search(r"\d", q) and re.fullmatch(r"\s*(R\$)?\s*[-\d.,\s]+", q):
            try:
                cents = abs(parse_cents(q.replace("R$", "").strip()))
            except (AmountError, ValueError):
                cents = None
            if cents is not None:
                found |= (
                    (df["expected_cents"].abs() == cents)
                    | (df["actual_cents"].abs() == cents)
                    | (df["delta_cents"].abs() == cents)
                ).fillna(False)
        return found

    def awaiting(self, actor: workflow.Actor) -> list[dict[str, Any]]:
        """The open breaks whose resolution waits for `actor`'s approval (four-eyes: asked
        for by someone else; nothing unless `actor` is an approver), oldest request first."""
        if not actor.can("approver"):
            return []
        st = self.state()
        waiting = {
            b: e for b, e in st.pending.items()
            if b not in st.decided and not actor.same_person(e.get("by"))
        }  # fmt: skip
        if not waiting:
            return []
        _run, df = self.frame()
        rows = df[df["in_latest"] & df["break_id"].isin(waiting.keys())]
        out: list[dict[str, Any]] = []
        for raw in rows.drop(columns=["_hay"]).to_dict("records"):
            rec = {str(k): (None if _isna(v) else v) for k, v in raw.items()}
            entry = waiting[str(rec["break_id"])]
            out.append(rec | {"asked_by": entry.get("by"), "asked_at": entry.get("at"),
                              "asked_note": entry.get("note", "")})  # fmt: skip
        return sorted(out, key=lambda r: (str(r["asked_at"]), r["break_id"]))

    def assignees(self) -> list[str]:
        return sorted({who for who in self.state().assignee.values() if who})

    # ------------------------------------------------------------------ one break

    def find(self, break_id: str) -> BreakView | None:
        """The break page's evidence; None when no run ever listed `break_id`."""
        _run, df = self.frame()
        st = self.state()
        hit = df[df["break_id"] == break_id]
        runs = self._runs_of(break_id)
        row: dict[str, Any]
        if len(hit):
            row = {str(k): (None if _isna(v) else v) for k, v in hit.iloc[0].to_dict().items()}
            in_latest = True
        elif runs:
            row = dict(runs[-1])
            in_latest = False
        else:
            return None
        row.pop("_hay", None)
        con = self.cursor()
        try:
            snapshots = _records(
                con,
                "SELECT snapshot_at, run_id, status, status_reason, amount_cents, "
                "updated_at, expires_at, created_at, intent_type, party_display_name, "
                "party_document_masked, client_reference, pix_description, pix_key_value, "
                "destination_address FROM intent_snapshots WHERE id = ? "
                "ORDER BY snapshot_at, run_id",
                [row.get("intent_id")],
            )
            lines = self._lines(con, row)
            candidates: list[dict[str, Any]] = []
            cand_file = self.data.runs / str(row.get("run_id")) / "candidates.parquet"
            if row.get("category") == "ambiguous_match" and cand_file.is_file():
                candidates = _records(
                    con,
                    "SELECT c.intent_id, c.rule, i.intent_type, i.status, i.amount_cents, "
                    "i.created_at, i.expires_at, i.party_display_name, "
                    "i.party_document_masked, i.client_reference, i.pix_description "
                    "FROM read_parquet(?) AS c LEFT JOIN intents AS i ON i.id = c.intent_id "
                    "WHERE c.line_id = ? ORDER BY c.intent_id",
                    [str(cand_file), row.get("line_id")],
                )
            suggestions = self._suggestions(con, row) if in_latest else []
        finally:
            con.close()
        entries = [e for e in st.entries if e.get("break_id") == break_id]
        return BreakView(
            row=row,
            run_id=str(row.get("run_id")),
            in_latest_run=in_latest,
            snapshots=snapshots,
            lines=lines,
            candidates=candidates,
            suggestions=suggestions,
            runs=runs,
            decisions=st.history.get(break_id, []),  # replayed with the state: read once
            audit=entries,
            assignee=st.assignee.get(break_id, ""),
            pending=st.pending.get(break_id),
            decided=st.decided.get(break_id),
            manual_intent=st.manual.get(str(row.get("line_id"))) if row.get("line_id") else None,
        )

    def _suggestions(
        self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The run's suggestions for the break (recon_suggestions), best first, each with the
        other side's facts: the line's amount, payer or payee and time for an intent that
        lacks its money; the intent's for a line nobody explains. `pair_with` names the form
        field a one-click pair sends (line_id or intent_id) and `other_id` its value;
        `difference_cents` is the line's amount less the intent's."""
        path = self.data.runs / str(row.get("run_id")) / "suggestions.parquet"
        if not path.is_file():
            return []
        found = _records(
            con,
            "SELECT s.rank, s.score, s.differences, s.intent_id, s.line_id, "
            "l.amount_cents AS line_cents, l.counterparty_name, l.booked_at, "
            "i.amount_cents AS intent_cents, i.intent_type, i.status, i.party_display_name, "
            "i.created_at "
            "FROM read_parquet(?) AS s "
            "LEFT JOIN statement_lines AS l ON l.line_id = s.line_id "
            "LEFT JOIN intents AS i ON i.id = s.intent_id "
            "WHERE s.break_id = ? ORDER BY s.rank",
            [str(path), row.get("break_id")],
        )
        lacks_money = bool(row.get("intent_id"))
        for f in found:
            f["pair_with"] = "line_id" if lacks_money else "intent_id"
            f["other_id"] = f["line_id"] if lacks_money else f["intent_id"]
            line, intent = f.get("line_cents"), f.get("intent_cents")
            f["difference_cents"] = (
                abs(int(line)) - int(intent) if line is not None and intent is not None else None
            )
        return found

    def _lines(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Every statement line the break involves: its own, and the lines its run matched to
        its intent (a duplicate shows the first payout beside the second), its own first; each
        with the file it came from as it is found now (`file_now`; `file_was` when the file
        moved, as `recon daily` moves an imported file to inbox/processed/<date>/)."""
        matches = self.data.runs / str(row.get("run_id")) / "matches.parquet"
        ids = [row.get("line_id")]
        if row.get("intent_id") and matches.is_file():
            ids += [
                r["line_id"] for r in _records(
                    con, "SELECT line_id FROM read_parquet(?) WHERE intent_id = ? "
                    "ORDER BY line_id", [str(matches), row.get("intent_id")],
                )
            ]  # fmt: skip
        ids = [i for i in dict.fromkeys(ids) if i]
        if not ids:
            return []
        lines = _records(
            con,
            "SELECT line_id, source_format, source_file, source_line, account, booked_at, "
            "amount_cents, direction, kind, end_to_end_id, txid, counterparty_name, "
            "counterparty_document, counterparty_key, description, bank_reference "
            "FROM statement_lines WHERE list_contains(?, line_id)",
            [ids],
        )
        lines.sort(key=lambda r: ids.index(r["line_id"]))
        for ln in lines:
            ln["own"] = ln["line_id"] == row.get("line_id")
            ln |= evidence_file(self.data, str(ln.get("source_file") or ""))
        return lines

    def _runs_of(self, break_id: str) -> list[dict[str, Any]]:
        """The break as every run listed it, oldest first."""
        found = (
            sorted(self.data.runs.glob("*/exceptions.parquet")) if self.data.runs.is_dir() else []
        )
        files = tuple(str(f) for f in found if not f.parent.name.startswith("."))
        if not files:
            return []
        con = self._runs_index(files)
        try:
            return _records(
                con, "SELECT * FROM runs WHERE break_id = ? ORDER BY run_id", [break_id]
            )
        finally:
            con.close()

    def _runs_index(self, files: tuple[str, ...]) -> duckdb.DuckDBPyConnection:
        """A cursor on every run's breaks, read once per set of runs and kept sorted by
        break_id, so a break page finds its rows by the row groups' min/max instead of
        scanning every run's file (a year of daily runs is millions of rows)."""
        with self._lock:
            if self._runs is not None and self._runs[0] == files:
                return self._runs[1].cursor()
        con = duckdb.connect()
        con.execute(
            "CREATE TABLE runs AS SELECT * FROM read_parquet(?, union_by_name = true) "
            "ORDER BY break_id",
            [list(files)],
        )
        with self._lock:
            self._runs = (files, con)
            return con.cursor()

    def paired(self, view: BreakView) -> workflow.Pairing | None:
        """The pair made by hand in force for the break's line or intent (None if none):
        all its lines, their sum and the intent's amount."""
        line, intent = view.row.get("line_id"), view.row.get("intent_id")
        return workflow.pairing_of(self.data, str(line or ""), str(intent or ""))

    def pair_options(self, view: BreakView, limit: int = 20) -> list[dict[str, Any]]:
        """What a break could be paired with by hand: the open breaks of the other side
        (unexplained lines for an intent without its money, and the reverse), nearest in
        amount first, each with its amount and the difference it would leave."""
        row = view.row
        other = workflow.PAIRS_WITH.get(str(row.get("category")))
        if other is None or not view.in_latest_run:
            return []
        _run, df = self.frame()
        side = df[df["category"].isin(other)]
        if row.get("intent_id"):  # an intent without its money: the lines carry actual_cents
            amount, want = side["actual_cents"], int(row.get("expected_cents") or 0)
            key, name = "line_id", "line_name"
        else:
            amount, want = side["expected_cents"], int(row.get("actual_cents") or 0)
            key, name = "intent_id", "intent_name"
        off = (amount.fillna(0).astype("int64") - want).abs()
        picked = side.assign(_off=off).sort_values(["_off", key], kind="stable").head(limit)
        return [
            {"id": str(r[key]), "amount_cents": int(a), "name": r[name], "reason": r["reason"],
             "category": r["category"],
             "difference_cents": (int(a) - want) if key == "line_id" else (want - int(a))}
            for r, a in zip(picked.to_dict("records"), amount[picked.index].fillna(0), strict=True)
        ]  # fmt: skip


def _closed(
    rec: dict[str, Any], st: ReviewState, pairs: list[ManualMatch]
) -> dict[str, str] | None:
    """What closed a break, by whom, when and why (None while it is open)."""
    bid = rec["break_id"]
    decided = st.decided.get(bid)
    if decided is not None:
        how = "approved" if bid in st.approved else "resolved"
        return {"how": how, "by": decided.decided_by, "at": decided.decided_at,
                "note": decided.note}  # fmt: skip
    if rec["in_latest"]:
        return None
    for m in pairs:
        if m.action in ("pair", "confirm") and (
            m.break_id == bid
            or m.line_id == rec.get("line_id")
            or (rec.get("intent_id") and m.intent_id == rec.get("intent_id"))
        ):
            return {"how": "paired", "by": m.confirmed_by, "at": m.confirmed_at, "note": m.note}
    return {"how": "cleared by the data", "by": "", "at": "",
            "note": f"not listed after run {rec.get('run_id')}"}  # fmt: skip


def evidence_file(data: DataDir, source_file: str) -> dict[str, str]:
    """Where a line's source file is now: {"file_now": ...} (under the data dir, relative to
    it), plus "file_was" when it is no longer where it was imported from and a file of its
    name waits in inbox/processed/<date>/ (the latest such date)."""
    path = Path(source_file)

    def shown(p: Path) -> str:
        try:
            return str(p.resolve().relative_to(data.root.resolve()))
        except (ValueError, OSError):
            return str(p)

    if not source_file or not path.is_absolute() or path.is_file():
        return {"file_now": shown(path) if path.is_absolute() else source_file}
    moved = sorted((data.inbox / "processed").glob(f"*/{path.name}"))
    if not moved:
        return {"file_now": shown(path)}
    return {"file_now": shown(moved[-1]), "file_was": shown(path)}


# breaks whose money moved, but by the wrong amount: what is at stake is the difference (a
# PSP fee off its schedule: between the fee taken and the schedule's)
AMOUNT_OFF = (
    "onramp_underpaid",
    "onramp_overpaid",
    "onramp_fee_mismatch",
    "offramp_payout_amount_mismatch",
    "refund_amount_mismatch",
)


def at_stake(df: pd.DataFrame) -> pd.Series:
    """The money at risk of each break, in cents (>= 0): the difference for an amount off
    (an underpayment short by R$ 0,01 risks R$ 0,01), else the money that moved (a duplicate
    payout risks the amount paid twice, an unexplained line its amount), else the money that
    should have moved (a missing credit or payout risks the intent's amount)."""
    delta = df["delta_cents"].abs()
    moved = df["actual_cents"].abs()
    owed = df["expected_cents"].abs()
    out = moved.where(moved.fillna(0) > 0, owed).fillna(0)
    out = out.where(~df["category"].isin(AMOUNT_OFF), delta.fillna(0))
    return out.astype("int64")


def _isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _records(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    columns = [d[0] for d in cur.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
