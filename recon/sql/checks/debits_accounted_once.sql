-- matched + unmatched debits = all debits (fees apart): every payout or devolução line is
-- either a match or a line break (unmatched_debit, ambiguous_match, a duplicate payout),
-- exactly once.
with

debits as (
    select line_id from stg_statement_lines where direction = 'debit' and kind <> 'fee'
),

matched as (
    select line_id, count(*) as n from recon_matches group by line_id
),

unmatched as (
    select line_id, count(*) as n
    from recon_exceptions
    where category in ('unmatched_debit', 'ambiguous_match', 'offramp_duplicate_payout',
                       'onramp_duplicate_credit')
    group by line_id
)

select debits.line_id, coalesce(matched.n, 0) as matched, coalesce(unmatched.n, 0) as unmatched
from debits
left join matched using (line_id)
left join unmatched using (line_id)
where coalesce(matched.n, 0) + coalesce(unmatched.n, 0) <> 1
