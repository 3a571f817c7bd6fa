-- recon_matches: one row per confirmed (intent, line) pair, with the rule that matched it.
-- A line appears at most once (checks/no_line_matched_twice). Extra payment lines of one
-- intent are not matches but breaks (onramp_duplicate_credit / offramp_duplicate_payout).
with

matches as (
    select * from int_matches where role in ('payment', 'refund')
),

final as (
    select
        ---------- ids
        intent_id,
        line_id,
        end_to_end_id,
        rule,

        ---------- what matched
        intent_type,
        intent_status,
        line_kind,

        ---------- amounts (cents)
        expected_cents,
        actual_cents,

        ---------- timestamps (UTC)
        booked_at
    from matches
)

select * from final
order by intent_id, booked_at, line_id
