-- Every duplicate payment (int_notable_pairs, role duplicate) with its intent's first payment
-- line (the earliest booked), which the duplicate's reason names (onramp_duplicate_credit,
-- offramp_duplicate_payout).
with

first_payments as (
    select x.intent_key, coalesce(l.end_to_end_id, l.line_id) as line_ref, l.booked_at
    from int_matches as x
    semi join int_notable_pairs as d on d.intent_key = x.intent_key and d.role = 'duplicate'
    join stg_statement_lines as l on l.line_key = x.line_key
    where x.role = 'payment'
)

select d.*, f.line_ref as first_line_ref, f.booked_at as first_booked_at
from int_notable_pairs as d
join first_payments as f on f.intent_key = d.intent_key
where d.role = 'duplicate'
