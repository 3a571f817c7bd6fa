-- statement_stated_balances: every balance a statement file states (OFX LEDGERBAL, CNAB 240
-- saldo_inicial/saldo_final, camt OPBD/PRCD/CLBD, a CSV's Saldo), one row per balance an
-- import stored (each once however often its file is imported): the account's balance at
-- the start ("opening") or the end ("closing") of a business day (`day`, the local date in
-- America/Sao_Paulo), what states it (`basis`) and where.
CREATE OR REPLACE VIEW statement_stated_balances AS
SELECT
    account, day, side, balance_cents, stated_at, basis, source_format, source_file,
    source_line, imported_at
FROM source_balance_files;

-- statement_balances: each account's balance walked day by day, from the first to the last
-- day a statement states a balance for, one row per day (docs/contracts.md, the balance walk):
--   opening_cents    the balance at the day's start: the previous day's stated closing,
--                    else the day's stated opening, else (the previous day had a file) the
--                    previous day's walked closing; null when none is known
--   movements_cents  the day's statement lines (statement_lines), signed, all formats
--   closing_cents    the day's stated closing (null when no file states one)
--   gap_cents        closing - (opening + movements): 0 when the lines explain the stated
--                    balance; null where the day cannot be walked (no file covers it, no
--                    known opening, no stated closing), never a made-up number
--   state            walked | no_file | no_opening | no_closing
--   walked_from      the day whose start the opening is carried from (the day itself when
--                    a balance is stated at its start)
-- A day "has a file" when a statement covering all movements (statement_coverage, scope
-- 'all') covers part of it, or a file states one of its balances. When several files state a
-- day's balance, the richest format's (camt, cnab240, ofx, open-finance, csv, spreadsheet),
-- then the latest import's, is the one walked.
CREATE OR REPLACE VIEW statement_balances AS
WITH stated AS (
    SELECT account, day, side, balance_cents
    FROM (
        SELECT
            *,
            row_number() OVER (
                PARTITION BY account, day, side
                ORDER BY
                    CASE source_format
                        WHEN 'camt' THEN 1 WHEN 'cnab240' THEN 2 WHEN 'ofx' THEN 3
                        WHEN 'open-finance' THEN 4 WHEN 'csv' THEN 5 ELSE 6
                    END,
                    imported_at DESC, source_file DESC, source_line DESC
            ) AS pick
        FROM source_balance_files
    )
    WHERE pick = 1
),
spans AS (
    SELECT account, min(day) AS first_day, max(day) AS last_day FROM stated GROUP BY account
),
series AS (
    SELECT
        account,
        unnest(generate_series(
            CAST(first_day AS TIMESTAMP), CAST(last_day AS TIMESTAMP), INTERVAL 1 DAY
        )) AS day_start
    FROM spans
),
days AS (
    SELECT account, CAST(day_start AS DATE) AS day FROM series
),
moves AS (
    SELECT
        l.account,
        CAST(timezone('America/Sao_Paulo', l.booked_at) AS DATE) AS day,
        CAST(sum(l.amount_cents) AS BIGINT) AS movements_cents
    FROM statement_lines AS l
    SEMI JOIN spans AS s ON s.account = l.account
    GROUP BY l.account, CAST(timezone('America/Sao_Paulo', l.booked_at) AS DATE)
),
covered AS (
    SELECT DISTINCT d.account, d.day
    FROM days AS d
    JOIN statement_coverage AS c
        ON c.account = d.account
        AND c.scope = 'all'
        AND c.covered_from < timezone('America/Sao_Paulo', CAST(d.day + 1 AS TIMESTAMP))
        AND c.covered_to > timezone('America/Sao_Paulo', CAST(d.day AS TIMESTAMP))
    UNION
    SELECT account, day FROM stated
),
walk AS (
    SELECT
        d.account,
        d.day,
        coalesce(m.movements_cents, 0) AS movements_cents,
        c.day IS NOT NULL AS has_file,
        so.balance_cents AS stated_opening,
        sc.balance_cents AS stated_closing,
        lag(sc.balance_cents) OVER (PARTITION BY d.account ORDER BY d.day) AS previous_closing,
        lag(c.day IS NOT NULL) OVER (PARTITION BY d.account ORDER BY d.day) AS previous_has_file
    FROM days AS d
    LEFT JOIN moves AS m ON m.account = d.account AND m.day = d.day
    LEFT JOIN covered AS c ON c.account = d.account AND c.day = d.day
    LEFT JOIN stated AS so ON so.account = d.account AND so.day = d.day AND so.side = 'opening'
    LEFT JOIN stated AS sc ON sc.account = d.account AND sc.day = d.day AND sc.side = 'closing'
),
-- chains: a day starts a new one when a balance is stated at its start, or when it or the
-- day before has no file (a day without a file is never walked through)
anchored AS (
    SELECT
        *,
        coalesce(previous_closing, stated_opening) AS start_cents,
        coalesce(previous_closing, stated_opening) IS NOT NULL
            OR NOT has_file OR NOT coalesce(previous_has_file, false) AS starts_chain
    FROM walk
),
chained AS (
    SELECT
        *,
        sum(CASE WHEN starts_chain THEN 1 ELSE 0 END) OVER (
            PARTITION BY account ORDER BY day ROWS UNBOUNDED PRECEDING
        ) AS chain
    FROM anchored
),
carried AS (
    SELECT
        *,
        -- a chain has one first day, the only one that starts it
        max(CASE WHEN starts_chain THEN start_cents END) OVER (PARTITION BY account, chain)
            AS chain_start_cents,
        min(day) OVER (PARTITION BY account, chain) AS chain_first_day,
        CAST(coalesce(sum(movements_cents) OVER (
            PARTITION BY account, chain ORDER BY day
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS BIGINT) AS carried_cents
    FROM chained
),
final AS (
    SELECT
        account,
        day,
        CASE WHEN has_file THEN chain_start_cents + carried_cents END AS opening_cents,
        movements_cents,
        stated_closing AS closing_cents,
        CASE WHEN has_file THEN chain_first_day END AS walked_from,
        has_file
    FROM carried
)
SELECT
    account,
    day,
    opening_cents,
    movements_cents,
    closing_cents,
    closing_cents - (opening_cents + movements_cents) AS gap_cents,
    CASE
        WHEN NOT has_file THEN 'no_file'
        WHEN opening_cents IS NULL THEN 'no_opening'
        WHEN closing_cents IS NULL THEN 'no_closing'
        ELSE 'walked'
    END AS state,
    CASE WHEN opening_cents IS NOT NULL THEN walked_from END AS walked_from
FROM final;
