-- Every confirmed (intent, line) pair of the passes (a person's manual ones included), with its role:
--   payment    the earliest-booked payment line of the intent (the match),
--   part       another line a person paired by hand with the same intent: the intent was
--              paid in parts (two PIX for one onramp), and the payment row carries their sum,
--   duplicate  any later payment line confirmed for the same intent (a break),
--   refund     a devolução joined through refund_of, or paired by hand with its onramp.
-- line_rank orders an intent's payment lines (and, apart, its refund lines) by booking time,
-- the lines paired by hand first when there are several.
-- expected_cents is what the intent says should have moved for that line: the intent's
-- amount for a payment, what the original payment really carried for a refund.
-- actual_cents is the line's gross (stg_statement_lines.gross_abs_cents: what moved plus the
-- fee its statement states), and fee_cents that fee. On an account with a PSP fee schedule
-- (fee_schedules) a credit that states no fee and is short of its onramp's amount by the
-- schedule's fee (within FEE_TOLERANCE_CENTS, recon.reconciliation.fees, plus the amount
-- tolerance) came net of it: the shortfall is its fee_cents and actual_cents the gross. A
-- fee off the schedule, stated or inferred from a shortfall of at most twice the schedule's
-- fee, is fee_off (onramp_fee_mismatch); a larger shortfall is the payer's (onramp_underpaid).
-- paid_cents (and paid_moved_cents, net of stated fees) is what the pair carried: on the
-- payment row of an intent paid in parts the sum of its parts' gross (and moved) amounts, on
-- every other row the line's own. delta_cents = paid_cents - expected_cents.
-- Keys and the facts the break rules test only: ids and texts are joined back (by key) by
-- the marts, for the rows that need them.
with

payments as (
    select line_key, intent_key, rule from int_match_manual where not is_refund
    union all
    select line_key, intent_key, rule from int_match_txid
    union all
    select line_key, intent_key, rule from int_match_reference where outcome = 'matched'
    union all
    select line_key, intent_key, rule from int_match_attributes where outcome = 'matched'
    union all
    select line_key, intent_key, rule from int_match_elimination
),

-- the intents a person paid in parts: several payment lines paired by hand
manual_parts as (
    select
        m.intent_key,
        count(*) as parts,
        sum(l.gross_abs_cents) as parts_cents,
        sum(l.amount_abs_cents) as parts_moved_cents
    from int_match_manual as m
    join stg_statement_lines as l on l.line_key = m.line_key
    where not m.is_refund
    group by m.intent_key
    having count(*) > 1
),

-- what the payments of an intent whose devolução was paired by hand carried, and the first
-- of them (the original a refund names): it is what should go back
manual_refunded as (
    select
        p.intent_key,
        arg_min(p.line_key, l.booked_at) as original_line_key,
        sum(l.gross_abs_cents) as original_cents
    from payments as p
    semi join int_match_manual as r on r.intent_key = p.intent_key and r.is_refund
    join stg_statement_lines as l on l.line_key = p.line_key
    group by p.intent_key
),

confirmed as (
    select
        line_key, intent_key, rule, false as is_refund,
        null::bigint as original_line_key, null::bigint as original_cents
    from payments
    union all
    select r.line_key, r.intent_key, r.rule, true, r.original_line_key, o.gross_abs_cents
    from int_match_refunds as r
    join stg_statement_lines as o on o.line_key = r.original_line_key
    union all
    select m.line_key, m.intent_key, m.rule, true, o.original_line_key, o.original_cents
    from int_match_manual as m
    left join manual_refunded as o on o.intent_key = m.intent_key
    where m.is_refund
),

-- most intents have one payment line (and no refund): only the groups with several lines
-- are ordered, on the few columns the order needs
crowded as (
    select intent_key, is_refund
    from confirmed
    group by all
    having count(*) > 1
),

ranks as (
    select
        c.line_key,
        row_number() over (
            partition by c.intent_key, c.is_refund
            -- the parts of a payment paired by hand first; then the end-to-end id, which
            -- embeds the initiation time (yyyyMMddHHmm), orders lines booked on the same
            -- date by statements that carry no time of day (CNAB 240)
            order by
                case when c.rule = 'manual' and not c.is_refund then 0 else 1 end,
                l.booked_at, l.end_to_end_id, l.line_id
        ) as line_rank
    from confirmed as c
    semi join crowded as g on g.intent_key = c.intent_key and g.is_refund = c.is_refund
    join stg_statement_lines as l on l.line_key = c.line_key
),

joined as (
    select
        ---------- keys
        confirmed.intent_key,
        confirmed.line_key,
        confirmed.original_line_key,
        confirmed.rule,
        confirmed.is_refund,

        ---------- what matched
        intents.intent_type,
        intents.status as intent_status,
        intents.updated_at as intent_updated_at,
        intents.expires_at as intent_expires_at,
        lines.kind as line_kind,
        lines.direction,

        ---------- amounts (cents, positive magnitudes)
        coalesce(confirmed.original_cents, intents.amount_cents) as expected_cents,
        lines.gross_abs_cents,
        lines.amount_abs_cents as moved_cents,
        lines.fee_cents as stated_fee_cents,
        schedules.label as fee_schedule,
        schedules.tolerance_cents as fee_tolerance_cents,
        case when schedules.account is not null then schedule_fee(
            intents.amount_cents, schedules.rate_ppm, schedules.fixed_cents,
            schedules.min_cents, schedules.max_cents
        ) end as schedule_fee_cents,

        ---------- timestamps (UTC)
        lines.booked_at,

        ---------- order among the intent's lines of the same kind
        coalesce(ranks.line_rank, 1) as line_rank,

        ---------- an intent paid in parts (null otherwise)
        parts.parts,
        parts.parts_cents,
        parts.parts_moved_cents
    from confirmed
    join stg_statement_lines as lines on lines.line_key = confirmed.line_key
    join stg_intents as intents on intents.intent_key = confirmed.intent_key
    left join ranks on ranks.line_key = confirmed.line_key
    left join manual_parts as parts
      on parts.intent_key = confirmed.intent_key and not confirmed.is_refund
    -- a payment credit on an account with a fee schedule (not a part of a payment paired by
    -- hand in parts: a fee is read against the whole intent)
    left join fee_schedules as schedules
      on schedules.account = lines.account
     and lines.direction = 'credit'
     and not confirmed.is_refund
     and parts.intent_key is null
),

fees as (
    select
        joined.*,
        -- within the schedule: a shortfall (no fee stated), or the stated fee
        schedule_fee_cents is not null
            and stated_fee_cents is null
            and abs(expected_cents - gross_abs_cents - schedule_fee_cents)
                <= p.amount_tolerance_cents + fee_tolerance_cents as netted,
        schedule_fee_cents is not null
            and case
                when stated_fee_cents is not null
                    then abs(stated_fee_cents - schedule_fee_cents)
                         > p.amount_tolerance_cents + fee_tolerance_cents
                else expected_cents - gross_abs_cents > p.amount_tolerance_cents
                     and abs(expected_cents - gross_abs_cents - schedule_fee_cents)
                         > p.amount_tolerance_cents + fee_tolerance_cents
                     and expected_cents - gross_abs_cents
                         <= 2 * schedule_fee_cents + fee_tolerance_cents
            end as fee_off
    from joined
    cross join params as p
),

amounts as (
    select
        fees.* exclude (gross_abs_cents, stated_fee_cents, netted, fee_tolerance_cents),
        case when netted then expected_cents else gross_abs_cents end as actual_cents,
        case when netted then expected_cents - gross_abs_cents else stated_fee_cents end
            as fee_cents
    from fees
),

roles as (
    select
        amounts.* exclude (parts_cents, parts_moved_cents),
        case
            when is_refund then 'refund'
            when line_rank = 1 then 'payment'
            when rule = 'manual' and line_rank <= parts then 'part'
            else 'duplicate'
        end as role,
        case
            when not is_refund and line_rank = 1 then coalesce(parts_cents, actual_cents)
            else actual_cents
        end as paid_cents,
        case
            when not is_refund and line_rank = 1 then coalesce(parts_moved_cents, moved_cents)
            else moved_cents
        end as paid_moved_cents
    from amounts
)

select *, paid_cents - expected_cents as delta_cents
from roles
