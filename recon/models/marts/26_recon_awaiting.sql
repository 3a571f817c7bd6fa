-- recon_awaiting: the intents whose money would fall outside the statements' coverage
-- (breaks_all rows not in_coverage). A state, not a break: counted and listed in the run
-- (awaiting.parquet, summary.awaiting), never in recon_exceptions; a later run with the
-- statement for that time matches the money or raises `would_be`.
select
    b.intent_key,
    b.intent_id,
    i.intent_type,
    i.status as intent_status,
    b.money_side as direction,
    cast(coalesce(b.expected_cents, b.actual_cents) as bigint) as expected_cents,
    b.window_from,
    b.window_to,
    b.category as would_be,
    (case i.intent_type when 'onramp' then 'Onramp ' else 'Offramp ' end) || b.intent_id
        || ' (' || i.status || ', ' || brl(coalesce(b.expected_cents, b.actual_cents))
        || ') waits for statements: its '
        || case b.category
               when 'onramp_missing_credit' then 'credit'
               when 'offramp_missing_payout' then 'payout'
               when 'offramp_stuck_paying_out' then 'payout'
               when 'onramp_credit_after_expiry' then 'devolução'
               when 'offramp_payout_for_failed_intent' then 'returned payout'
               else 'devolução'
           end
        || ' would be booked between ' || local_ts(b.window_from) || ' and '
        || local_ts(b.window_to) || ', which the imported statements do not cover yet. '
        || 'Import the statement for that time; without the money it becomes '
        || b.category || '.' as reason
from breaks_all as b
join stg_intents as i on i.intent_key = b.intent_key
where not b.in_coverage
