-- Refunds per credit: one row per original payment line sent back (in whole or in parts) by
-- devoluções confirmed by the refund pass. received = what the original line carried,
-- returned = the sum of its settled devoluções (a devolução NAO_REALIZADO is void and gone
-- from statement_lines). under_way: less than received came back and the last devolução or
-- the intent's last update is younger than refund_grace, so more may still come.
-- last_line_key names the group: its latest devolução. delivered: an onramp past minting
-- (status_vocabulary), whose tokens went out: its credit coming back is a loss, not a refund.
with

delivered as (
    select status from status_vocabulary
    where intent_type = 'onramp' and kind = 'stage'
      and stage_rank > (select stage_rank from status_vocabulary
                        where intent_type = 'onramp' and status = 'minting')
),

parts as (
    select
        intent_key,
        original_line_key,
        any_value(intent_type) as intent_type,
        any_value(intent_status) as intent_status,
        any_value(intent_updated_at) as intent_updated_at,
        any_value(expected_cents) as received_cents,
        sum(actual_cents) as returned_cents,
        count(*) as parts,
        max(booked_at) as last_booked_at,
        arg_max(line_key, booked_at) as last_line_key
    from int_matches
    where role = 'refund'
    group by intent_key, original_line_key
)

select
    parts.*,
    parts.returned_cents < parts.received_cents - p.amount_tolerance_cents
        and greatest(parts.last_booked_at, parts.intent_updated_at) >= p.as_of - p.refund_grace
        as under_way,
    abs(parts.returned_cents - parts.received_cents) > p.amount_tolerance_cents as mismatched,
    parts.intent_type = 'onramp'
        and parts.intent_status in (select status from delivered) as delivered
from parts
cross join params as p
