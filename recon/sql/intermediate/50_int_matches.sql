-- Every confirmed (intent, line) pair of the four passes, with its role:
--   payment    the earliest-booked payment line of the intent (the match),
--   duplicate  any later payment line confirmed for the same intent (a break),
--   refund     a devolução joined through refund_of.
-- line_rank orders an intent's payment lines (and, apart, its refund lines) by booking time.
-- expected_cents is what the intent says should have moved for that line: the intent's
-- amount for a payment, what the original payment really carried for a refund.
with

confirmed as (
    select line_id, intent_id, rule, null as original_line_id
    from int_match_txid
    union all
    select line_id, intent_id, rule, null
    from int_match_reference where outcome = 'matched'
    union all
    select line_id, intent_id, rule, null
    from int_match_attributes where outcome = 'matched'
    union all
    select line_id, intent_id, rule, original_line_id
    from int_match_refunds
),

joined as (
    select
        ---------- ids
        confirmed.intent_id,
        confirmed.line_id,
        lines.end_to_end_id,
        confirmed.original_line_id,
        confirmed.rule,

        ---------- what matched
        intents.intent_type,
        intents.status as intent_status,
        intents.updated_at as intent_updated_at,
        lines.kind as line_kind,
        lines.direction,

        ---------- amounts (cents, positive magnitudes)
        case
            when confirmed.rule = 'refund' then originals.amount_abs_cents
            else intents.amount_cents
        end as expected_cents,
        lines.amount_abs_cents as actual_cents,

        ---------- timestamps (UTC)
        lines.booked_at
    from confirmed
    join stg_statement_lines as lines on lines.line_id = confirmed.line_id
    join stg_intents as intents on intents.intent_id = confirmed.intent_id
    left join stg_statement_lines as originals on originals.line_id = confirmed.original_line_id
),

ranked as (
    select
        *,
        row_number() over (
            partition by intent_id, rule = 'refund'
            -- the end-to-end id embeds the initiation time (yyyyMMddHHmm): it orders lines
            -- booked on the same date by statements that carry no time of day (CNAB 240)
            order by booked_at, end_to_end_id, line_id
        ) as line_rank
    from joined
)

select
    *,
    case
        when rule = 'refund' then 'refund'
        when line_rank = 1 then 'payment'
        else 'duplicate'
    end as role
from ranked
