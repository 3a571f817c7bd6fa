-- The payment line of each intent paid more than once (the first, by booking time), named
-- in the reasons of its duplicates (onramp_duplicate_credit, offramp_duplicate_payout).
select x.intent_key, l.line_id, l.end_to_end_id, l.booked_at
from int_matches as x
semi join int_notable_pairs as d on d.intent_key = x.intent_key and d.role = 'duplicate'
join stg_statement_lines as l on l.line_key = x.line_key
where x.role = 'payment'
