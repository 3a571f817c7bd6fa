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
        'offramp_missing_payout' as reason_code,
        to_json({
            'intent_id': i.intent_id, 'updated_at': iso_utc(i.updated_at),
            'amount_cents': i.amount_cents, 'payee': i.party_display_name,
            'pix_key': i.destination_address
        }) as reason_params,
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
        case when x.delta_cents < 0 then 'offramp_payout_short' else 'offramp_payout_excess'
        end as reason_code,
        to_json({
            'line_ref': x.line_ref, 'line_cents': x.actual_cents,
            'booked_at': iso_utc(x.booked_at), 'rule': x.rule, 'intent_id': x.intent_id,
            'expected_cents': x.expected_cents, 'difference_cents': abs(x.delta_cents)
        }) as reason_params,
        x.booked_at as evidence_at
    from int_notable_pairs as x
    where x.role = 'payment' and x.intent_type = 'offramp' and x.amount_off
),

offramp_duplicate_payout as (
    select
        'offramp_duplicate_payout' as category,
        d.*,
        'offramp_duplicate_payout' as reason_code,
        to_json({
            'line_ref': d.line_ref, 'line_cents': d.actual_cents,
            'booked_at': iso_utc(d.booked_at), 'rule': d.rule, 'intent_id': d.intent_id,
            'first_line_ref': d.first_line_ref, 'first_booked_at': iso_utc(d.first_booked_at)
        }) as reason_params,
        d.booked_at as evidence_at
    from int_duplicate_payments as d
    where d.intent_type = 'offramp'
),

-- not returned: the payee's bank would send it back after the payout, up to as_of
offramp_payout_for_failed_intent as (
    select
        'offramp_payout_for_failed_intent' as category,
        x.*,
        'offramp_payout_for_failed_intent' as reason_code,
        to_json({
            'line_ref': x.line_ref, 'line_cents': x.actual_cents,
            'booked_at': iso_utc(x.booked_at), 'rule': x.rule, 'intent_id': x.intent_id,
            'status': x.intent_status, 'updated_at': iso_utc(x.intent_updated_at)
        }) as reason_params,
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
        'offramp_stuck_paying_out' as reason_code,
        to_json({
            'intent_id': i.intent_id, 'updated_at': iso_utc(i.updated_at),
            'grace_minutes': p.offramp_payout_grace_s // 60, 'as_of_at': iso_utc(p.as_of),
            'amount_cents': i.amount_cents, 'payee': i.party_display_name
        }) as reason_params,
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
        'offramp_payout_returned' as reason_code,
        to_json({
            'expected_cents': r.expected_cents, 'intent_id': r.intent_id,
            'refund_ref': r.line_ref, 'refund_cents': r.actual_cents,
            'booked_at': iso_utc(r.booked_at)
        }) as reason_params,
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
    actual_cents, reason_code, reason_params, evidence_at, money_side, window_from, window_to
from (
    select * from offramp_missing_payout
    union all by name select * from offramp_payout_amount_mismatch
    union all by name select * from offramp_duplicate_payout
    union all by name select * from offramp_payout_for_failed_intent
    union all by name select * from offramp_stuck_paying_out
    union all by name select * from offramp_payout_returned
) as rules
