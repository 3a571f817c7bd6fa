-- Every confirmed (intent, line) pair of the passes (a person's manual ones included), with its role:
--   payment    the earliest-booked payment line of the intent (the match),
--   duplicate  any later payment line confirmed for the same intent (a break),
--   refund     a devolução joined through refund_of.
-- line_rank orders an intent's payment lines (and, apart, its refund lines) by booking time.
-- expected_cents is what the intent says should have moved for that line: the intent's
-- amount for a payment, what the original payment really carried for a refund.
-- Keys and the facts the break rules test only: ids and texts are joined back (by key) by
-- the marts, for the rows that need them.
with

payments as (
    select line_key, intent_key, rule from int_match_manual
    union all
    select line_key, intent_key, rule from int_match_txid
    union all
    select line_key, intent_key, rule from int_match_reference where outcome = 'matched'
    union all
    select line_key, intent_key, rule from int_match_attributes where outcome = 'matched'
),

confirmed as (
    select line_key, intent_key, rule, null::bigint as original_line_key, null::bigint as original_cents
    from payments
    union all
    select r.line_key, r.intent_key, r.rule, r.original_line_key, o.amount_abs_cents
    from int_match_refunds as r
    join stg_statement_lines as o on o.line_key = r.original_line_key
),

-- most intents have one payment line (and no refund): only the groups with several lines
-- are ordered, on the few columns the order needs
crowded as (
    select intent_key, rule = 'refund' as is_refund
    from confirmed
    group by all
    having count(*) > 1
),

ranks as (
    select
        c.line_key,
        row_number() over (
            partition by c.intent_key, c.rule = 'refund'
            -- the end-to-end id embeds the initiation time (yyyyMMddHHmm): it orders lines
            -- booked on the same date by statements that carry no time of day (CNAB 240)
            order by l.booked_at, l.end_to_end_id, l.line_id
        ) as line_rank
    from confirmed as c
    semi join crowded as g on g.intent_key = c.intent_key and g.is_refund = (c.rule = 'refund')
    join stg_statement_lines as l on l.line_key = c.line_key
),

joined as (
    select
        ---------- keys
        confirmed.intent_key,
        confirmed.line_key,
        confirmed.original_line_key,
        confirmed.rule,

        ---------- what matched
        intents.intent_type,
        intents.status as intent_status,
        intents.updated_at as intent_updated_at,
        intents.expires_at as intent_expires_at,
        lines.kind as line_kind,
        lines.direction,

        ---------- amounts (cents, positive magnitudes)
        coalesce(confirmed.original_cents, intents.amount_cents) as expected_cents,
        lines.amount_abs_cents as actual_cents,

        ---------- timestamps (UTC)
        lines.booked_at,

        ---------- order among the intent's lines of the same kind
        coalesce(ranks.line_rank, 1) as line_rank
    from confirmed
    join stg_statement_lines as lines on lines.line_key = confirmed.line_key
    join stg_intents as intents on intents.intent_key = confirmed.intent_key
    left join ranks on ranks.line_key = confirmed.line_key
)

select
    *,
    actual_cents - expected_cents as delta_cents,
    case
        when rule = 'refund' then 'refund'
        when line_rank = 1 then 'payment'
        else 'duplicate'
    end as role
from joined
