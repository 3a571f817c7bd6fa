-- materialized: view
-- breaks_onramp: the onramp rules, one CTE per category (union at the end). A rule on a
-- confirmed pair keeps the pair's columns (int_notable_pairs), a rule on an intent with no
-- money its own; the union picks the columns every family shares (25_breaks_all.sql says
-- what they and money_side/window_* mean). Statuses by name only one at a time; a set of
-- them comes from status_vocabulary (recon.schemas).
with

p as (
    select * from params
),

refunded_intents as (
    select distinct intent_key from int_matches where role = 'refund'
),

-- a paid onramp with no credit: the credit would be booked in the matching window
-- (created_at - clock_skew .. expires_at + onramp_payment_grace, or as_of), up to as_of
onramp_missing_credit as (
    select
        'onramp_missing_credit' as category,
        i.*,
        i.amount_cents as expected_cents,
        0 as actual_cents,
        'Onramp ' || i.intent_id || ' is ' || i.status || ' for ' || brl(i.amount_cents)
            || ' (payer ' || coalesce(i.party_display_name, 'unknown')
            || ', created ' || local_ts(i.created_at)
            || ') but no PIX credit matched it by txid, reference or amount/payer/time. '
            || 'Find the credit in the bank statement; if none arrived, stop the mint and '
            || 'contact the payer.' as reason,
        i.updated_at as evidence_at,
        'credit' as money_side,
        i.created_at - p.clock_skew as window_from,
        least(coalesce(i.expires_at + p.onramp_payment_grace, p.as_of), p.as_of) as window_to
    from int_unpaid_intents as i, p
    where i.intent_type = 'onramp'
      and i.status in (
          select status from status_vocabulary where intent_type = 'onramp' and fiat_moved
      )
),

onramp_amount as (
    select
        case when x.delta_cents < 0 then 'onramp_underpaid' else 'onramp_overpaid' end
            as category,
        x.*,
        matched_line(x.intent_type, x.line_ref, x.actual_cents, x.booked_at, x.rule)
            || ' pays onramp ' || x.intent_id
            || ' which expects ' || brl(x.expected_cents) || ': '
            || brl(abs(x.delta_cents))
            || case when x.delta_cents < 0 then ' short. Ask the payer for the difference or '
                    || 'refund the credit and cancel the intent.'
                    else ' too much. Return the excess to the payer (devolução) before '
                    || 'minting more than was ordered.' end as reason,
        x.booked_at as evidence_at
    from int_notable_pairs as x
    where x.role = 'payment' and x.intent_type = 'onramp' and x.amount_off
),

-- a credit on an account with a PSP fee schedule whose fee is off it (int_matches.fee_off):
-- expected_cents is the schedule's fee, actual_cents the fee taken (stated, or the shortfall)
onramp_fee_mismatch as (
    select
        'onramp_fee_mismatch' as category,
        x.* exclude (expected_cents, actual_cents),
        x.schedule_fee_cents as expected_cents,
        coalesce(x.fee_cents, x.expected_cents - x.actual_cents) as actual_cents,
        matched_line(
            x.intent_type, x.line_ref, x.actual_cents - coalesce(x.fee_cents, 0), x.booked_at,
            x.rule
        )
            || ' pays onramp ' || x.intent_id || ' of ' || brl(x.expected_cents)
            || ' net of a fee of ' || brl(coalesce(x.fee_cents, x.expected_cents - x.actual_cents))
            || '; the fee schedule of account ' || x.account || ' (' || x.fee_schedule
            || ') takes ' || brl(x.schedule_fee_cents) || '. Ask the PSP about the difference of '
            || brl(abs(coalesce(x.fee_cents, x.expected_cents - x.actual_cents)
                       - x.schedule_fee_cents))
            || ', or correct the schedule in recon.toml.' as reason,
        x.booked_at as evidence_at
    from int_notable_pairs as x
    where x.role = 'payment' and x.intent_type = 'onramp' and x.fee_off
),

onramp_duplicate_credit as (
    select
        'onramp_duplicate_credit' as category,
        d.*,
        matched_line(d.intent_type, d.line_ref, d.actual_cents, d.booked_at, d.rule)
            || ' is a second payment of onramp ' || d.intent_id || ', already paid by '
            || d.first_line_ref || ' on ' || local_ts(d.first_booked_at)
            || '. Return the extra credit to the payer (devolução).' as reason,
        d.booked_at as evidence_at
    from int_duplicate_payments as d
    where d.intent_type = 'onramp'
),

-- not refunded: the devolução would be booked after the credit, up to as_of
onramp_credit_after_expiry as (
    select
        'onramp_credit_after_expiry' as category,
        x.*,
        matched_line(x.intent_type, x.line_ref, x.actual_cents, x.booked_at, x.rule)
            || ' paid onramp ' || x.intent_id || ' which is ' || x.intent_status
            || coalesce(' (expired ' || local_ts(x.intent_expires_at) || ')', '')
            || ' and was not refunded. Return the money to the payer (devolução) or '
            || 'reissue the order.' as reason,
        x.booked_at as evidence_at,
        'credit' as money_side,
        x.booked_at as window_from,
        p.as_of as window_to
    from int_notable_pairs as x, p
    where x.role = 'payment'
      and x.intent_type = 'onramp'
      -- ended without the tokens (a refunded one has its devolução, so it is not here); a
      -- failed onramp keeps the money only until its devolução, within refund_grace
      and x.intent_status in (select status from status_vocabulary where kind = 'exit')
      and x.intent_status <> 'refunded'
      and (x.intent_status <> 'failed' or x.intent_updated_at < p.as_of - p.refund_grace)
      and x.intent_key not in (select intent_key from refunded_intents)
),

onramp_status_lag as (
    select
        'onramp_status_lag' as category,
        x.*,
        matched_line(x.intent_type, x.line_ref, x.actual_cents, x.booked_at, x.rule)
            || ' paid onramp ' || x.intent_id || ', but at ' || local_ts(p.as_of)
            || ' the intent is still ' || x.intent_status || ', more than '
            || (p.onramp_payment_grace_s // 60) || ' min later. Check that the service '
            || 'received the payment notice; the payer has paid.' as reason,
        x.booked_at as evidence_at
    from int_notable_pairs as x, p
    where x.role = 'payment'
      and x.intent_type = 'onramp'
      -- still waiting for the fiat
      and x.intent_status in (
          select status from status_vocabulary
          where intent_type = 'onramp' and kind = 'stage' and not fiat_moved
      )
      and not x.amount_off
      and x.booked_at < p.as_of - p.onramp_payment_grace
)

-- the columns every family shares (25_breaks_all.sql), picked once from the rules' rows
select
    category, intent_key, line_key, intent_id, line_id, end_to_end_id, expected_cents,
    actual_cents, reason, evidence_at, money_side, window_from, window_to
from (
    select * from onramp_missing_credit
    union all by name select * from onramp_amount
    union all by name select * from onramp_fee_mismatch
    union all by name select * from onramp_duplicate_credit
    union all by name select * from onramp_credit_after_expiry
    union all by name select * from onramp_status_lag
) as rules
