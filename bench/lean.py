"""The Polars peer's program (bench/reconcile.py: run_polars) written in DuckDB SQL.

The same passes (txid -> reference -> attributes), duplicates, break counts and matches by
rule, in the same lean style: every query reads only the columns it needs straight from the
Parquet files, rows are keyed by their row number in the files, and only integer key pairs
(plus the words of the unclaimed lines' texts) pass from one step to the next.

It is a peer of bench/reconcile.py (`lean` in its table), there to tell the engine from
recon's design: what DuckDB costs for the matching itself, next to Polars doing the same,
and next to recon, which also merges stored versions of lines, keeps wide staging tables,
writes reasons, control totals, checks and sorted run files.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

# bench/ is on sys.path: the scripts run as files
from reconcile import (
    AS_OF,
    PIX_DOC,
    PIX_EVP,
    PIX_PHONE,
    PIX_PHONE_PUNCTUATION,
    latest_snapshot,
)


def _source(files: list[str], key: str) -> str:
    """SELECT of every column of `files` plus `key`: the row number across the files, in the
    order given (file_row_number, offset by the rows of the files before)."""
    files = sorted(files)
    if len(files) == 1:
        expr = "file_row_number"
    else:
        import pyarrow.parquet as pq

        offsets, n = [], 0
        for f in files:
            offsets.append(n)
            n += pq.ParquetFile(f).metadata.num_rows
        whens = " ".join(f"WHEN '{f}' THEN {o}" for f, o in zip(files, offsets, strict=True))
        expr = f"file_row_number + CASE filename {whens} END"
    return (
        f"SELECT {expr} AS {key}, * EXCLUDE (file_row_number) "
        f"FROM read_parquet({files!r}, file_row_number = true, hive_partitioning = false"
        + (", filename = true" if len(files) > 1 else "")
        + ")"
    )


MACROS = f"""
SET TimeZone = 'UTC';
CREATE MACRO txid_form(id) AS upper(replace(id, '-', ''));
CREATE MACRO norm_name(c) AS trim(regexp_replace(upper(c), '[^A-Z0-9]+', ' ', 'g'), ' ');
CREATE MACRO norm_doc(c) AS nullif(regexp_replace(c, '[^0-9*]', '', 'g'), '');
-- masked documents agree where neither shows '*': the same length, position by position
CREATE MACRO docs_compatible(a, b) AS
    a IS NULL OR b IS NULL OR a = b OR (
        length(a) = length(b) AND list_bool_and([
            substr(a, p, 1) = substr(b, p, 1) OR substr(a, p, 1) = '*' OR substr(b, p, 1) = '*'
            FOR p IN range(1, length(a) + 1)]));
CREATE MACRO key_kind(k) AS CASE
    WHEN contains(k, '@') THEN 'email'
    WHEN regexp_full_match(lower(trim(k, ' ')), '{PIX_EVP}') THEN 'evp'
    WHEN starts_with(trim(k, ' '), '+') THEN 'phone'
    WHEN contains(k, '*') THEN 'doc'
    WHEN regexp_full_match(trim(k, ' '), '{PIX_DOC}') THEN 'doc'
    WHEN regexp_full_match(trim(k, ' '), '[0-9]{{11}}') THEN 'doc_or_phone'
    WHEN regexp_full_match(regexp_replace(k, '{PIX_PHONE_PUNCTUATION}', '', 'g'), '{PIX_PHONE}')
        THEN 'phone'
    ELSE 'other' END;
CREATE MACRO e164(k) AS CASE
    WHEN length(regexp_replace(k, '[^0-9]', '', 'g')) IN (10, 11)
    THEN '55' || regexp_replace(k, '[^0-9]', '', 'g') ELSE regexp_replace(k, '[^0-9]', '', 'g') END;
CREATE MACRO keys_agree(a, b, ka, kb, as_documents) AS CASE
    WHEN ka = 'email' OR kb = 'email'
        THEN ka = kb AND lower(trim(a, ' ')) = lower(trim(b, ' '))
    WHEN ka = 'evp' OR kb = 'evp'
        THEN ka = kb AND lower(replace(trim(a, ' '), '-', '')) = lower(replace(trim(b, ' '), '-', ''))
    WHEN ka = 'other' OR kb = 'other'
        THEN ka = kb AND lower(regexp_replace(a, '[^0-9A-Za-z]', '', 'g'))
            = lower(regexp_replace(b, '[^0-9A-Za-z]', '', 'g'))
    WHEN ka = 'phone' OR kb = 'phone' THEN ka <> 'doc' AND kb <> 'doc' AND e164(a) = e164(b)
    ELSE as_documents END;
CREATE MACRO keys_compatible(a, b) AS
    a IS NULL OR b IS NULL OR keys_agree(a, b, key_kind(a), key_kind(b),
        docs_compatible(norm_doc(a), norm_doc(b)));
-- str.split(r"[^A-Z0-9_-]+") keeping the words of 3+ characters (the only ones ever joined)
CREATE MACRO words_of(text) AS
    list_filter(string_split_regex(text, '[^A-Z0-9_-]+'), lambda w: length(w) >= 3);
CREATE MACRO as_it_stands(a, b) AS a IS NULL OR b IS NULL OR a = b;
-- the join word of a reference: most digits, then the longest, the first of equals
CREATE MACRO word_rank(w) AS
    (length(w) - length(regexp_replace(w, '[0-9]', '', 'g'))) * 4294967296 + length(w);
CREATE MACRO join_word(words) AS
    list_reduce(words, lambda a, b: CASE WHEN word_rank(b) > word_rank(a) THEN b ELSE a END);
"""

# the steps, each a list of statements; timed one by one
STEPS: list[tuple[str, str]] = [
    # pass 1: txid; and the lengths an id without hyphens can have
    (
        "txid",
        """
CREATE TEMP TABLE t AS
SELECT p.line_key, i.intent_key
FROM (SELECT line_key, direction, txid FROM pay WHERE txid IS NOT NULL) p
JOIN (SELECT intent_key, direction, txid_form(id) AS txid FROM intents) i
    USING (txid, direction);
CREATE TEMP TABLE id_lengths AS
SELECT min(length(replace(id, '-', ''))) AS shortest, max(length(replace(id, '-', ''))) AS longest
FROM intents;
""",
    ),
    # pass 2: the words (3+ characters of [A-Z0-9_-], upper case) of the texts left
    (
        "words",
        """
CREATE TEMP TABLE words AS
SELECT line_key, direction, text, unnest(words_of(text)) AS token
FROM (SELECT line_key, direction, upper(description) AS text
      FROM pay ANTI JOIN t USING (line_key) WHERE description IS NOT NULL);
CREATE TEMP TABLE line_words AS SELECT DISTINCT token FROM words;
""",
    ),
    # references naming one intent and sharing a word with some line, with their join word
    (
        "keyed refs",
        """
CREATE TEMP TABLE keyed AS
WITH refs AS (
    SELECT intent_key, direction, reference
    FROM (SELECT intent_key, direction,
                 unnest([upper(client_reference), upper(pix_description)]) AS reference
          FROM intents)
    WHERE length(reference) >= 6
), unique_refs AS (
    SELECT reference, min(intent_key) AS intent_key, any_value(direction) AS direction
    FROM (SELECT *, unnest(words_of(reference)) AS token FROM refs)
    SEMI JOIN line_words USING (token)
    GROUP BY reference
    HAVING min(intent_key) = max(intent_key)
)
SELECT * FROM (
    SELECT reference, intent_key, direction,
           join_word(words_of(reference)) AS token
    FROM unique_refs)
SEMI JOIN line_words USING (token);
""",
    ),
    # id words and references found in the texts; unique per line or ambiguous
    (
        "reference pairs",
        """
CREATE TEMP TABLE cand AS
WITH id_pairs AS (
    SELECT w.line_key, i.intent_key
    FROM (SELECT line_key, direction, replace(token, '-', '') AS token FROM words) w
    JOIN (SELECT intent_key, direction, txid_form(id) AS token FROM intents) i
        USING (token, direction)
    WHERE length(w.token) BETWEEN $shortest AND $longest
), reference_pairs AS (
    SELECT w.line_key, k.intent_key
    FROM words w JOIN keyed k USING (token, direction)
    WHERE contains(w.text, k.reference)
), pairs AS (SELECT * FROM id_pairs UNION SELECT * FROM reference_pairs)
SELECT line_key, intent_key, count(*) OVER (PARTITION BY line_key) AS per_line FROM pairs;
DROP TABLE words;
""",
    ),
    # pass 3: attributes (amount, direction, window, compatible counterparty), unique both ways
    (
        "attributes",
        """
CREATE TEMP TABLE a_pairs AS
WITH claimed AS (SELECT line_key FROM t UNION ALL SELECT line_key FROM cand),
taken AS (SELECT intent_key FROM t UNION ALL SELECT intent_key FROM cand WHERE per_line = 1),
pairs AS (
    SELECT l.line_key, i.intent_key
    FROM (SELECT line_key, direction, amount_abs, booked_at, counterparty_name,
                 counterparty_document, counterparty_key
          FROM pay ANTI JOIN claimed USING (line_key)) l
    JOIN (SELECT intent_key, intent_type, direction, amount_cents, created_at,
                 party_display_name, party_document_masked, destination_address,
                 CASE WHEN intent_type = 'onramp'
                      THEN coalesce(expires_at + INTERVAL 30 MINUTE, $as_of) ELSE $as_of
                 END AS window_end
          FROM intents ANTI JOIN taken USING (intent_key)) i
        ON l.direction = i.direction AND l.amount_abs = i.amount_cents
    WHERE l.booked_at BETWEEN i.created_at AND i.window_end
      AND ((as_it_stands(counterparty_name, party_display_name)
            AND as_it_stands(counterparty_document, party_document_masked)
            AND (intent_type = 'onramp' OR as_it_stands(counterparty_key, destination_address)))
           OR ((norm_name(counterparty_name) IS NULL OR norm_name(party_display_name) IS NULL
                OR starts_with(norm_name(counterparty_name), norm_name(party_display_name))
                OR starts_with(norm_name(party_display_name), norm_name(counterparty_name)))
               AND docs_compatible(norm_doc(counterparty_document), norm_doc(party_document_masked))
               AND (intent_type = 'onramp'
                    OR keys_compatible(counterparty_key, destination_address))))
)
SELECT line_key, intent_key,
       count(*) OVER (PARTITION BY line_key) = 1
           AND count(*) OVER (PARTITION BY intent_key) = 1 AS is_unique
FROM pairs;
CREATE TEMP TABLE matched AS
SELECT line_key, intent_key, 'txid' AS rule FROM t
UNION ALL SELECT line_key, intent_key, 'reference' FROM cand WHERE per_line = 1
UNION ALL SELECT line_key, intent_key, 'attributes' FROM a_pairs WHERE is_unique;
CREATE TEMP TABLE ambiguous AS
SELECT line_key, intent_key FROM cand WHERE per_line > 1
UNION ALL SELECT line_key, intent_key FROM a_pairs WHERE NOT is_unique;
""",
    ),
    # duplicates: of an intent's matched lines, all but the earliest booked
    (
        "duplicates",
        """
CREATE TEMP TABLE dups AS
SELECT DISTINCT line_key FROM (
    SELECT m.line_key, row_number() OVER (
        PARTITION BY m.intent_key
        ORDER BY l.booked_at NULLS FIRST, l.end_to_end_id NULLS FIRST, l.line_id NULLS FIRST) AS n
    FROM (SELECT * FROM matched
          WHERE intent_key IN (SELECT intent_key FROM matched GROUP BY intent_key
                               HAVING count(*) > 1)) m
    JOIN (SELECT line_key, booked_at, end_to_end_id, line_id FROM lines) l USING (line_key))
WHERE n > 1;
""",
    ),
    (
        "breaks: matched",
        """
CREATE TEMP TABLE c_matches AS
SELECT
    count(*) FILTER (first AND o AND delta < 0) AS onramp_underpaid,
    count(*) FILTER (first AND o AND delta > 0) AS onramp_overpaid,
    count(*) FILTER (NOT first AND o) AS onramp_duplicate_credit,
    count(*) FILTER (NOT first AND f) AS offramp_duplicate_payout,
    count(*) FILTER (first AND o AND status IN ('expired', 'canceled'))
        AS onramp_credit_after_expiry,
    count(*) FILTER (first AND o
                     AND status IN ('created', 'requires_compliance', 'awaiting_fiat_payment')
                     AND abs(delta) <= 0 AND booked_at < $as_of - INTERVAL 30 MINUTE)
        AS onramp_status_lag,
    count(*) FILTER (first AND f AND abs(delta) > 0) AS offramp_payout_amount_mismatch,
    count(*) FILTER (first AND f AND status IN ('failed', 'canceled', 'expired', 'refunded'))
        AS offramp_payout_for_failed_intent,
    count(*) FILTER (first AND rule = 'txid') AS rule_txid,
    count(*) FILTER (first AND rule = 'reference') AS rule_reference,
    count(*) FILTER (first AND rule = 'attributes') AS rule_attributes
FROM (
    SELECT m.rule, d.line_key IS NULL AS first, l.booked_at, l.amount_abs - i.amount_cents AS delta,
           i.intent_type = 'onramp' AS o, i.intent_type = 'offramp' AS f, i.status
    FROM matched m
    LEFT JOIN dups d USING (line_key)
    JOIN (SELECT line_key, booked_at, amount_abs FROM lines) l USING (line_key)
    JOIN (SELECT intent_key, intent_type, status, amount_cents FROM intents) i USING (intent_key));
""",
    ),
    (
        "breaks: unpaid",
        """
CREATE TEMP TABLE c_unpaid AS
SELECT
    count(*) FILTER (intent_type = 'onramp' AND status IN
        ('fiat_received', 'minting', 'awaiting_onchain_transfer', 'completed'))
        AS onramp_missing_credit,
    count(*) FILTER (intent_type = 'offramp' AND status = 'completed') AS offramp_missing_payout,
    count(*) FILTER (intent_type = 'offramp' AND status = 'paying_out'
                     AND updated_at < $as_of - INTERVAL 2 HOUR) AS offramp_stuck_paying_out
FROM (SELECT intent_key, intent_type, status, updated_at FROM intents)
ANTI JOIN matched USING (intent_key) ANTI JOIN ambiguous USING (intent_key);
""",
    ),
    (
        "breaks: lines",
        """
CREATE TEMP TABLE c_lines AS
SELECT count(*) FILTER (direction = 'credit') AS unmatched_credit,
       count(*) FILTER (direction = 'debit') AS unmatched_debit,
       (SELECT count(DISTINCT line_key) FROM ambiguous) AS ambiguous_match
FROM (SELECT line_key, direction FROM lines WHERE kind <> 'fee')
ANTI JOIN matched USING (line_key) ANTI JOIN ambiguous USING (line_key);
""",
    ),
]


def run_lean(root: Path, threads: int = 2) -> dict[str, Any]:
    """Run the steps over the data dir `root`; seconds, per-step seconds, counts, matches."""
    import glob

    import duckdb

    started = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute("SET preserve_insertion_order = false")
    con.execute(MACROS)
    intents = _source([latest_snapshot(root)], "intent_key")
    lines = _source(glob.glob(str(root / "statements/source=*/*.parquet")), "line_key")
    con.execute(f"""
        CREATE TEMP VIEW intents AS
        SELECT *, CASE WHEN intent_type = 'onramp' THEN 'credit' ELSE 'debit' END AS direction
        FROM ({intents});
        CREATE TEMP VIEW lines AS
        SELECT *, abs(amount_cents) AS amount_abs FROM ({lines})
        WHERE booked_at <= TIMESTAMPTZ '{AS_OF.isoformat()}';
        CREATE TEMP VIEW pay AS SELECT * FROM lines WHERE kind IN ('pix_in', 'pix_out');
    """)
    # (name, seconds) pairs in the order run: the bench's child prints JSON with sorted keys
    steps: list[tuple[str, float]] = [("setup", time.perf_counter() - started)]
    params: dict[str, Any] = {"as_of": AS_OF}
    for name, sql in STEPS:
        t0 = time.perf_counter()
        for statement in (s.strip() for s in sql.split(";\n")):
            if statement:
                con.execute(statement, {k: v for k, v in params.items() if f"${k}" in statement})
        if name == "txid":  # as Python numbers, as run_polars has them
            params["shortest"], params["longest"] = con.execute(
                "SELECT shortest, longest FROM id_lengths"
            ).fetchone()
        steps.append((name, time.perf_counter() - t0))
    counted: dict[str, int] = {}
    for table in ("c_matches", "c_unpaid", "c_lines"):
        cur = con.execute(f"SELECT * FROM {table}")
        counted |= dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
    con.close()
    matches = {"txid": 0, "reference": 0, "attributes": 0, "refund": 0}
    matches |= {r: int(counted.pop(f"rule_{r}")) for r in ("txid", "reference", "attributes")}
    return {
        "seconds": time.perf_counter() - started,
        "steps": steps,
        "counts": dict(sorted((k, int(v)) for k, v in counted.items() if v)),
        "matches": matches,
    }
