-- Every confirmed (intent, line) pair of the passes (a person's manual ones included), with its role:
--   payment    the earliest-booked payment line of the intent (the match),
--   duplicate  any later payment line confirmed for the same intent (a break),
--   refund     a devolução joined through refund_of.
-- line_rank orders an intent's payment lines (and, apart, its refund lines) by booking time.
-- expected_cents is what the intent says should have moved for that line: the intent's
-- amount for a payment, what the original payment really carried for a refund.
-- actual_cents is the line's gross (stg_statement_lines.gross_abs_cents: what moved plus the
-- fee its statement states), and fee_cents that fee. On an account with a PSP fee schedule
-- (fee_schedules) a credit that states no fee and is short of its onramp's amount by the
-- schedule's fee (within FEE_TOLERANCE_CENTS, recon.reconciliation.fees, plus the amount
-- tolerance) came net of it: the shortfall is its fee_cents and actual_cents the gross. A
-- fee off the schedule, stated or inferred from a shortfall of at most twice the schedule's
-- fee, is fee_off (onramp_fee_mismatch); a larger shortfall is the payer's (onramp_underpaid).
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
    select r.line_key, r.intent_key, r.rule, r.original_line_key, o.gross_abs_cents
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
        coalesce(ranks.line_rank, 1) as line_rank
    from confirmed
    join stg_statement_lines as lines on lines.line_key = confirmed.line_key
    join stg_intents as intents on intents.intent_key = confirmed.intent_key
    left join ranks on ranks.line_key = confirmed.line_key
    -- a payment credit on an account with a fee schedule
    left join fee_schedules as schedules
      on schedules.account = lines.account
     and lines.direction = 'credit'
     and confirmed.rule <> 'refund'
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
)

select
    *,
    actual_cents - expected_cents as delta_cents,
    case
        when rule = 'refund' then 'refund'
        when line_rank = 1 then 'payment'
        else 'duplicate'
    end as role
from amounts
