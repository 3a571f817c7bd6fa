-- matched + unmatched credits = all credits: every non-fee credit line is either a match
-- (recon_matches) or a line break (unmatched_credit, ambiguous_match, a duplicate credit),
-- exactly once.
with

credits as (
    select line_id from stg_statement_lines where direction = 'credit' and kind <> 'fee'
),

matched as (
    select line_id, count(*) as n from recon_matches group by line_id
),

unmatched as (
    select line_id, count(*) as n
    from recon_exceptions
    where category in ('unmatched_credit', 'ambiguous_match', 'onramp_duplicate_credit',
                       'offramp_duplicate_payout')
    group by line_id
)

select credits.line_id, coalesce(matched.n, 0) as matched, coalesce(unmatched.n, 0) as unmatched
from credits
left join matched using (line_id)
left join unmatched using (line_id)
where coalesce(matched.n, 0) + coalesce(unmatched.n, 0) <> 1
