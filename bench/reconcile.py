"""Benchmark: the DuckDB reconciliation engine vs Polars and pandas versions, and the floor.

    .venv/bin/python bench/reconcile.py                 # 1M intents x ~1M lines, every engine
    .venv/bin/python bench/reconcile.py --rows 10000000 --skip-pandas --memory-limit 2GB
    .venv/bin/python bench/reconcile.py --big           # same as the line above
    .venv/bin/python bench/reconcile.py --snapshots 30  # 1M, and a month of daily snapshots

The Polars peer collects every query with Polars' streaming engine (batches; Polars'
default since 2.0) at every size, and each query reads only the columns it uses: it peaks
near 0.6 GB at 1M and 4 GB at 10M. (Reading every column of both inputs into memory first,
it was killed by the out-of-memory killer at 24 GB at 10M, with either engine.)

The data is generated straight to Parquet with DuckDB (deterministic: hashes of the row
number, no RNG state) into a data directory laid out like the real one: one snapshot of N
intents (70% onramps) and about N statement lines. Every matching pass has work to do:

    45%  paid with a txid (onramp) / payout naming the reference (offramp)
    20%  reference in the payer's text / our remittance text
    20%  no reference at all: attributes (amount, window, name, masked document, PIX key)
     3%  no money moved                    -> onramp_missing_credit / offramp_missing_payout
     3%  wrong amount                      -> onramp_under/overpaid / payout_amount_mismatch
     2%  paid twice                        -> onramp_duplicate_credit / offramp_duplicate_payout
     2%  status behind the money           -> onramp_status_lag / offramp_stuck_paying_out
     5%  intent expired unpaid + a stranger's PIX -> unmatched_credit / unmatched_debit
    plus a fee every ~1000 lines.

Each engine runs in its own child process, so its wall time and peak RSS (VmHWM, see
_rss.py: not ru_maxrss, which a child inherits from the parent that generated the data)
are its own. The DuckDB side is the full
`recon.reconciliation.reconcile()` (catalog views, every model with reasons and control totals,
checks, run files written). The peers run the same passes and break rules over the same
Parquet and count breaks per category (no reason text, control totals or history checks), so
they do strictly less work; their counts must agree with DuckDB's:

- polars: the program a data team would write today (lazy frames, joins, window expressions;
  no Python loop over rows), POLARS_MAX_THREADS = --threads;
- lean (bench/lean.py): the Polars program's steps written in DuckDB SQL, in its style
  (columns read from Parquet per query, integer row keys): it tells DuckDB's cost for the
  matching from the cost of recon's design (2026-11-26: lean 2.0 s, Polars 1.7 s, recon 7.0 s
  at 1M);
- pandas: the straightforward version.

Both compare a payout's PIX key with the intent's destination by key type, as recon's
keys_compatible does (e-mail, random key, phone as E.164, CPF/CNPJ as masked documents).

The floor is DuckDB reading every column of the run's inputs once and writing files of the
size of the outputs that run wrote, nothing else: how far a run is from pure I/O.

With --snapshots S, the S - 1 days before the matched snapshot are written too, one
snapshot a day with its manifest (see generate()): recon's history checks read them all, the
peers match the latest snapshot only, and the floor reads every snapshot. Then the next
morning (next_day): one more snapshot, recon folding it onto the history state the run
before left, and recon reading all S + 1 (the line `next day (snapshot S+1): ...`).

The last line is for scripts:
    reconcile N×M: recon A s (RSS R MB), polars B s (ratio B/A), pandas C s (ratio C/A), floor F s (A/F)
(with --snapshots S: `reconcile N×M, S snapshots: ...`)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _rss import peak_rss_mb  # bench/ is on sys.path: the scripts run as files

BASE = datetime(2026, 10, 1, tzinfo=UTC)
SPAN_DAYS = 30
AS_OF = BASE + timedelta(days=SPAN_DAYS, hours=6)
RUN_ID = "20261031T000000000000Z-bench"

# PIX key types, as recon's pix_key_kind (recon/models/staging/_macros.sql) tells them apart:
# a random key (EVP, a uuid), a CPF/CNPJ as written, a phone once its punctuation is gone
# (RE2's \s is [\t\n\f\r ], not Unicode white space); each is matched whole
PIX_EVP = r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"
PIX_DOC = (
    r"[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}|[0-9]{2}\.?[0-9]{3}\.?[0-9]{3}/?[0-9]{4}-?[0-9]{2}"
)
PIX_PHONE_PUNCTUATION = r"[\t\n\f\r ().-]"
PIX_PHONE = r"(55)?[0-9]{10,11}"

# -- data -------------------------------------------------------------------------------------

GENERATE_SQL = """
CREATE OR REPLACE TABLE g AS
SELECT
    i,
    (hash(i * 13 + 5) % 100)::INTEGER AS scen,
    CASE WHEN hash(i * 3 + 1) % 10 < 7 THEN 'onramp' ELSE 'offramp' END AS intent_type,
    (1000 + hash(i * 7 + 3) % 5000000)::BIGINT AS amount,
    md5(i::VARCHAR) AS m,
    TIMESTAMPTZ '2026-10-01 00:00:00+00'
        + to_microseconds((i * ($span_us // $n))::BIGINT) AS created_at,
    (hash(i * 11 + 7) % 300000)::BIGINT AS payer,
    (5 + hash(i * 17 + 1) % 30)::BIGINT AS pay_delay_min
FROM range($n) AS t(i);

CREATE OR REPLACE TABLE gen_intents AS
SELECT
    substr(m, 1, 8) || '-' || substr(m, 9, 4) || '-4' || substr(m, 14, 3) || '-8'
        || substr(m, 18, 3) || '-' || substr(m, 21, 12) AS id,
    'inst-1' AS instance_id,
    'party-' || payer AS party_id,
    intent_type,
    2::BIGINT AS flow_version,
    NULL::VARCHAR AS adapter,
    CASE
        WHEN scen >= 95 THEN 'expired'
        WHEN scen >= 93 AND intent_type = 'onramp' THEN 'awaiting_fiat_payment'
        WHEN scen >= 93 THEN 'paying_out'
        ELSE 'completed'
    END AS status,
    NULL::VARCHAR AS status_reason,
    'REF-' || lpad(i::VARCHAR, 10, '0') AS client_reference,
    NULL::VARCHAR AS metadata,
    CASE WHEN intent_type = 'onramp' THEN created_at + INTERVAL 1 HOUR END AS expires_at,
    created_at,
    created_at + INTERVAL 40 MINUTE AS updated_at,
    'solana' AS chain_id,
    amount AS amount_cents,
    'pixInfo.amountCents' AS amount_source,
    'cnpj' AS pix_key_type,
    '12345678000195' AS pix_key_value,
    'RECON SANDBOX' AS pix_recipient_name,
    'BANCO' AS pix_bank,
    CASE WHEN intent_type = 'onramp' THEN 'RCN ' || upper(substr(m, 1, 7)) END
        AS pix_description,
    CASE WHEN intent_type = 'onramp' THEN amount END AS pix_amount_cents,
    'PAYER ' || payer AS party_display_name,
    '***.' || lpad((payer % 1000)::VARCHAR, 3, '0') || '.' || lpad((payer // 1000)::VARCHAR, 3, '0')
        || '-**' AS party_document_masked,
    NULL::VARCHAR AS party_solana_wallet,
    CASE WHEN intent_type = 'offramp'
        THEN '900' || lpad((payer % 1000)::VARCHAR, 3, '0') || lpad((payer // 1000)::VARCHAR, 3, '0') || '00'
    END AS destination_address,
    CAST($as_of AS TIMESTAMPTZ) AS snapshot_at,
    $run_id AS run_id,
    '{}' AS raw
FROM g;

CREATE OR REPLACE TABLE gen_lines AS
WITH base AS (
    SELECT g.*, gi.id, gi.client_reference, gi.party_display_name, gi.party_document_masked,
           gi.destination_address
    FROM g JOIN gen_intents AS gi ON gi.id = substr(g.m, 1, 8) || '-' || substr(g.m, 9, 4)
        || '-4' || substr(g.m, 14, 3) || '-8' || substr(g.m, 18, 3) || '-' || substr(g.m, 21, 12)
),
payments AS (
    -- the payment (or its stand-in) of every intent that has one
    SELECT
        i, 0 AS k, intent_type, id, client_reference, party_display_name,
        party_document_masked, destination_address, created_at, pay_delay_min, scen,
        CASE WHEN scen >= 88 AND scen < 91
             THEN amount + CASE WHEN i % 2 = 0 THEN 100 ELSE -100 END
             ELSE amount END AS amount,
        CASE
            WHEN scen < 45 AND intent_type = 'onramp' THEN upper(replace(id, '-', ''))
            WHEN scen >= 93 AND scen < 95 AND intent_type = 'onramp' THEN upper(replace(id, '-', ''))
        END AS txid,
        CASE
            WHEN scen < 45 AND intent_type = 'offramp' THEN 'PIX ENVIADO ' || client_reference
            WHEN scen >= 45 AND scen < 65 THEN 'pagamento ' || client_reference
            WHEN scen >= 88 AND scen < 93 THEN client_reference
        END AS description
    FROM base
    WHERE scen < 85 OR (scen >= 88 AND scen < 93)
       OR (scen >= 93 AND scen < 95 AND intent_type = 'onramp')
),
duplicates AS (
    SELECT i, 1 AS k, intent_type, id, client_reference, party_display_name,
           party_document_masked, destination_address, created_at, pay_delay_min + 10, scen,
           amount, txid, description
    FROM payments WHERE scen >= 91 AND scen < 93
),
strangers AS (
    SELECT i, 2 AS k, intent_type, id, client_reference, 'STRANGER ' || i,
           '***.' || lpad((i % 997)::VARCHAR, 3, '0') || '.999-**', '55' || i,
           created_at, pay_delay_min, scen, 7 + hash(i) % 900000, NULL, NULL
    FROM base WHERE scen >= 95
),
fees AS (
    SELECT i, 3 AS k, 'fee', id, NULL, NULL, NULL, NULL, created_at, 1, scen, 290, NULL,
           'TARIFA PIX'
    FROM base WHERE i % 1000 = 999
),
everything AS (
    SELECT * FROM payments UNION ALL SELECT * FROM duplicates
    UNION ALL SELECT * FROM strangers UNION ALL SELECT * FROM fees
)
SELECT
    md5('L' || i || '-' || k) AS line_id,
    'csv' AS source_format,
    'bench.csv' AS source_file,
    (i * 4 + k)::BIGINT AS source_line,
    '0001/1234567-8' AS account,
    created_at + to_minutes(pay_delay_min) AS booked_at,
    -- BIGINT as the store writes it (the strangers' UBIGINT hash would widen it to DOUBLE)
    CAST(CASE WHEN intent_type = 'onramp' THEN amount ELSE -amount END AS BIGINT)
        AS amount_cents,
    CASE WHEN intent_type = 'onramp' THEN 'credit' ELSE 'debit' END AS direction,
    CASE WHEN intent_type = 'onramp' THEN 'pix_in'
         WHEN intent_type = 'offramp' THEN 'pix_out' ELSE 'fee' END AS kind,
    CASE WHEN intent_type <> 'fee' THEN 'E18236120' || lpad((i * 4 + k)::VARCHAR, 23, '0') END
        AS end_to_end_id,
    txid,
    NULL::VARCHAR AS refund_of,
    party_display_name AS counterparty_name,
    party_document_masked AS counterparty_document,
    CASE WHEN intent_type = 'offramp' THEN destination_address
         WHEN intent_type = 'onramp' THEN '12345678000195' END AS counterparty_key,
    description,
    'B' || (i * 4 + k) AS bank_reference,
    TIMESTAMPTZ '2026-11-01 00:00:00+00' AS imported_at
FROM everything;
"""


def generate(root: Path, n: int, snapshots: int = 1) -> dict[str, Any]:
    """Write N intents and their statement lines as Parquet under `root` (a data dir).

    With `snapshots` > 1, the snapshots of the days before as well, one a day at the same
    hour, as a daily extract leaves them: each holds the intents created by then, an intent
    still under way at that hour in its stage before the last (awaiting the payment, or
    burning), so the history checks have real rows to compare and no status regression."""
    import duckdb

    snap = root / "snapshots" / "snapshot_date=2026-10-31" / f"run_id={RUN_ID}"
    stmt = root / "statements" / "source=csv"
    snap.mkdir(parents=True, exist_ok=True)
    stmt.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET threads = 2")
    con.execute("SET memory_limit = '2GB'")
    con.execute(f"SET temp_directory = '{root / '.tmp-gen'}'")
    params = {"n": n, "span_us": SPAN_DAYS * 86400 * 1_000_000, "as_of": AS_OF, "run_id": RUN_ID}
    for statement in GENERATE_SQL.split(";\n\n"):
        used = {k: v for k, v in params.items() if f"${k}" in statement}
        con.execute(statement, used or None)
    con.execute(f"COPY gen_intents TO '{snap / 'part-00000.parquet'}' (FORMAT parquet)")
    _write_manifest(snap, AS_OF, RUN_ID)
    for days in range(1, snapshots):
        at = AS_OF - timedelta(days=days)
        run_id = at.strftime("%Y%m%dT%H%M%S%fZ") + "-bench"
        earlier = root / "snapshots" / f"snapshot_date={at:%Y-%m-%d}" / f"run_id={run_id}"
        earlier.mkdir(parents=True, exist_ok=True)
        con.execute(
            f"""COPY (
                SELECT * REPLACE (
                    CASE WHEN updated_at <= $at THEN status
                         WHEN intent_type = 'onramp' THEN 'awaiting_fiat_payment'
                         ELSE 'burning' END AS status,
                    CAST($at AS TIMESTAMPTZ) AS snapshot_at,
                    $run_id AS run_id)
                FROM gen_intents WHERE created_at < $at
            ) TO '{earlier / "part-00000.parquet"}' (FORMAT parquet)""",
            {"at": at, "run_id": run_id},
        )
        _write_manifest(earlier, at, run_id)
    con.execute(f"COPY gen_lines TO '{stmt / 'bench.parquet'}' (FORMAT parquet)")
    # the statements cover the whole period (else every money-side break would wait for one)
    covered = root / "statements" / "coverage"
    covered.mkdir(parents=True, exist_ok=True)
    con.execute(
        f"""COPY (SELECT '0001/1234567-8' AS account, 'csv' AS source_format,
                'bench.csv' AS source_file, TIMESTAMPTZ '2026-09-30 00:00:00+00' AS covered_from,
                CAST($as_of AS TIMESTAMPTZ) AS covered_to, 'declared' AS basis,
                'all' AS scope, CAST($lines AS BIGINT) AS lines,
                TIMESTAMPTZ '2026-11-01 00:00:00+00' AS imported_at)
            TO '{covered / "bench.parquet"}' (FORMAT parquet)""",
        {"as_of": AS_OF, "lines": con.execute("SELECT count(*) FROM gen_lines").fetchall()[0][0]},
    )
    lines = con.execute("SELECT count(*) FROM gen_lines").fetchall()[0][0]
    con.close()
    return {"intents": n, "lines": int(lines), "seconds": time.perf_counter() - started}


def _write_manifest(folder: Path, at: datetime, run_id: str) -> None:
    """The `_manifest.json` a daily extract leaves beside its part: a full, consistent walk
    taken at `at` (the history checks order snapshots by it)."""
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(folder / "part-00000.parquet").metadata.num_rows
    manifest = {
        "run_id": run_id,
        "snapshot_at": at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "snapshot_time_source": "server",
        "consistent": True,
        "kind": "full",
        "filters": {"intent_type": "all", "status": "all"},
        "rows": rows,
        "unique_ids": rows,
        "files": ["part-00000.parquet"],
    }
    (folder / "_manifest.json").write_text(json.dumps(manifest, indent=2))


def record_manifests(root: Path) -> None:
    """A manifest for each snapshot a bench of an earlier version wrote without one."""
    import pyarrow.parquet as pq

    for folder in sorted(root.glob("snapshots/*/run_id=*")):
        if not (folder / "_manifest.json").is_file():
            first = pq.read_table(folder / "part-00000.parquet", columns=["snapshot_at"])
            at = first.column(0)[0].as_py()
            _write_manifest(folder, at, folder.name.removeprefix("run_id="))


def next_day(root: Path, args: argparse.Namespace) -> None:
    """With daily snapshots: the job's next morning. A run over the S snapshots leaves its
    history state; then one more snapshot (the latest again, a day later), and a run that
    folds it onto that state, against a run that reads all S + 1. The added snapshot is
    removed after, so the data directory is as generated."""
    at = AS_OF + timedelta(days=1)
    run_id = at.strftime("%Y%m%dT%H%M%S%fZ") + "-bench-next"
    folder = root / "snapshots" / f"snapshot_date={at:%Y-%m-%d}" / f"run_id={run_id}"
    shutil.rmtree(root / "runs", ignore_errors=True)
    spawn("duckdb", root, args)  # the day before, which leaves the state
    try:
        import duckdb

        folder.mkdir(parents=True)
        with duckdb.connect() as con:
            con.execute("SET TimeZone = 'UTC'")
            con.execute(
                f"""COPY (SELECT * REPLACE (CAST($at AS TIMESTAMPTZ) AS snapshot_at,
                    $run_id AS run_id) FROM read_parquet('{latest_snapshot(root)}'))
                TO '{folder / "part-00000.parquet"}' (FORMAT parquet)""",
                {"at": at, "run_id": run_id},
            )
        _write_manifest(folder, at, run_id)
        folded = spawn("duckdb", root, args)
        shutil.rmtree(root / "runs", ignore_errors=True)
        full = spawn("duckdb", root, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if folder.parent.is_dir() and not any(folder.parent.iterdir()):
            folder.parent.rmdir()
        shutil.rmtree(root / "runs", ignore_errors=True)
    print(
        f"next day (snapshot {args.snapshots + 1}): recon {folded['seconds']:.2f} s from the "
        f"history state the run before left, {full['seconds']:.2f} s reading all "
        f"{args.snapshots + 1} snapshots; same breaks: {folded['counts'] == full['counts']}"
    )


def latest_snapshot(root: Path) -> str:
    """The snapshot the peers match against: the latest (the earlier ones, with --snapshots,
    only feed recon's history checks, which the peers do not have)."""
    import glob

    return sorted(glob.glob(str(root / "snapshots/*/*/part-*.parquet")))[-1]


def record_coverage(root: Path) -> None:
    """Say what the bench's bank statement covers (the whole span up to AS_OF), as an import
    would: without it every intent waits for statements and no money-side break is raised."""
    from recon import testing
    from recon.config import DataDir

    if (root / "statements" / "coverage").is_dir():
        return
    start = BASE - timedelta(days=1)
    testing.coverage(DataDir(root), start, AS_OF + timedelta(days=1), account="0001/1234567-8")


# -- the two engines (each in a child process) ------------------------------------------------


def run_duckdb(root: Path, memory_limit: str, threads: int) -> dict[str, Any]:
    from recon.config import DataDir
    from recon.reconciliation import ReconcileSettings, reconcile

    settings = ReconcileSettings(memory_limit=memory_limit, threads=threads)
    started = time.perf_counter()
    # the matching passes alone, as the pandas peer does them: no intent-flow frames for the
    # report (flows.parquet), which are analytics over the snapshots, not matching
    result = reconcile(DataDir(root), as_of=AS_OF, settings=settings, strict=False, flows=False)
    seconds = time.perf_counter() - started
    s = result.summary
    return {
        "seconds": seconds,
        "counts": {k: v for k, v in s.counts.items() if v},
        "matches": s.matches_by_rule,
        "checks_passed": s.checks_passed,
        "lines": _count_lines(root),
    }


def _count_lines(root: Path) -> int:
    import glob

    import pyarrow.parquet as pq

    files = glob.glob(str(root / "statements/source=*/*.parquet"))
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def run_pandas(root: Path) -> dict[str, Any]:
    import glob

    import numpy as np
    import pandas as pd

    started = time.perf_counter()
    as_of = pd.Timestamp(AS_OF)
    tol = 0
    intents = pd.read_parquet(latest_snapshot(root))
    lines = pd.concat(
        pd.read_parquet(p) for p in glob.glob(str(root / "statements/source=*/*.parquet"))
    )
    lines = lines[lines.booked_at <= as_of].copy()
    lines["amount_abs"] = lines.amount_cents.abs()
    intents["direction"] = np.where(intents.intent_type == "onramp", "credit", "debit")
    intents["txid_key"] = intents.id.str.replace("-", "").str.upper()
    pay = lines[lines.kind.isin(["pix_in", "pix_out"])]

    # pass 1: txid
    t = pay[pay.txid.notna()].merge(
        intents[["id", "txid_key", "direction"]],
        left_on=["txid", "direction"],
        right_on=["txid_key", "direction"],
    )[["line_id", "id"]]
    t["rule"] = "txid"

    # pass 2: reference (token join on the rarest token of each unique reference)
    refs = pd.concat(
        [
            intents[["id", "direction"]].assign(reference=intents.id.str.upper()),
            intents[["id", "direction"]].assign(reference=intents.txid_key),
            intents[["id", "direction"]].assign(reference=intents.client_reference.str.upper()),
            intents[["id", "direction"]].assign(reference=intents.pix_description.str.upper()),
        ]
    ).dropna(subset=["reference"])
    refs = refs[refs.reference.str.len() >= 6]
    n_ids = refs.groupby("reference").id.nunique()
    refs = refs[refs.reference.isin(n_ids[n_ids == 1].index)].drop_duplicates("reference")
    rtok = refs.assign(token=refs.reference.str.split(r"[^A-Z0-9_-]+", regex=True)).explode("token")
    rtok = rtok[rtok.token.str.len() >= 3]
    rtok["freq"] = rtok.groupby("token").token.transform("size")
    rtok["neg_len"] = -rtok.token.str.len()
    rtok = rtok.sort_values(["freq", "neg_len", "token"]).drop_duplicates("reference")
    rest = pay[~pay.line_id.isin(t.line_id) & pay.description.notna()].copy()
    rest["desc"] = rest.description.str.upper()
    ltok = rest.assign(token=rest.desc.str.split(r"[^A-Z0-9_-]+", regex=True)).explode("token")
    ltok = ltok[ltok.token.str.len() >= 3].drop_duplicates(["line_id", "token"])
    cand = ltok[["line_id", "direction", "desc", "token"]].merge(
        rtok[["id", "direction", "reference", "token"]], on=["token", "direction"]
    )
    cand = cand[[r in d for r, d in zip(cand.reference, cand.desc, strict=True)]]
    cand = cand.drop_duplicates(["line_id", "id"])
    per_line = cand.groupby("line_id").id.transform("nunique")
    r_matched = cand[per_line == 1][["line_id", "id"]].assign(rule="reference")
    r_ambiguous = cand[per_line > 1][["line_id", "id"]]

    # pass 3: attributes
    def norm_name(s: pd.Series) -> pd.Series:
        return s.str.upper().str.replace(r"[^A-Z0-9]+", " ", regex=True).str.strip()

    def norm_doc(s: pd.Series) -> pd.Series:
        return s.str.replace(r"[^0-9*]", "", regex=True).replace("", None)

    def docs_ok(a: Any, b: Any) -> bool:
        if not isinstance(a, str) or not isinstance(b, str):
            return True
        return len(a) == len(b) and all(
            x == "*" or y == "*" or x == y for x, y in zip(a, b, strict=True)
        )

    def names_ok(a: Any, b: Any) -> bool:
        if not isinstance(a, str) or not isinstance(b, str):
            return True
        return a.startswith(b) or b.startswith(a)

    # PIX keys are compared by type (recon's keys_compatible), on the pairs that need it
    def key_kind(k: pd.Series) -> np.ndarray:
        trimmed = k.str.strip(" ")
        rules = [
            (k.str.contains("@", regex=False), "email"),
            (trimmed.str.lower().str.fullmatch(PIX_EVP), "evp"),
            (trimmed.str.startswith("+"), "phone"),
            (k.str.contains("*", regex=False), "doc"),
            (trimmed.str.fullmatch(PIX_DOC), "doc"),
            (trimmed.str.fullmatch("[0-9]{11}"), "doc_or_phone"),
            (
                k.str.replace(PIX_PHONE_PUNCTUATION, "", regex=True).str.fullmatch(PIX_PHONE),
                "phone",
            ),
        ]
        chosen = [found.to_numpy(dtype=bool) for found, _ in rules]
        return np.select(chosen, [kind for _, kind in rules], "other")

    def e164(k: pd.Series) -> pd.Series:
        digits = k.str.replace("[^0-9]", "", regex=True)
        return digits.where(~digits.str.len().isin([10, 11]), "55" + digits)

    def docs_compatible(a: pd.Series, b: pd.Series) -> np.ndarray:  # positions are columns
        same = (a.str.len() == b.str.len()).to_numpy(dtype=bool)
        width = pd.concat([a.str.len(), b.str.len()]).max()
        for pos in range(0 if pd.isna(width) else int(width)):
            x, y = a.str[pos], b.str[pos]
            agree = (x == y) | (x == "*") | (y == "*") | (x.isna() & y.isna())
            same = same & agree.to_numpy(dtype=bool)
        return (a.isna() | b.isna() | (a == b)).to_numpy(dtype=bool) | same

    def keys_compatible(a: pd.Series, b: pd.Series) -> np.ndarray:  # neither is missing
        ka, kb = key_kind(a), key_kind(b)

        def either(kind: str) -> np.ndarray:
            return (ka == kind) | (kb == kind)

        def same(f: Callable[[pd.Series], pd.Series]) -> np.ndarray:
            return (ka == kb) & (f(a) == f(b)).to_numpy(dtype=bool)

        return np.select(
            [either("email"), either("evp"), either("other"), either("phone")],
            [
                same(lambda k: k.str.strip(" ").str.lower()),
                same(lambda k: k.str.strip(" ").str.replace("-", "", regex=False).str.lower()),
                same(lambda k: k.str.replace("[^0-9A-Za-z]", "", regex=True).str.lower()),
                (ka != "doc") & (kb != "doc") & (e164(a) == e164(b)).to_numpy(dtype=bool),
            ],
            docs_compatible(norm_doc(a), norm_doc(b)),
        )

    claimed = set(t.line_id) | set(cand.line_id)
    taken = set(t.id) | set(r_matched.id)
    al = pay[~pay.line_id.isin(claimed)].copy()
    ai = intents[~intents.id.isin(taken)].copy()
    ai["window_end"] = np.where(
        ai.intent_type == "onramp",
        (ai.expires_at + pd.Timedelta(minutes=30)).fillna(as_of),
        as_of,
    )
    ai["window_end"] = pd.to_datetime(ai.window_end, utc=True)
    pairs = al[
        [
            "line_id",
            "direction",
            "amount_abs",
            "booked_at",
            "counterparty_name",
            "counterparty_document",
            "counterparty_key",
        ]
    ].merge(
        ai[
            [
                "id",
                "intent_type",
                "direction",
                "amount_cents",
                "created_at",
                "window_end",
                "party_display_name",
                "party_document_masked",
                "destination_address",
            ]
        ],
        left_on=["direction", "amount_abs"],
        right_on=["direction", "amount_cents"],
    )
    pairs = pairs[(pairs.booked_at >= pairs.created_at) & (pairs.booked_at <= pairs.window_end)]
    n1, n2 = norm_name(pairs.counterparty_name), norm_name(pairs.party_display_name)
    d1, d2 = norm_doc(pairs.counterparty_document), norm_doc(pairs.party_document_masked)
    ok = np.array(
        [names_ok(a, b) and docs_ok(c, d) for a, b, c, d in zip(n1, n2, d1, d2, strict=True)],
        dtype=bool,
    )
    # a payout's key vs the intent's destination; a credit's key is our own receiving key
    k1, k2 = pairs.counterparty_key, pairs.destination_address
    keyed = ((pairs.intent_type != "onramp") & k1.notna() & k2.notna() & (k1 != k2)).to_numpy()
    ok[keyed] = ok[keyed] & keys_compatible(k1[keyed], k2[keyed])
    pairs = pairs[ok]
    lc = pairs.groupby("line_id").id.transform("size")
    ic = pairs.groupby("id").line_id.transform("size")
    a_matched = pairs[(lc == 1) & (ic == 1)][["line_id", "id"]].assign(rule="attributes")
    a_ambiguous = pairs[~((lc == 1) & (ic == 1))][["line_id", "id"]]

    # matches, duplicates (earliest booked is the match)
    m = pd.concat([t, r_matched, a_matched]).merge(
        lines[["line_id", "booked_at", "end_to_end_id", "amount_abs"]], on="line_id"
    )
    m = m.merge(intents[["id", "intent_type", "status", "amount_cents", "updated_at"]], on="id")
    m = m.sort_values(["id", "booked_at", "end_to_end_id", "line_id"])
    m["rank"] = m.groupby("id").cumcount()
    first, dups = m[m["rank"] == 0], m[m["rank"] > 0]
    ambiguous_lines = set(r_ambiguous.line_id) | set(a_ambiguous.line_id)
    ambiguous_ids = set(r_ambiguous.id) | set(a_ambiguous.id)
    counts: dict[str, int] = {}

    def add(name: str, n: int) -> None:
        if n:
            counts[name] = counts.get(name, 0) + int(n)

    on, off = first[first.intent_type == "onramp"], first[first.intent_type == "offramp"]
    delta = on.amount_abs - on.amount_cents
    add("onramp_underpaid", (delta < -tol).sum())
    add("onramp_overpaid", (delta > tol).sum())
    add("onramp_duplicate_credit", (dups.intent_type == "onramp").sum())
    add("offramp_duplicate_payout", (dups.intent_type == "offramp").sum())
    add("onramp_credit_after_expiry", on.status.isin(["expired", "canceled"]).sum())
    lag = on.status.isin(["created", "requires_compliance", "awaiting_fiat_payment"])
    lag &= delta.abs() <= tol
    lag &= on.booked_at < as_of - pd.Timedelta(minutes=30)
    add("onramp_status_lag", lag.sum())
    add("offramp_payout_amount_mismatch", ((off.amount_abs - off.amount_cents).abs() > tol).sum())
    add(
        "offramp_payout_for_failed_intent",
        off.status.isin(["failed", "canceled", "expired", "refunded"]).sum(),
    )
    paid = set(first.id)
    unpaid = intents[~intents.id.isin(paid) & ~intents.id.isin(ambiguous_ids)]
    add(
        "onramp_missing_credit",
        (
            (unpaid.intent_type == "onramp")
            & unpaid.status.isin(
                ["fiat_received", "minting", "awaiting_onchain_transfer", "completed"]
            )
        ).sum(),
    )
    add(
        "offramp_missing_payout",
        ((unpaid.intent_type == "offramp") & (unpaid.status == "completed")).sum(),
    )
    add(
        "offramp_stuck_paying_out",
        (
            (unpaid.intent_type == "offramp")
            & (unpaid.status == "paying_out")
            & (unpaid.updated_at < as_of - pd.Timedelta(hours=2))
        ).sum(),
    )
    add("ambiguous_match", len(ambiguous_lines))
    left = lines[
        (lines.kind != "fee")
        & ~lines.line_id.isin(m.line_id)
        & ~lines.line_id.isin(ambiguous_lines)
    ]
    add("unmatched_credit", (left.direction == "credit").sum())
    add("unmatched_debit", (left.direction == "debit").sum())
    matches = {"txid": 0, "reference": 0, "attributes": 0, "refund": 0}
    matches.update(first.rule.value_counts().to_dict())
    return {
        "seconds": time.perf_counter() - started,
        "counts": dict(sorted(counts.items())),
        "matches": {k: int(v) for k, v in matches.items()},
    }


def run_polars(root: Path, engine: str = "streaming") -> dict[str, Any]:
    """The same passes and break rules as run_pandas, as an idiomatic lazy Polars program.

    Every query starts from a lazy scan of the Parquet files and reads only the columns it
    uses; rows are keyed by their row number in the files (`with_row_index`, the same in
    every scan), so joins compare integers, not ids' text. What passes from one query to the
    next is (line, intent) key pairs and the words of the lines' texts. The reference pass
    is organised as recon's is: the references are cut into words and kept only where a
    word is also a word of some line's text, then joined on their most specific word and
    checked with a substring test. `engine` is Polars' query engine for every collect:
    "streaming" (batches; Polars' default since 2.0) or "in-memory"."""
    import glob

    import polars as pl

    started = time.perf_counter()
    tol = 0
    as_of = AS_OF

    def collect(*queries: pl.LazyFrame) -> list[pl.DataFrame]:
        return pl.collect_all(queries, engine=engine)

    intents = (
        pl.scan_parquet(latest_snapshot(root))
        .with_row_index("intent_key")
        .with_columns(
            direction=pl.when(pl.col("intent_type") == "onramp")
            .then(pl.lit("credit"))
            .otherwise(pl.lit("debit"))
        )
    )
    lines = (
        pl.scan_parquet(glob.glob(str(root / "statements/source=*/*.parquet")))
        .with_row_index("line_key")
        .filter(pl.col("booked_at") <= as_of)
        .with_columns(amount_abs=pl.col("amount_cents").abs())
    )
    pay = lines.filter(pl.col("kind").is_in(["pix_in", "pix_out"]))
    txid_form = pl.col("id").str.replace_all("-", "", literal=True).str.to_uppercase()

    # pass 1: txid; and the length of an intent id without its hyphens, the only length a
    # word of a line's text can have to be an id
    t, id_lengths = collect(
        pay.filter(pl.col("txid").is_not_null())
        .select("line_key", "direction", "txid")
        .join(intents.select("intent_key", "direction", txid=txid_form), on=["txid", "direction"])
        .select("line_key", "intent_key"),
        intents.select(
            n=pl.col("id").str.len_chars() - pl.col("id").str.count_matches("-", literal=True)
        ).select(shortest=pl.col("n").min(), longest=pl.col("n").max()),
    )
    shortest, longest = id_lengths.row(0)

    # pass 2: reference. The texts of the lines the txid pass left are cut into words (of
    # 3+ characters, upper case); an intent id (with or without hyphens) is a word; a
    # free-text reference joins on its word with the most digits (then the longest) and
    # must then be in the text.
    def words_of(text: pl.Expr) -> pl.Expr:  # str.split(r"[^A-Z0-9_-]+"), with empties
        return text.str.replace_all(r"[^A-Z0-9_-]+", " ").str.split(" ")

    (words,) = collect(
        pay.join(t.lazy(), on="line_key", how="anti")
        .filter(pl.col("description").is_not_null())
        .select("line_key", "direction", text=pl.col("description").str.to_uppercase())
        .with_columns(token=words_of(pl.col("text")))
        .explode("token")
        .filter(pl.col("token").str.len_chars() >= 3)
    )
    line_words = words.lazy().select("token").unique()
    id_pairs = (
        words.lazy()
        .select(
            "line_key", "direction", token=pl.col("token").str.replace_all("-", "", literal=True)
        )
        .filter(pl.col("token").str.len_chars().is_between(shortest, longest))
        .join(intents.select("intent_key", "direction", token=txid_form), on=["token", "direction"])
        .select("line_key", "intent_key")
    )
    references = (
        intents.select(
            "intent_key",
            "direction",
            reference=pl.concat_list(
                pl.col("client_reference").str.to_uppercase(),
                pl.col("pix_description").str.to_uppercase(),
            ),
        )
        .explode("reference")
        .filter(pl.col("reference").str.len_chars() >= 6)
    )
    # the join word: most digits, then the longest, the first of equals (as one number)
    w = pl.element().filter(pl.element().str.len_chars() >= 3)
    rank = w.str.count_matches("[0-9]").cast(pl.Int64) * 2**32 + w.str.len_chars()
    # only a reference sharing a word with some line can be in a text; whether it names one
    # intent depends on its text alone, so each reference kept keeps all its intents
    keyed = (
        references.with_columns(token=words_of(pl.col("reference")))
        .explode("token")
        .join(line_words, on="token", how="semi")
        .group_by("reference")
        .agg(
            pl.col("intent_key").min(),
            last=pl.col("intent_key").max(),
            direction=pl.col("direction").first(),
        )
        .filter(pl.col("intent_key") == pl.col("last"))
        .with_columns(
            token=words_of(pl.col("reference")).list.eval(w.get(rank.arg_max())).list.first()
        )
        .join(line_words, on="token", how="semi")
    )
    reference_pairs = (
        words.lazy()
        .join(
            keyed.select("token", "direction", "reference", "intent_key"), on=["token", "direction"]
        )
        .filter(pl.col("text").str.contains(pl.col("reference"), literal=True))
        .select("line_key", "intent_key")
    )
    (cand,) = collect(
        pl.concat([id_pairs, reference_pairs])
        .unique()
        .with_columns(per_line=pl.len().over("line_key"))
    )
    del words
    r_matched = cand.filter(pl.col("per_line") == 1).select("line_key", "intent_key")
    r_ambiguous = cand.filter(pl.col("per_line") > 1).select("line_key", "intent_key")

    # pass 3: attributes: the same amount and direction, booked inside the intent's window,
    # a compatible counterparty (name, masked document and, for a payout, PIX key), and a
    # unique candidate on both sides
    claimed = pl.concat([t.select("line_key"), cand.select("line_key")])
    taken = pl.concat([t.select("intent_key"), r_matched.select("intent_key")])
    (pairs,) = collect(
        pay.join(claimed.lazy(), on="line_key", how="anti")
        .select(
            "line_key",
            "direction",
            "amount_abs",
            "booked_at",
            "counterparty_name",
            "counterparty_document",
            "counterparty_key",
        )
        .join(
            intents.join(taken.lazy(), on="intent_key", how="anti").select(
                "intent_key",
                "intent_type",
                "direction",
                "amount_cents",
                "created_at",
                "party_display_name",
                "party_document_masked",
                "destination_address",
                window_end=pl.when(pl.col("intent_type") == "onramp")
                .then((pl.col("expires_at") + pl.duration(minutes=30)).fill_null(as_of))
                .otherwise(pl.lit(as_of)),
            ),
            left_on=["direction", "amount_abs"],
            right_on=["direction", "amount_cents"],
        )
        .filter(pl.col("booked_at").is_between(pl.col("created_at"), pl.col("window_end")))
    )
    name = pl.col("counterparty_name"), pl.col("party_display_name")
    doc = pl.col("counterparty_document"), pl.col("party_document_masked")
    key = pl.col("counterparty_key"), pl.col("destination_address")
    onramp = pl.col("intent_type") == "onramp"

    def as_it_stands(a: pl.Expr, b: pl.Expr) -> pl.Expr:
        return a.is_null() | b.is_null() | (a == b)

    def norm_name(c: pl.Expr) -> pl.Expr:
        return c.str.to_uppercase().str.replace_all(r"[^A-Z0-9]+", " ").str.strip_chars()

    def norm_doc(c: pl.Expr) -> pl.Expr:
        d = c.str.replace_all(r"[^0-9*]", "")
        return pl.when(d != "").then(d)

    # a value equal on both sides (or unknown on one) is compatible as it stands: only the
    # pairs whose texts differ are normalized and compared (a credit's PIX key is our own
    # receiving key: it says nothing about the payer, and is not compared)
    plain = as_it_stands(*name) & as_it_stands(*doc) & (onramp | as_it_stands(*key))
    differ = pairs.filter(~plain).with_columns(
        n1=norm_name(name[0]),
        n2=norm_name(name[1]),
        d1=norm_doc(doc[0]),
        d2=norm_doc(doc[1]),
        kd1=norm_doc(key[0]),
        kd2=norm_doc(key[1]),
    )
    # masked documents agree where neither shows '*': the same length and, position by
    # position, equal digits (positions are columns of the expression, not rows)
    width = differ.select(pl.max_horizontal(pl.col("d1", "d2", "kd1", "kd2").str.len_chars().max()))
    width = width.item() or 0

    def docs_compatible(a: pl.Expr, b: pl.Expr) -> pl.Expr:
        same = a.str.len_chars() == b.str.len_chars()
        for pos in range(width):
            x, y = a.str.slice(pos, 1), b.str.slice(pos, 1)
            same = same & ((x == y) | (x == "*") | (y == "*"))
        return a.is_null() | b.is_null() | (a == b) | same

    # PIX keys are compared by type (recon's keys_compatible): e-mails and random keys
    # exactly, phones as E.164, CPF/CNPJ as masked documents; keys of different types never
    def key_kind(k: pl.Expr) -> pl.Expr:
        trimmed = k.str.strip_chars(" ")
        return (
            pl.when(k.str.contains("@", literal=True))
            .then(pl.lit("email"))
            .when(trimmed.str.to_lowercase().str.contains(f"^(?:{PIX_EVP})$"))
            .then(pl.lit("evp"))
            .when(trimmed.str.starts_with("+"))
            .then(pl.lit("phone"))
            .when(k.str.contains("*", literal=True))
            .then(pl.lit("doc"))
            .when(trimmed.str.contains(f"^(?:{PIX_DOC})$"))
            .then(pl.lit("doc"))
            .when(trimmed.str.contains(r"^[0-9]{11}$"))
            .then(pl.lit("doc_or_phone"))
            .when(k.str.replace_all(PIX_PHONE_PUNCTUATION, "").str.contains(f"^(?:{PIX_PHONE})$"))
            .then(pl.lit("phone"))
            .otherwise(pl.lit("other"))
        )

    def e164(k: pl.Expr) -> pl.Expr:
        digits = k.str.replace_all("[^0-9]", "")
        return pl.when(digits.str.len_chars().is_in([10, 11])).then("55" + digits).otherwise(digits)

    def keys_compatible(a: pl.Expr, b: pl.Expr, as_documents: pl.Expr) -> pl.Expr:
        ka, kb = key_kind(a), key_kind(b)

        def either(kind: str) -> pl.Expr:
            return (ka == kind) | (kb == kind)

        def same(f: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
            return (ka == kb) & (f(a) == f(b))

        agree = (
            pl.when(either("email"))
            .then(same(lambda k: k.str.strip_chars(" ").str.to_lowercase()))
            .when(either("evp"))
            .then(
                same(
                    lambda k: (
                        k.str.strip_chars(" ")
                        .str.replace_all("-", "", literal=True)
                        .str.to_lowercase()
                    )
                )
            )
            .when(either("other"))
            .then(same(lambda k: k.str.replace_all("[^0-9A-Za-z]", "").str.to_lowercase()))
            .when(either("phone"))
            .then((ka != "doc") & (kb != "doc") & (e164(a) == e164(b)))
            .otherwise(as_documents)
        )
        return a.is_null() | b.is_null() | agree

    names_ok = (
        pl.col("n1").is_null()
        | pl.col("n2").is_null()
        | pl.col("n1").str.starts_with(pl.col("n2"))
        | pl.col("n2").str.starts_with(pl.col("n1"))
    )
    docs_ok = docs_compatible(pl.col("d1"), pl.col("d2"))
    keys_ok = onramp | keys_compatible(*key, docs_compatible(pl.col("kd1"), pl.col("kd2")))
    (pairs,) = collect(
        pl.concat(
            [
                pairs.lazy().filter(plain).select("line_key", "intent_key"),
                differ.lazy().filter(names_ok & docs_ok & keys_ok).select("line_key", "intent_key"),
            ]
        ).with_columns(unique=(pl.len().over("line_key") == 1) & (pl.len().over("intent_key") == 1))
    )
    a_matched = pairs.filter("unique").select("line_key", "intent_key")
    a_ambiguous = pairs.filter(~pl.col("unique")).select("line_key", "intent_key")

    # matches, duplicates (the earliest booked is the match), and the breaks
    matched = pl.concat(
        [
            t.with_columns(rule=pl.lit("txid")),
            r_matched.with_columns(rule=pl.lit("reference")),
            a_matched.with_columns(rule=pl.lit("attributes")),
        ]
    )
    ambiguous = pl.concat([r_ambiguous, a_ambiguous])
    first = pl.col("first")
    delta = pl.col("amount_abs") - pl.col("amount_cents")
    on = pl.col("intent_type") == "onramp"
    off = pl.col("intent_type") == "offramp"
    lag_statuses = ["created", "requires_compliance", "awaiting_fiat_payment"]
    paid_statuses = ["fiat_received", "minting", "awaiting_onchain_transfer", "completed"]
    rules = ["txid", "reference", "attributes"]
    # most intents have one matched line: only the intents with several are ordered, on
    # the few columns the order needs; all but the first of each are duplicates
    duplicates = (
        matched.lazy()
        .filter(pl.len().over("intent_key") > 1)
        .select("line_key", "intent_key")
        .join(lines.select("line_key", "booked_at", "end_to_end_id", "line_id"), on="line_key")
        .sort("intent_key", "booked_at", "end_to_end_id", "line_id")
        .filter(~pl.col("intent_key").is_first_distinct())
        .select("line_key", first=pl.lit(False))
    )
    on_matches = (
        matched.lazy()
        .join(duplicates, on="line_key", how="left")
        .with_columns(first=pl.col("first").fill_null(True))
        .join(lines.select("line_key", "booked_at", "amount_abs"), on="line_key")
        .join(
            intents.select("intent_key", "intent_type", "status", "amount_cents"), on="intent_key"
        )
        .select(
            onramp_underpaid=(first & on & (delta < -tol)).sum(),
            onramp_overpaid=(first & on & (delta > tol)).sum(),
            onramp_duplicate_credit=(~first & on).sum(),
            offramp_duplicate_payout=(~first & off).sum(),
            onramp_credit_after_expiry=(
                first & on & pl.col("status").is_in(["expired", "canceled"])
            ).sum(),
            onramp_status_lag=(
                first
                & on
                & pl.col("status").is_in(lag_statuses)
                & (delta.abs() <= tol)
                & (pl.col("booked_at") < as_of - timedelta(minutes=30))
            ).sum(),
            offramp_payout_amount_mismatch=(first & off & (delta.abs() > tol)).sum(),
            offramp_payout_for_failed_intent=(
                first & off & pl.col("status").is_in(["failed", "canceled", "expired", "refunded"])
            ).sum(),
            **{f"rule_{r}": (first & (pl.col("rule") == r)).sum() for r in rules},
        )
    )
    on_unpaid = (
        intents.join(matched.lazy(), on="intent_key", how="anti")
        .join(ambiguous.lazy(), on="intent_key", how="anti")
        .select(
            onramp_missing_credit=(on & pl.col("status").is_in(paid_statuses)).sum(),
            offramp_missing_payout=(off & (pl.col("status") == "completed")).sum(),
            offramp_stuck_paying_out=(
                off
                & (pl.col("status") == "paying_out")
                & (pl.col("updated_at") < as_of - timedelta(hours=2))
            ).sum(),
        )
    )
    on_lines = (
        lines.filter(pl.col("kind") != "fee")
        .join(matched.lazy(), on="line_key", how="anti")
        .join(ambiguous.lazy(), on="line_key", how="anti")
        .select(
            unmatched_credit=(pl.col("direction") == "credit").sum(),
            unmatched_debit=(pl.col("direction") == "debit").sum(),
        )
    )
    counted: dict[str, int] = {}
    for frame in collect(on_matches, on_unpaid, on_lines):
        counted |= frame.row(0, named=True)
    counted["ambiguous_match"] = ambiguous["line_key"].n_unique()
    matches = {"txid": 0, "reference": 0, "attributes": 0, "refund": 0}
    matches |= {r: int(counted.pop(f"rule_{r}")) for r in rules}
    return {
        "seconds": time.perf_counter() - started,
        "counts": dict(sorted((k, int(v)) for k, v in counted.items() if v)),
        "matches": matches,
    }


def run_floor(root: Path, threads: int) -> dict[str, Any]:
    """The floor under a run: DuckDB reading every column of the run's inputs once and writing
    files of its outputs' size (the run just written under runs/), nothing else."""
    import glob

    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    inputs = [
        glob.glob(str(root / "snapshots/*/*/part-*.parquet")),
        glob.glob(str(root / "statements/source=*/*.parquet")),
    ]
    outputs = sorted(glob.glob(str(root / "runs/*/*.parquet")))
    for n, path in enumerate(outputs):  # held in memory first: only the write is timed
        con.execute(f"CREATE TABLE out_{n} AS SELECT * FROM read_parquet('{path}')")
    started = time.perf_counter()
    for files in inputs:
        source = f"read_parquet({files!r})"
        columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        # hashing every value makes DuckDB decode every column of every row group
        con.execute(f"SELECT sum(hash({', '.join(columns)})) FROM {source}").fetchall()
    out_dir = Path(tempfile.mkdtemp(prefix="floor-", dir=root))
    for n in range(len(outputs)):
        con.execute(f"COPY out_{n} TO '{out_dir / f'{n}.parquet'}' (FORMAT parquet)")
    seconds = time.perf_counter() - started
    shutil.rmtree(out_dir)
    return {"seconds": seconds, "outputs": len(outputs)}


def child(args: argparse.Namespace) -> None:
    root = Path(args.data)
    if args.child == "duckdb":
        out = run_duckdb(root, args.memory_limit, args.threads)
    elif args.child == "floor":
        out = run_floor(root, args.threads)
    elif args.child == "lean":
        from lean import run_lean

        out = run_lean(root, args.threads)
    elif args.child == "polars":
        out = run_polars(root)
    else:
        out = run_pandas(root)
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out, sort_keys=True, default=str))


def spawn(kind: str, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [
        sys.executable, __file__, "--child", kind, "--data", str(root),
        "--memory-limit", args.memory_limit, "--threads", str(args.threads),
        "--rows", str(args.rows),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    # the peers get the cores DuckDB gets
    env["POLARS_MAX_THREADS"] = str(args.threads)
    started = time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        how = (
            f"killed by signal {-proc.returncode}"
            + (
                " (SIGKILL: the kernel's out-of-memory killer, as a rule)"
                if proc.returncode == -9
                else ""
            )
            if proc.returncode < 0
            else f"exit {proc.returncode}"
        )
        raise PeerFailed(
            f"{kind} run failed after {time.perf_counter() - started:.0f} s: {how}\n"
            f"{proc.stderr[-3000:]}".rstrip()
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


class PeerFailed(Exception):
    """A child run that did not finish (out of memory, a crash)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="intents (lines ~ the same)")
    parser.add_argument(
        "--big", action="store_true", help="10M x 10M: DuckDB and Polars (streaming), no pandas"
    )
    parser.add_argument("--skip-pandas", action="store_true")
    parser.add_argument("--skip-polars", action="store_true")
    parser.add_argument(
        "--skip-lean", action="store_true", help="skip the Polars program in DuckDB SQL (lean.py)"
    )
    parser.add_argument(
        "--memory-limit",
        default=None,
        help="DuckDB memory_limit (default 850MB up to 2M rows: peak RSS stays under 1.5 GB; "
        "2GB beyond: under 3 GB)",
    )
    parser.add_argument(
        "--snapshots",
        type=int,
        default=1,
        help="daily snapshots: the latest, which every engine matches, and the days before "
        "it, which recon's history checks read (a daily job's month: 30)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine (best, median)")
    parser.add_argument(
        "--workdir",
        default=None,
        help="generate into (and reuse) WORKDIR/data-ROWS instead of a temp dir",
    )
    parser.add_argument(
        "--child", choices=("duckdb", "floor", "polars", "lean", "pandas"), help=argparse.SUPPRESS
    )
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.big:
        args.rows, args.skip_pandas = 10_000_000, True
    if args.memory_limit is None:
        args.memory_limit = "2GB" if args.rows > 2_000_000 else "850MB"
    if args.child:
        child(args)
        return

    if args.workdir:
        # a kept work dir: generate once, rerun the engines on the same data
        name = f"data-{args.rows}" + (f"x{args.snapshots}" if args.snapshots > 1 else "")
        root = Path(args.workdir) / name
        if not (root / "statements").is_dir():
            _report_generation(generate(root, args.rows, args.snapshots))
        record_coverage(root)
        record_manifests(root)
        _compare(root, args)
        return
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        root = Path(tmp) / "data"
        _report_generation(generate(root, args.rows, args.snapshots))
        _compare(root, args)


def _report_generation(gen: dict[str, Any]) -> None:
    print(
        f"generated {gen['intents']:,} intents and {gen['lines']:,} statement lines "
        f"in {gen['seconds']:.1f} s"
    )


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


def _compare(root: Path, args: argparse.Namespace) -> None:
    # each engine `--repeat` times, alternating, in fresh processes; each DuckDB run starts
    # from no earlier run (a previous run's breaks would be read for first_seen_run), and the
    # floor is measured on the files that run just wrote
    runs: dict[str, list[dict[str, Any]]] = {"duckdb": [], "floor": []}
    peers = [p for p in ("polars", "lean", "pandas") if not getattr(args, f"skip_{p}")]
    runs |= {p: [] for p in peers}
    failed: dict[str, str] = {}
    for _ in range(args.repeat):
        for name in ("duckdb", *peers):
            shutil.rmtree(root / "runs", ignore_errors=True)
            try:
                runs[name].append(spawn(name, root, args))
            except PeerFailed as exc:
                if name == "duckdb":
                    raise SystemExit(str(exc)) from None
                print(exc, file=sys.stderr)  # a peer that cannot finish is reported, not timed
                failed[name] = str(exc).splitlines()[0]
            if name == "duckdb":
                runs["floor"].append(spawn("floor", root, args))
    runs = {name: rs for name, rs in runs.items() if rs}
    peers = [p for p in peers if p in runs]
    results = {name: min(rs, key=lambda r: r["seconds"]) for name, rs in runs.items()}
    print(f"\n{'engine':<8} {'best s':>9} {'median s':>9} {'peak RSS MB (max)':>18}")
    for name, rs in runs.items():
        seconds = sorted(r["seconds"] for r in rs)
        rss = max(r["peak_rss_mb"] for r in rs)
        print(f"{name:<8} {seconds[0]:>9.2f} {seconds[len(seconds) // 2]:>9.2f} {rss:>18.0f}")
    duck = results["duckdb"]
    print(
        f"\nDuckDB memory_limit {args.memory_limit}, threads {args.threads}; "
        f"checks passed: {duck['checks_passed']}"
    )
    print("matches by rule:", duck["matches"])
    print("breaks:", duck["counts"])
    for peer in peers:
        got = results[peer]
        same = got["counts"] == duck["counts"] and _nonzero(got["matches"]) == _nonzero(
            duck["matches"]
        )
        print(f"{peer} agrees with DuckDB: {same}")
        if not same:
            print(f"{peer} breaks:", got["counts"])
            print(f"{peer} matches:", got["matches"])
    a = duck["seconds"]
    parts = [f"recon {a:.2f} s (RSS {duck['peak_rss_mb']:.0f} MB)"]
    for peer in ("polars", "pandas"):
        if peer in results:
            b = results[peer]["seconds"]
            parts.append(f"{peer} {b:.2f} s (ratio {b / a:.1f})")
        elif peer in failed:
            print(f"{peer}: {failed[peer]}")
            parts.append(f"{peer} failed s (ratio -)")
        else:
            parts.append(f"{peer} - s (ratio -)")
    if "lean" in results:
        lean = results["lean"]
        steps = ", ".join(f"{k} {v:.2f}" for k, v in lean["steps"])
        print(
            f"lean (the Polars program in DuckDB SQL): {lean['seconds']:.2f} s "
            f"(ratio {lean['seconds'] / a:.1f}, RSS {lean['peak_rss_mb']:.0f} MB); steps: {steps}"
        )
    floor = results["floor"]["seconds"]
    parts.append(f"floor {floor:.2f} s ({a / floor:.1f})")
    history = f", {args.snapshots} snapshots" if args.snapshots > 1 else ""
    if args.snapshots > 1:
        next_day(root, args)
    print(f"reconcile {args.rows}×{duck['lines']}{history}: " + ", ".join(parts))


if __name__ == "__main__":
    main()
