"""`recon demo`: the whole job end to end against the embedded sandbox, scored against its truth.

Steps (each one is the same library call a real deployment makes):

1. build a sandbox world (deterministic for a seed) in an in-process emulator, a share of
   its onramp credits net of the PSP's fee (the collisions knob `net_of_fee`, DEMO_NET_OF_FEE:
   the demo's account is a PSP's, as a fiat–crypto service's often is);
2. serve it on loopback (a real HTTP server on 127.0.0.1, a free port);
3. extract over HTTP (snapshot 1), apply the world's late events (planted status
   regressions) with ``POST /_sandbox/world/late-events``, extract again (snapshot 2);
4. export the world's bank statements in every format into ``data/inbox/`` and import them;
5. reconcile (as of the latest snapshot's server time) and render the report;
6. compare the breaks found with the sandbox's ground truth: precision and recall.

**Where the data goes.** The demo works in its own folder, ``<data>/demo-<seed>/`` (``<data>``
is ``--data``, ``$RECON_DATA`` or ``./data``), marked with a ``.recon-demo`` file. Each run starts
it afresh — it deletes that folder only if the marker says the demo made it, never anything
else. By default (``--keep-data``) the snapshots, statements and runs stay, so
``recon sql --data data/demo-7`` and the notebooks can explore them; with ``--no-keep-data``
only ``reports/`` (the HTML, breaks.csv, breaks.parquet) and ``sandbox/`` (the exported
statements and ground truth) are kept at the end. Notebooks call `ensure_demo_data` to get such a folder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from recon.config import DataDir
from recon.errors import ApiError, UsageError
from recon.pii import redact_file
from recon.schemas import stake_cents

__all__ = [
    "DEMO_DAYS",
    "DEMO_INTENTS_PER_DAY",
    "CategoryScore",
    "DemoResult",
    "default_data_dir",
    "ensure_demo_data",
    "run_demo",
    "score_breaks",
]

log = logging.getLogger(__name__)

MARKER = ".recon-demo"
KEPT_WITHOUT_KEEP_DATA = ("reports", "sandbox", MARKER)

BreakKey = tuple[str, str | None, str | None]

# The world `ensure_demo_data` builds for a notebook: small enough that a fresh clone builds it
# in seconds, big enough that every chart has something to show (each day is a cohort).
DEMO_DAYS = 7
DEMO_INTENTS_PER_DAY = 60
DEMO_NET_OF_FEE = 0.05  # the share of plain onramp credits that come net of the PSP's fee


@dataclass(frozen=True)
class CategoryScore:
    """Breaks of one category: how many the truth expects, how many were found, how many agree."""

    category: str
    expected: int
    found: int
    true_positive: int

    @property
    def precision(self) -> float:
        """Share of found breaks that the truth expects (1.0 when nothing was found)."""
        return self.true_positive / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        """Share of expected breaks that were found (1.0 when nothing was expected)."""
        return self.true_positive / self.expected if self.expected else 1.0


def _norm(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def break_key(category: Any, intent_id: Any, end_to_end_id: Any) -> BreakKey:
    """A break's identity for scoring: category, intent, end-to-end id (blank = None)."""
    return (str(category), _norm(intent_id), _norm(end_to_end_id))


def score_breaks(
    found: Iterable[BreakKey], expected: Iterable[BreakKey]
) -> dict[str, CategoryScore]:
    """Per category (and ``"all"``): expected, found, true positives, by exact break identity."""
    found_set, expected_set = set(found), set(expected)
    categories = sorted({k[0] for k in found_set | expected_set})
    scores = {}
    for cat in categories:
        f = {k for k in found_set if k[0] == cat}
        e = {k for k in expected_set if k[0] == cat}
        scores[cat] = CategoryScore(cat, len(e), len(f), len(f & e))
    scores["all"] = CategoryScore(
        "all", len(expected_set), len(found_set), len(found_set & expected_set)
    )
    return scores


@dataclass(frozen=True)
class DemoResult:
    """What the demo did, where it put it, and how it scored against the ground truth."""

    data_dir: Path
    run_id: str
    run_dir: Path
    report: Path
    scores: dict[str, CategoryScore]
    stake_cents: dict[str, int]
    intents: int
    statement_files: tuple[str, ...]
    timings: dict[str, float] = field(default_factory=dict)
    base_url: str = ""
    missed: tuple[BreakKey, ...] = ()
    unexpected: tuple[BreakKey, ...] = ()

    @property
    def precision(self) -> float:
        return self.scores["all"].precision

    @property
    def recall(self) -> float:
        return self.scores["all"].recall

    @property
    def wall_seconds(self) -> float:
        return sum(self.timings.values())


def _prepare(root: Path) -> None:
    """Start the demo folder afresh — but only ever delete a folder the demo made."""
    if root.exists():
        if not (root / MARKER).is_file():
            if any(root.iterdir()):
                raise UsageError(
                    f"{root} exists and was not made by `recon demo` (no {MARKER}); "
                    "move it away or choose another --data"
                )
        else:
            shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)


def _write_marker(root: Path, params: dict[str, Any], state: str) -> None:
    (root / MARKER).write_text(json.dumps({**params, "state": state}, sort_keys=True) + "\n")


def _read_marker(root: Path) -> dict[str, Any] | None:
    try:
        value = json.loads((root / MARKER).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _tidy(root: Path) -> None:
    """Without --keep-data: keep the report and the sandbox's files, drop the bulky rest."""
    for child in root.iterdir():
        if child.name in KEPT_WITHOUT_KEEP_DATA:
            continue
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def _build(
    root: Path,
    *,
    seed: int,
    days: int,
    intents_per_day: int,
    keep_data: bool,
    quiet: bool,
    charts: bool = True,
    on_step: Callable[[str, float], None] | None = None,
) -> DemoResult:
    import httpx

    from recon.extraction import extract
    from recon.reconciliation import reconcile
    from recon.report import render
    from recon.sandbox.compose import build_world
    from recon.sandbox.exports import STATEMENT_FILES, export_statements
    from recon.sandbox.exports.daily import ACCOUNT_LABEL as DAILY_ACCOUNT
    from recon.sandbox.exports.daily import FOLDER as DAILY_FOLDER
    from recon.statements import import_statements

    params = {"seed": seed, "days": days, "intents_per_day": intents_per_day}
    _prepare(root)
    _write_marker(root, params, "started")
    dd = DataDir(root).ensure()
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now
        if on_step is not None:
            on_step(name, timings[name])

    sandbox = build_world(
        seed=seed, days=days, intents_per_day=intents_per_day, net_of_fee=DEMO_NET_OF_FEE
    )
    lap("build world")

    api_key = sandbox.api_key
    with sandbox.running() as base_url:
        first = extract(dd, base_url=base_url, api_key=api_key, quiet=quiet)
        lap("extract")
        # the world's held-back status regressions, applied over the wire like any client would
        try:
            httpx.post(
                f"{base_url}/_sandbox/world/late-events",
                headers={"X-API-Key": api_key},
                timeout=30,
            ).raise_for_status()
        except httpx.HTTPError as exc:
            raise ApiError(f"the sandbox refused its late events: {exc}") from exc
        second = extract(dd, base_url=base_url, api_key=api_key, quiet=quiet)
        lap("late events + extract")
    log.info("snapshots %s and %s", first.run_id, second.run_id)

    # the bank's files go to the inbox (the sandbox folder keeps the ground truth); once
    # imported they are kept in inbox/processed with documents and phones masked, as daily does
    sandbox_dir = root / "sandbox"
    export_statements(sandbox.bank, sandbox_dir)
    for name in STATEMENT_FILES:
        os.replace(sandbox_dir / name, dd.inbox / name)
    processed = dd.inbox / "processed" / "demo"
    processed.mkdir(parents=True, exist_ok=True)
    for name in STATEMENT_FILES:
        import_statements([dd.inbox / name], data=dd)
        os.replace(dd.inbox / name, processed / name)
        redact_file(processed / name)
    # the service's second account: its daily files, under its own label (recon.sandbox.exports.daily)
    if (sandbox_dir / DAILY_FOLDER).is_dir():
        import_statements([sandbox_dir / DAILY_FOLDER], data=dd, account=DAILY_ACCOUNT)
    lap("export + import statements")

    run = reconcile(dd)
    lap("reconcile")
    report = render(run.path, charts=charts)
    lap("report")

    rows = pq.read_table(
        Path(run.path) / "exceptions.parquet",
        columns=[
            "category",
            "intent_id",
            "end_to_end_id",
            "expected_cents",
            "actual_cents",
            "delta_cents",
        ],
    ).to_pylist()
    found = [break_key(r["category"], r["intent_id"], r["end_to_end_id"]) for r in rows]
    expected = [break_key(b.category, b.intent_id, b.end_to_end_id) for b in sandbox.truth.breaks]
    at_stake: dict[str, int] = {}
    for r in rows:
        at_stake[r["category"]] = at_stake.get(r["category"], 0) + stake_cents(r)
    _write_marker(root, {**params, "run_id": run.run_id}, "done")
    if not keep_data:
        _tidy(root)
    return DemoResult(
        data_dir=root,
        run_id=run.run_id,
        run_dir=Path(run.path),
        report=report,
        scores=score_breaks(found, expected),
        stake_cents=at_stake,
        intents=int(second.manifest.get("unique_ids") or second.manifest.get("rows") or 0),
        statement_files=tuple(STATEMENT_FILES),
        timings=timings,
        base_url=base_url,
        missed=tuple(sorted(set(expected) - set(found), key=str)),
        unexpected=tuple(sorted(set(found) - set(expected), key=str)),
    )


def run_demo(
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    seed: int = 7,
    days: int = 14,
    intents_per_day: int = 200,
    keep_data: bool = False,
    quiet: bool = True,
    on_step: Callable[[str, float], None] | None = None,
) -> DemoResult:
    """Run the whole job against a fresh sandbox world in ``<data>/demo-<seed>/``.

    `on_step(name, seconds)` is called as each step finishes (the CLI prints it).
    """
    if days < 1 or intents_per_day < 1:
        raise UsageError("days and intents_per_day must be at least 1")
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    if dd.remote:
        raise UsageError(f"{dd.uri}: recon demo works in a local folder (--data DIR)")
    return _build(
        dd.root / f"demo-{seed}",
        seed=seed,
        days=days,
        intents_per_day=intents_per_day,
        keep_data=keep_data,
        quiet=quiet,
        on_step=on_step,
    )


def default_data_dir() -> Path:
    """$RECON_DATA when set, else a sandbox folder in the system temp dir (never ./data, so
    opening a notebook does not write into the repository)."""
    env = os.environ.get("RECON_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return Path(tempfile.gettempdir()) / "recon-sandbox-data"


def _has_snapshot(root: Path) -> bool:
    """True when `root` holds a committed snapshot part (the data-directory contract)."""
    return any(root.glob("snapshots/snapshot_date=*/run_id=*/part-*.parquet"))


def ensure_demo_data(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    seed: int = 7,
    days: int = DEMO_DAYS,
    intents_per_day: int = DEMO_INTENTS_PER_DAY,
) -> DataDir:
    """The data directory a notebook analyses: `data_dir` as it is when it holds a snapshot
    (the user's data, or a demo world built earlier); otherwise a sandbox world built there
    in-process (emulator → extract → late events → extract → statements → reconcile), keeping
    all the data, and re-used on later calls.

    `data_dir=None` means `default_data_dir()`. A demo folder whose build did not finish is
    built again; a non-empty folder the demo did not make is refused (a clear UsageError), so
    real data is never overwritten.
    """
    root = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir()
    marker = _read_marker(root)
    if _has_snapshot(root) and (marker is None or marker.get("state") == "done"):
        return DataDir(root)
    # notebooks draw their own charts: the demo's report goes without them, to save time
    _build(
        root,
        seed=seed,
        days=days,
        intents_per_day=intents_per_day,
        keep_data=True,
        quiet=True,
        charts=False,
    )
    return DataDir(root)
