-- recon_control_totals: per covered business day (params.business_tz) and direction,
--   statement total - intents total = explained + unexplained
-- A day counts for a direction only when the statements cover all of it (up to as_of) on
-- that side (stg_coverage: credits by any statement, debits by account statements): on a
-- day they do not cover, a missing statement would read as missing money.
-- statement_cents comes straight from the statement lines, the bank's own apart (bank_own:
-- fees_cents, interest_cents, yield_cents, each kind's lines of the day), intents_cents from
-- the book (int_intent_book), explained_cents from the labelled control items.
-- unexplained_cents must be 0 (checks/control_totals_balance).
with

statement as (
    select
        business_day(booked_at) as business_day,
        direction,
        sum(amount_abs_cents) filter (where not bank_own) as statement_cents,
        sum(amount_abs_cents) filter (where kind = 'fee') as fees_cents,
        sum(amount_abs_cents) filter (where kind = 'interest') as interest_cents,
        sum(amount_abs_cents) filter (where kind = 'yield') as yield_cents
    from stg_statement_lines
    group by all
),

book as (
    select business_day, direction, sum(book_cents) as intents_cents
    from int_intent_book
    group by all
),

explained as (
    select
        business_day,
        direction,
        sum(cents) filter (where label is not null) as explained_cents,
        sum(cents) filter (where label not in ('within_tolerance', 'in_flight',
                                               'returned', 'psp_fee')) as breaks_cents
    from recon_control_items
    group by all
),

days as (
    select d.business_day, d.direction
    from (
        select business_day, direction from statement
        union
        select business_day, direction from book
    ) as d
    cross join params as p
    where covered(
        d.direction,
        timezone(p.business_tz, cast(d.business_day as timestamp)),
        least(timezone(p.business_tz, cast(d.business_day + 1 as timestamp)), p.as_of)
    )
),

final as (
    select
        days.business_day,
        days.direction,
        cast(coalesce(statement.statement_cents, 0) as bigint) as statement_cents,
        cast(coalesce(book.intents_cents, 0) as bigint) as intents_cents,
        cast(coalesce(statement.statement_cents, 0) - coalesce(book.intents_cents, 0)
             as bigint) as difference_cents,
        cast(coalesce(explained.explained_cents, 0) as bigint) as explained_cents,
        cast(coalesce(explained.breaks_cents, 0) as bigint) as breaks_cents,
        cast(coalesce(statement.statement_cents, 0) - coalesce(book.intents_cents, 0)
             - coalesce(explained.explained_cents, 0) as bigint) as unexplained_cents,
        cast(coalesce(statement.fees_cents, 0) as bigint) as fees_cents,
        cast(coalesce(statement.interest_cents, 0) as bigint) as interest_cents,
        cast(coalesce(statement.yield_cents, 0) as bigint) as yield_cents
    from days
    left join statement using (business_day, direction)
    left join book using (business_day, direction)
    left join explained using (business_day, direction)
)

select * from final
order by business_day, direction
