-- stg_coverage: the time the imported statements cover (statement_coverage), merged into
-- disjoint stretches per side:
--   credit  statements that list the PIX we received and their devoluções: every account
--           statement (OFX, CNAB 240, CSV) and API Pix GET /pix (scope 'received');
--   debit   statements that list every movement, our payouts included (scope 'all').
-- Only the accounts in params.accounts count (all when it is empty). With several
-- configured accounts a moment is covered only when every one of them is (the money may be
-- on any of them); by default any statement covers it. Ends: covered_from inclusive,
-- covered_to exclusive, as stored.
with

p as (
    select * from params
),

periods as (
    select c.account, c.scope, c.covered_from, c.covered_to
    from statement_coverage as c, p
    where c.covered_to > c.covered_from
      and (array_length(p.accounts) = 0 or list_contains(p.accounts, c.account))
),

sides as (
    select account, 'credit' as side, covered_from, covered_to from periods
    union all
    select account, 'debit' as side, covered_from, covered_to from periods where scope = 'all'
),

-- per account and side, overlapping or touching periods merged (gaps and islands)
flagged as (
    select
        *,
        case
            when covered_from <= max(covered_to) over (
                partition by account, side order by covered_from, covered_to
                rows between unbounded preceding and 1 preceding)
            then 0 else 1
        end as starts_island
    from sides
),

per_account as (
    select account, side, min(covered_from) as covered_from, max(covered_to) as covered_to
    from (
        select
            *,
            sum(starts_island) over (
                partition by account, side order by covered_from, covered_to
                rows unbounded preceding) as island
        from flagged
    )
    group by account, side, island
),

-- how many accounts cover each stretch between consecutive period boundaries
steps as (
    select side, boundary, sum(delta) as delta
    from (
        select side, covered_from as boundary, 1 as delta from per_account
        union all
        select side, covered_to as boundary, -1 as delta from per_account
    )
    group by side, boundary
),

stretches as (
    select
        side,
        boundary as covered_from,
        lead(boundary) over (partition by side order by boundary) as covered_to,
        sum(delta) over (partition by side order by boundary rows unbounded preceding) as accounts
    from steps
),

covered as (
    select s.side, s.covered_from, s.covered_to
    from stretches as s, p
    where s.covered_to is not null
      and s.accounts >= greatest(array_length(p.accounts), 1)
),

-- adjacent covered stretches joined into one
numbered as (
    select
        *,
        sum(starts) over (partition by side order by covered_from rows unbounded preceding)
            as island
    from (
        select
            *,
            case when covered_from = lag(covered_to) over (partition by side order by covered_from)
                 then 0 else 1 end as starts
        from covered
    )
)

select side, min(covered_from) as covered_from, max(covered_to) as covered_to
from numbered
group by side, island
