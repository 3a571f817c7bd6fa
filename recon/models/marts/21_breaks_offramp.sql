-- materialized: view
-- breaks_offramp: the offramp rules, one CTE per category (union at the end). A rule on a
-- confirmed pair keeps the pair's columns (int_notable_pairs), a rule on an intent with no
-- money its own; the union picks the columns every family shares (25_breaks_all.sql says
-- what they and money_side/window_* mean). Statuses by name only one at a time; a set of
-- them comes from status_vocabulary (recon.schemas).
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
        i.*,
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
        x.*,
        matched_line(x.intent_type, x.line_ref, x.actual_cents, x.booked_at, x.rule)
            || ' for offramp ' || x.intent_id || ' which expects '
            || brl(x.expected_cents) || ': ' || brl(abs(x.delta_cents))
            || case when x.delta_cents < 0 then ' short. Pay the payee the difference.'
                    else ' too much. Recover the excess from the payee.' end as reason,
        x.booked_at as evidence_at
    from int_notable_pairs as x
    where x.role = 'payment' and x.intent_type = 'offramp' and x.amount_off
),

offramp_duplicate_payout as (
    select
        'offramp_duplicate_payout' as category,
        d.*,
        matched_line(d.intent_type, d.line_ref, d.actual_cents, d.booked_at, d.rule)
            || ' pays offramp ' || d.intent_id || ' a second time (first payout '
            || d.first_line_ref || ' on ' || local_ts(d.first_booked_at)
            || '). Recover the duplicate from the payee.'
            as reason,
        d.booked_at as evidence_at
    from int_duplicate_payments as d
    where d.intent_type = 'offramp'
),

-- not returned: the payee's bank would send it back after the payout, up to as_of
offramp_payout_for_failed_intent as (
    select
        'offramp_payout_for_failed_intent' as category,
        x.*,
        matched_line(x.intent_type, x.line_ref, x.actual_cents, x.booked_at, x.rule)
            || ' paid offramp ' || x.intent_id || ' which is ' || x.intent_status
            || ' (updated ' || local_ts(x.intent_updated_at) || '); the tokens were not taken. '
            || 'Recover the payout or complete the burn.' as reason,
        x.booked_at as evidence_at,
        'debit' as money_side,
        x.booked_at as window_from,
        p.as_of as window_to
    from int_notable_pairs as x, p
    where x.role = 'payment'
      and x.intent_type = 'offramp'
      and x.intent_status in (select status from status_vocabulary where kind = 'exit')
      and x.intent_key not in (select intent_key from returned_intents)
),

-- no payout while paying_out: it could be booked any time from creation to as_of
offramp_stuck_paying_out as (
    select
        'offramp_stuck_paying_out' as category,
        i.*,
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
        r.*,
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

-- the columns every family shares (25_breaks_all.sql), picked once from the rules' rows
select
    category, intent_key, line_key, intent_id, line_id, end_to_end_id, expected_cents,
    actual_cents, reason, evidence_at, money_side, window_from, window_to
from (
    select * from offramp_missing_payout
    union all by name select * from offramp_payout_amount_mismatch
    union all by name select * from offramp_duplicate_payout
    union all by name select * from offramp_payout_for_failed_intent
    union all by name select * from offramp_stuck_paying_out
    union all by name select * from offramp_payout_returned
) as rules
