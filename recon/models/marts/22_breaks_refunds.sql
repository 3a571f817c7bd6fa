-- materialized: view
-- breaks_refunds: devoluções owed, devoluções that do not add up, and credits returned after
-- the tokens were delivered.
-- (the columns every family shares, and what money_side/window_* mean: 25_breaks_all.sql)
with

p as (
    select * from params
),


-- a refunded onramp with no devolução: it could be booked any time from creation to as_of
refund_missing as (
    select
        'refund_missing' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        coalesce(received.paid_cents, i.amount_cents) as expected_cents,
        0 as actual_cents,
        'refund_missing' as reason_code,
        to_json({
            'intent_id': i.intent_id, 'updated_at': iso_utc(i.updated_at),
            'grace_hours': p.refund_grace_s // 3600, 'as_of_at': iso_utc(p.as_of),
            'amount_cents': coalesce(received.paid_cents, i.amount_cents),
            'credit_ref': received_line.end_to_end_id
        }) as reason_params,
        i.updated_at as evidence_at,
        'credit' as money_side,
        i.created_at - p.clock_skew as window_from,
        p.as_of as window_to
    from (
        -- refunded long enough ago, and no devolução matched
        select i.*
        from stg_intents as i
        cross join p
        anti join (select intent_key from int_matches where role = 'refund') as r
          on r.intent_key = i.intent_key
        where i.intent_type = 'onramp'
          and i.status = 'refunded'
          and i.updated_at < p.as_of - p.refund_grace
    ) as i
    cross join p
    -- the credit it received, if one matched (its amount is what should go back)
    left join (select * from int_matches where role = 'payment') as received
      on received.intent_key = i.intent_key
    left join stg_statement_lines as received_line on received_line.line_key = received.line_key
),

-- refunds per credit (int_refund_groups): the devoluções of one credit are summed, and a
-- mismatch is one break per credit, named by its latest devolução; a refund still under
-- way (less came back, younger than refund_grace) is not a break yet
refund_amount_mismatch as (
    select
        'refund_amount_mismatch' as category,
        g.intent_key,
        g.last_line_key as line_key,
        i.intent_id,
        last_line.line_id,
        last_line.end_to_end_id,
        g.received_cents as expected_cents,
        g.returned_cents as actual_cents,
        case when g.returned_cents < g.received_cents then 'refund_short' else 'refund_excess'
        end as reason_code,
        to_json({
            'credit_ref': coalesce(original.end_to_end_id, original.line_id),
            'received_cents': g.received_cents, 'intent_id': i.intent_id, 'parts': g.parts,
            'returned_cents': g.returned_cents,
            'last_ref': coalesce(last_line.end_to_end_id, last_line.line_id),
            'last_booked_at': iso_utc(g.last_booked_at),
            'difference_cents': abs(g.received_cents - g.returned_cents)
        }) as reason_params,
        g.last_booked_at as evidence_at
    from int_refund_groups as g
    join stg_intents as i on i.intent_key = g.intent_key
    join stg_statement_lines as last_line on last_line.line_key = g.last_line_key
    left join stg_statement_lines as original on original.line_key = g.original_line_key
    where g.intent_type = 'onramp'
      and not g.delivered
      and g.mismatched
      and not g.under_way
),

-- the MED marker a devolução's text carries (API Pix natureza MED_FRAUDE, MED_OPERACIONAL,
-- MED_PIX_AUTOMATICO, or a bank's plain MED), one per credit
med_markers as (
    select
        m.original_line_key,
        max(nullif(regexp_extract(
            ' ' || regexp_replace(upper(l.description), '[^A-Z0-9_]+', ' ', 'g') || ' ',
            ' (MED(_[A-Z]+)*) ', 1), '')) as marker
    from int_refund_groups as g
    join int_matches as m
      on m.role = 'refund' and m.original_line_key = g.original_line_key
    join stg_statement_lines as l on l.line_key = m.line_key
    where g.delivered
    group by m.original_line_key
),

-- a credit of an onramp whose tokens were delivered, sent back in whole or in parts (a MED
-- claim weeks later, or any devolução): the tokens are out and the money is gone. One break
-- per credit, named by the credit (its id stays as more parts come back), on the run that
-- imports the devolução, with no grace: nothing more is owed to the payer
onramp_credit_returned as (
    select
        'onramp_credit_returned' as category,
        g.intent_key,
        g.original_line_key as line_key,
        i.intent_id,
        original.line_id,
        original.end_to_end_id,
        g.received_cents as expected_cents,
        g.returned_cents as actual_cents,
        case when med.marker is null then 'onramp_credit_returned'
             else 'onramp_credit_returned_med' end as reason_code,
        to_json({
            'intent_id': i.intent_id, 'status': g.intent_status,
            'credit_ref': coalesce(original.end_to_end_id, original.line_id),
            'received_cents': g.received_cents, 'credit_booked_at': iso_utc(original.booked_at),
            'returned_cents': g.returned_cents, 'parts': g.parts,
            'last_ref': coalesce(last_line.end_to_end_id, last_line.line_id),
            'last_booked_at': iso_utc(g.last_booked_at), 'marker': med.marker
        }) as reason_params,
        g.last_booked_at as evidence_at
    from int_refund_groups as g
    join stg_intents as i on i.intent_key = g.intent_key
    join stg_statement_lines as last_line on last_line.line_key = g.last_line_key
    join stg_statement_lines as original on original.line_key = g.original_line_key
    left join med_markers as med on med.original_line_key = g.original_line_key
    where g.delivered
)

select * from refund_missing
union all by name select * from refund_amount_mismatch
union all by name select * from onramp_credit_returned
