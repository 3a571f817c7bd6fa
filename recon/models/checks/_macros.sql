-- Helpers the checks share. Run before the checks (files starting with "_" run as-is), once
-- the models exist: a table macro binds its tables when it is created.

-- For checks/credits_accounted_once and debits_accounted_once: the lines of one
-- direction ('credit' or 'debit'), the bank's own apart (bank_own), that are not exactly once either a match (a payment or
-- part or refund of int_matches) or a line break (unmatched_<direction>, ambiguous_match, a
-- duplicate credit or payout). Counted by line key; ids fetched for offending lines only.
CREATE OR REPLACE TEMP MACRO lines_not_accounted_once(dir) AS TABLE
WITH
lines AS (
    SELECT line_key, line_id FROM stg_statement_lines WHERE direction = dir AND NOT bank_own
),
matched AS (
    SELECT line_key, count(*) AS n
    FROM int_matches
    WHERE role IN ('payment', 'part', 'refund') AND direction = dir
    GROUP BY line_key
),
unmatched AS (
    SELECT line_key, count(*) AS n
    FROM recon_exceptions
    WHERE category IN ('unmatched_' || dir, 'ambiguous_match', 'onramp_duplicate_credit',
                       'offramp_duplicate_payout')
    GROUP BY line_key
)
SELECT lines.line_id, coalesce(matched.n, 0) AS matched, coalesce(unmatched.n, 0) AS unmatched
FROM lines
LEFT JOIN matched USING (line_key)
LEFT JOIN unmatched USING (line_key)
WHERE coalesce(matched.n, 0) + coalesce(unmatched.n, 0) <> 1;
