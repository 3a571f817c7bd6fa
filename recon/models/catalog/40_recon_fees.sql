-- recon_fees: the PSP fees of each account and business day (America/Sao_Paulo), for the
-- books. netted_fee_cents: fees taken from credits (the fee a statement states, statement_lines
-- .fee_cents, else the account's fee schedule's that the latest run found the credit net of,
-- recon_matches.fee_cents); debited_fee_cents: the fee lines (kind fee: a PSP's daily fee
-- debit, a bank's tariffs); total_fee_cents their sum. Positive cents.
CREATE OR REPLACE VIEW recon_fees AS
WITH netted AS (
    SELECT
        l.account,
        l.booked_at,
        coalesce(l.fee_cents, m.fee_cents) AS fee_cents
    FROM statement_lines AS l
    -- a line is matched at most once (checks/no_line_matched_twice)
    LEFT JOIN recon_matches AS m ON m.line_id = l.line_id
    WHERE l.kind <> 'fee' AND coalesce(l.fee_cents, m.fee_cents) IS NOT NULL
),
fees AS (
    SELECT account, booked_at, fee_cents AS netted_cents, 0 AS debited_cents FROM netted
    UNION ALL
    SELECT account, booked_at, 0, -amount_cents
    FROM statement_lines
    WHERE kind = 'fee'
)
SELECT
    account,
    CAST(timezone('America/Sao_Paulo', booked_at) AS DATE) AS day,
    CAST(sum(netted_cents) AS BIGINT) AS netted_fee_cents,
    CAST(sum(debited_cents) AS BIGINT) AS debited_fee_cents,
    CAST(sum(netted_cents) + sum(debited_cents) AS BIGINT) AS total_fee_cents
FROM fees
GROUP BY account, CAST(timezone('America/Sao_Paulo', booked_at) AS DATE);
