-- only_with: source_balance_files
-- int_balance_walk: the balance walk (catalog view statement_balances) of the service's
-- accounts (params.accounts; all when empty), over the days that ended by as_of: what
-- breaks_balances judges and the run's summary (balance_walk) shows. Without any stated
-- balance it is empty and reads nothing (the walk would read every statement line again).
with

p as (
    select * from params
)

select
    b.*,
    timezone('America/Sao_Paulo', cast(b.day + 1 as timestamp)) as day_end,
    -- the day's closing when one is known: stated, else walked through the day's file
    coalesce(b.closing_cents, b.opening_cents + b.movements_cents) as end_cents,
    -- the days with a file up to each day: one number per run of days without one
    sum(case when b.state = 'no_file' then 0 else 1 end) over (
        partition by b.account order by b.day rows unbounded preceding
    ) as files_before
from statement_balances as b, p
where (array_length(p.accounts) = 0 or list_contains(p.accounts, b.account))
  and timezone('America/Sao_Paulo', cast(b.day + 1 as timestamp)) <= p.as_of
