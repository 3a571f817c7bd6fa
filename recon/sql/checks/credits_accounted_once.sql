-- matched + unmatched credits = all credits: every non-fee credit line is either a match
-- (a payment or refund of int_matches) or a line break (unmatched_credit, ambiguous_match,
-- a duplicate credit), exactly once. Counted by line key, ids fetched for offending lines.
with

credits as (
    select line_key, line_id from stg_statement_lines where direction = 'credit' and kind <> 'fee'
),

matched as (
    select line_key, count(*) as n
    from int_matches
    where role in ('payment', 'refund') and direction = 'credit'
    group by line_key
),

unmatched as (
    select line_key, count(*) as n
    from recon_exceptions
    where category in ('unmatched_credit', 'ambiguous_match', 'onramp_duplicate_credit',
                       'offramp_duplicate_payout')
    group by line_key
)

select credits.line_id, coalesce(matched.n, 0) as matched, coalesce(unmatched.n, 0) as unmatched
from credits
left join matched using (line_key)
left join unmatched using (line_key)
where coalesce(matched.n, 0) + coalesce(unmatched.n, 0) <> 1
