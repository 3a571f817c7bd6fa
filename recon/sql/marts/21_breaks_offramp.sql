-- materialized: view
-- breaks_offramp: the offramp rules, one CTE per category (union at the end).
-- (the columns every family shares, and what money_side/window_* mean: 25_breaks_all.sql)
with

p as (
    select * from params
),

returned_intents as (
    select distinct intent_key from int_matches where role = 'refund'
),

-- a completed offramp with no payout: it would be booked between created_at - clock_skew
-- and completion + offramp_payout_grace (the matching window), up to as_of
offramp_missing_payout as (
    select
        'offramp_missing_payout' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        i.amount_cents as expected_cents,
        0 as actual_cents,
        'Offramp ' || i.intent_id || ' is completed (updated ' || local_ts(i.updated_at)
            || ') for ' || brl(i.amount_cents) || ' to '
            || coalesce(i.party_display_name, 'unknown payee')
            || coalesce(' (key ' || i.destination_address || ')', '')
            || ' but no PIX debit matched it. Check the payout with the bank before '
            || 'telling the customer it was paid.' as reason,
        i.updated_at as evidence_at,
        'debit' as money_side,
        i.created_at - p.clock_skew as window_from,
        least(i.updated_at + p.offramp_payout_grace, p.as_of) as window_to
    from int_unpaid_intents as i, p
    where i.intent_type = 'offramp'
      and i.status = 'completed'
),

offramp_payout_amount_mismatch as (
    select
        'offramp_payout_amount_mismatch' as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Payout ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' sent ' || local_ts(x.booked_at) || ' (matched by ' || x.rule
            || ') for offramp ' || x.intent_id || ' which expects '
            || brl(x.expected_cents) || ': ' || brl(abs(x.delta_cents))
            || case when x.delta_cents < 0 then ' short. Pay the payee the difference.'
                    else ' too much. Recover the excess from the payee.' end as reason,
        x.booked_at as evidence_at
    from int_notable_pairs as x, p
    where x.role = 'payment'
      and x.intent_type = 'offramp'
      and abs(x.delta_cents) > p.amount_tolerance_cents
),

offramp_duplicate_payout as (
    select
        'offramp_duplicate_payout' as category,
        d.intent_key,
        d.line_key,
        d.intent_id,
        d.line_id,
        d.end_to_end_id,
        d.expected_cents,
        d.actual_cents,
        'Payout ' || coalesce(d.end_to_end_id, d.line_id) || ' of ' || brl(d.actual_cents)
            || ' sent ' || local_ts(d.booked_at) || ' (matched by ' || d.rule
            || ') pays offramp ' || d.intent_id || ' a second time (first payout '
            || coalesce(first.end_to_end_id, first.line_id) || ' on '
            || local_ts(first.booked_at) || '). Recover the duplicate from the payee.'
            as reason,
        d.booked_at as evidence_at
    from int_notable_pairs as d
    join int_first_payments as first on first.intent_key = d.intent_key
    where d.role = 'duplicate'
      and d.intent_type = 'offramp'
),

-- not returned: the payee's bank would send it back after the payout, up to as_of
offramp_payout_for_failed_intent as (
    select
        'offramp_payout_for_failed_intent' as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Payout ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' sent ' || local_ts(x.booked_at) || ' (matched by ' || x.rule
            || ') paid offramp ' || x.intent_id || ' which is ' || x.intent_status
            || ' (updated ' || local_ts(x.intent_updated_at) || '); the tokens were not taken. '
            || 'Recover the payout or complete the burn.' as reason,
        x.booked_at as evidence_at,
        'debit' as money_side,
        x.booked_at as window_from,
        p.as_of as window_to
    from int_notable_pairs as x, p
    where x.role = 'payment'
      and x.intent_type = 'offramp'
      and x.intent_status in ('failed', 'canceled', 'expired', 'refunded')
      and x.intent_key not in (select intent_key from returned_intents)
),

-- no payout while paying_out: it could be booked any time from creation to as_of
offramp_stuck_paying_out as (
    select
        'offramp_stuck_paying_out' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        i.amount_cents as expected_cents,
        0 as actual_cents,
        'Offramp ' || i.intent_id || ' has been paying_out since ' || local_ts(i.updated_at)
            || ' (more than ' || (p.offramp_payout_grace_s // 60) || ' min before '
            || local_ts(p.as_of) || ') and no payout of ' || brl(i.amount_cents)
            || ' to ' || coalesce(i.party_display_name, 'unknown payee')
            || ' is in the statement. Ask the payment provider about the transfer.' as reason,
        i.updated_at as evidence_at,
        'debit' as money_side,
        i.created_at - p.clock_skew as window_from,
        p.as_of as window_to
    from int_unpaid_intents as i, p
    where i.intent_type = 'offramp'
      and i.status = 'paying_out'
      and i.updated_at < p.as_of - p.offramp_payout_grace
),

offramp_payout_returned as (
    select
        'offramp_payout_returned' as category,
        r.intent_key,
        r.line_key,
        r.intent_id,
        r.line_id,
        r.end_to_end_id,
        r.expected_cents,
        r.actual_cents,
        'Payout of ' || brl(r.expected_cents) || ' for offramp ' || r.intent_id
            || ' came back: devolução ' || coalesce(r.end_to_end_id, r.line_id) || ' of '
            || brl(r.actual_cents) || ' booked ' || local_ts(r.booked_at)
            || ', yet the offramp is still completed. Pay the customer again to a valid key, '
            || 'or return their tokens and mark the intent refunded.' as reason,
        r.booked_at as evidence_at
    from int_notable_pairs as r
    where r.role = 'refund'
      and r.line_kind = 'pix_refund_in'
      and r.intent_type = 'offramp'
      and r.intent_status = 'completed'
)

select * from offramp_missing_payout
union all by name select * from offramp_payout_amount_mismatch
union all by name select * from offramp_duplicate_payout
union all by name select * from offramp_payout_for_failed_intent
union all by name select * from offramp_stuck_paying_out
union all by name select * from offramp_payout_returned
