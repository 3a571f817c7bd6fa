-- materialized: view
-- recon_matches: one row per confirmed (intent, line) pair, with the rule that matched it.
-- A line appears at most once (checks/no_line_matched_twice). Extra payment lines of one
-- intent are not matches but breaks (onramp_duplicate_credit / offramp_duplicate_payout),
-- except the parts of a payment a person paired by hand (role part), each a match of its own.
-- A view: only the run file (matches.parquet, the contract columns in order) reads it, so
-- its ids are joined once, while that file is written. The checks read int_matches.
with

matches as (
    select * from int_matches where role in ('payment', 'part', 'refund')
),

final as (
    select
        ---------- ids
        intents.intent_id,
        lines.line_id,
        lines.end_to_end_id,
        matches.rule,

        ---------- what matched
        matches.intent_type,
        matches.intent_status,
        matches.line_kind,

        ---------- amounts (cents)
        matches.expected_cents,
        matches.actual_cents,
        matches.fee_cents,

        ---------- timestamps (UTC)
        matches.booked_at,

        ---------- keys (this run only)
        matches.intent_key,
        matches.line_key,
        matches.direction
    from matches
    join stg_intents as intents on intents.intent_key = matches.intent_key
    join stg_statement_lines as lines on lines.line_key = matches.line_key
)

select * from final
