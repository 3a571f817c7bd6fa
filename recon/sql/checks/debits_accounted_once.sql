-- matched + unmatched debits = all debits (fees apart): every payout or devolução line is
-- either a match (int_matches: payment or refund) or a line break (unmatched_debit, ambiguous_match, a
-- duplicate payout), exactly once. Counted by line key, ids fetched for offending lines only.
with

debits as (
    select line_key, line_id from stg_statement_lines where direction = 'debit' and kind <> 'fee'
),

matched as (
    select line_key, count(*) as n
    from int_matches
    where role in ('payment', 'refund') and direction = 'debit'
    group by line_key
),

unmatched as (
    select line_key, count(*) as n
    from recon_exceptions
    where category in ('unmatched_debit', 'ambiguous_match', 'onramp_duplicate_credit',
                       'offramp_duplicate_payout')
    group by line_key
)

select debits.line_id, coalesce(matched.n, 0) as matched, coalesce(unmatched.n, 0) as unmatched
from debits
left join matched using (line_key)
left join unmatched using (line_key)
where coalesce(matched.n, 0) + coalesce(unmatched.n, 0) <> 1
