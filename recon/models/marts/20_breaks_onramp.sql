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
        'onramp_missing_credit' as reason_code,
        to_json({
            'intent_id': i.intent_id, 'status': i.status, 'amount_cents': i.amount_cents,
            'payer': i.party_display_name, 'created_at': iso_utc(i.created_at)
        }) as reason_params,
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
        case when x.delta_cents < 0 then 'onramp_underpaid' else 'onramp_overpaid' end
            as reason_code,
        to_json({
            'line_ref': x.line_ref, 'line_cents': x.actual_cents,
            'booked_at': iso_utc(x.booked_at), 'rule': x.rule, 'intent_id': x.intent_id,
            'expected_cents': x.expected_cents, 'difference_cents': abs(x.delta_cents)
        }) as reason_params,
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
        'onramp_fee_mismatch' as reason_code,
        to_json({
            'line_ref': x.line_ref, 'line_cents': x.actual_cents - coalesce(x.fee_cents, 0),
            'booked_at': iso_utc(x.booked_at), 'rule': x.rule, 'intent_id': x.intent_id,
            'expected_cents': x.expected_cents,
            'fee_cents': coalesce(x.fee_cents, x.expected_cents - x.actual_cents),
            'account': x.account, 'fee_schedule': x.fee_schedule,
            'schedule_fee_cents': x.schedule_fee_cents,
            'difference_cents': abs(coalesce(x.fee_cents, x.expected_cents - x.actual_cents)
                                    - x.schedule_fee_cents)
        }) as reason_params,
        x.booked_at as evidence_at
    from int_notable_pairs as x
    where x.role = 'payment' and x.intent_type = 'onramp' and x.fee_off
),

onramp_duplicate_credit as (
    select
        'onramp_duplicate_credit' as category,
        d.*,
        'onramp_duplicate_credit' as reason_code,
        to_json({
            'line_ref': d.line_ref, 'line_cents': d.actual_cents,
            'booked_at': iso_utc(d.booked_at), 'rule': d.rule, 'intent_id': d.intent_id,
            'first_line_ref': d.first_line_ref, 'first_booked_at': iso_utc(d.first_booked_at)
        }) as reason_params,
        d.booked_at as evidence_at
    from int_duplicate_payments as d
    where d.intent_type = 'onramp'
),

-- not refunded: the devolução would be booked after the credit, up to as_of
onramp_credit_after_expiry as (
    select
        'onramp_credit_after_expiry' as category,
        x.*,
        'onramp_credit_after_expiry' as reason_code,
        to_json({
            'line_ref': x.line_ref, 'line_cents': x.actual_cents,
            'booked_at': iso_utc(x.booked_at), 'rule': x.rule, 'intent_id': x.intent_id,
            'status': x.intent_status, 'expired_at': iso_utc(x.intent_expires_at)
        }) as reason_params,
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
        'onramp_status_lag' as reason_code,
        to_json({
            'line_ref': x.line_ref, 'line_cents': x.actual_cents,
            'booked_at': iso_utc(x.booked_at), 'rule': x.rule, 'intent_id': x.intent_id,
            'as_of_at': iso_utc(p.as_of), 'status': x.intent_status,
            'grace_minutes': p.onramp_payment_grace_s // 60
        }) as reason_params,
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
),

-- a credit that names the onramp (its txid or reference) from a payer whose masked document
-- contradicts the party's (a digit both show differs, or a CNPJ where the party has a CPF):
-- someone else paid. The pair stays matched; the break is the flag. A CNPJ whose name
-- agrees with the party's is likely the party's own MEI, which the reason says. Only the
-- payments whose two documents differ as texts are compared.
named_payments as (
    select
        x.intent_key, x.line_key, x.rule, x.expected_cents, x.actual_cents, x.booked_at,
        i.intent_id, l.line_id, l.end_to_end_id,
        l.counterparty_name as payer_name,
        l.counterparty_document as payer_doc,
        i.party_display_name as party_name,
        i.party_document_masked as party_doc
    from int_matches as x
    join stg_statement_lines as l on l.line_key = x.line_key
    join stg_intents as i on i.intent_key = x.intent_key
    where x.role = 'payment'
      and x.intent_type = 'onramp'
      and x.rule in ('txid', 'reference')
      and l.counterparty_document <> i.party_document_masked
),

third_parties as (
    select
        *,
        length(norm_doc(payer_doc)) = 14 as company,
        length(norm_doc(payer_doc)) = 14 and length(norm_doc(party_doc)) = 11
            and names_compatible(payer_name, party_name) as mei
    from named_payments
    where not docs_compatible(norm_doc(payer_doc), norm_doc(party_doc))
),

onramp_third_party_payer as (
    select
        'onramp_third_party_payer' as category,
        t.*,
        case when t.mei then 'onramp_third_party_payer_mei'
             when t.company then 'onramp_third_party_payer_company'
             else 'onramp_third_party_payer' end as reason_code,
        to_json({
            'line_ref': coalesce(t.end_to_end_id, t.line_id), 'line_cents': t.actual_cents,
            'booked_at': iso_utc(t.booked_at), 'rule': t.rule, 'intent_id': t.intent_id,
            'payer': t.payer_name, 'payer_document': t.payer_doc,
            'party': t.party_name, 'party_document': t.party_doc
        }) as reason_params,
        t.booked_at as evidence_at
    from third_parties as t
)

-- the columns every family shares (25_breaks_all.sql), picked once from the rules' rows
select
    category, intent_key, line_key, intent_id, line_id, end_to_end_id, expected_cents,
    actual_cents, reason_code, reason_params, evidence_at, money_side, window_from, window_to
from (
    select * from onramp_missing_credit
    union all by name select * from onramp_amount
    union all by name select * from onramp_fee_mismatch
    union all by name select * from onramp_duplicate_credit
    union all by name select * from onramp_credit_after_expiry
    union all by name select * from onramp_status_lag
    union all by name select * from onramp_third_party_payer
) as rules
