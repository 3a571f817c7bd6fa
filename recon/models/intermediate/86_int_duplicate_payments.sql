-- Every duplicate payment (int_notable_pairs, role duplicate) with its intent's first payment
-- line (the earliest booked), which the duplicate's reason names (onramp_duplicate_credit,
-- offramp_duplicate_payout).
-- Both sides are materialized before the final join: planned as one query, DuckDB's hash
-- join over the duplicates' wide rows touched ~400 MB of fresh memory for 20k rows (1M run:
-- 0.25-0.30 s; 0.05-0.14 s this way).
with

duplicates as materialized (
    select * from int_notable_pairs where role = 'duplicate'
),

first_payments as materialized (
    select x.intent_key, coalesce(l.end_to_end_id, l.line_id) as line_ref, l.booked_at
    from int_matches as x
    semi join duplicates as d on d.intent_key = x.intent_key
    join stg_statement_lines as l on l.line_key = x.line_key
    where x.role = 'payment'
)

select d.*, f.line_ref as first_line_ref, f.booked_at as first_booked_at
from duplicates as d
join first_payments as f on f.intent_key = d.intent_key
