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
    -- what the statements would show: a credit, a payout, a devolução to the payer or a
    -- payout coming back
    case b.category
        when 'onramp_missing_credit' then 'awaiting_credit'
        when 'offramp_missing_payout' then 'awaiting_payout'
        when 'offramp_stuck_paying_out' then 'awaiting_payout'
        when 'offramp_payout_for_failed_intent' then 'awaiting_returned_payout'
        else 'awaiting_refund'
    end as reason_code,
    to_json({
        'intent_id': b.intent_id, 'intent_type': i.intent_type, 'status': i.status,
        'amount_cents': coalesce(b.expected_cents, b.actual_cents),
        'window_start_at': iso_utc(b.window_from), 'window_end_at': iso_utc(b.window_to),
        'would_be_category': b.category
    }) as reason_params
from breaks_all as b
join stg_intents as i on i.intent_key = b.intent_key
where not b.in_coverage
