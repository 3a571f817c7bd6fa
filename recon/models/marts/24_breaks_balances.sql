-- materialized: view
-- breaks_balances: what the balance walk (int_balance_walk) says of the service's accounts.
-- (the columns every family shares: 25_breaks_all.sql; `subject` names the account and day
-- a break is about, for its break_id, as it has no intent or line)
-- A break names no line: its amount (actual_cents) is what the lines leave unexplained.
with

-- a day walked from a known opening whose stated closing its lines do not explain
walked_gap as (
    select
        abs(w.gap_cents) as actual_cents,
        'statement_balance_gap' as reason_code,
        to_json({
            'account': w.account, 'day': cast(w.day as varchar),
            'closing_cents': w.closing_cents, 'opening_cents': w.opening_cents,
            'movements_cents': w.movements_cents,
            'walked_cents': w.opening_cents + w.movements_cents, 'gap_cents': w.gap_cents
        }) as reason_params,
        'balance|' || w.account || '|' || cast(w.day as varchar) as subject,
        w.day_end as evidence_at
    from int_balance_walk as w
    where w.gap_cents <> 0
),

-- consecutive days without a file (statement_balances state no_file)
missing as (
    select
        account,
        files_before,
        min(day) as first_day,
        max(day) as last_day,
        count(*) as days,
        cast(sum(movements_cents) as bigint) as movements_cents,
        max(day_end) as evidence_at
    from int_balance_walk
    where state = 'no_file'
    group by account, files_before
),

-- days without a file across which the balance did not carry: the day before them ended at
-- a known balance, the first balance stated after them (the next day's opening, else its
-- closing) differs from it by more than the lines known in between
missing_gap as (
    select
        m.*,
        b.end_cents as before_cents,
        coalesce(a.opening_cents, a.closing_cents) as after_cents,
        case when a.opening_cents is null then a.day end as through_day,
        a.movements_cents as through_movements_cents,
        coalesce(a.opening_cents, a.closing_cents)
            - (b.end_cents + m.movements_cents
               + (case when a.opening_cents is null then a.movements_cents else 0 end))
            as gap_cents
    from missing as m
    join int_balance_walk as b on b.account = m.account and b.day = m.first_day - 1
    join int_balance_walk as a on a.account = m.account and a.day = m.last_day + 1
),

unfiled_gap as (
    select
        abs(g.gap_cents) as actual_cents,
        'statement_balance_unfiled' as reason_code,
        to_json({
            'account': g.account, 'first_day': cast(g.first_day as varchar),
            'last_day': cast(g.last_day as varchar), 'before_cents': g.before_cents,
            'movements_cents': g.movements_cents
                + (case when g.through_day is not null then g.through_movements_cents else 0 end),
            'after_cents': g.after_cents, 'gap_cents': g.gap_cents
        }) as reason_params,
        'balance|' || g.account || '|' || cast(g.first_day as varchar) as subject,
        g.evidence_at
    from missing_gap as g
    where g.gap_cents <> 0
)

select
    'statement_balance_gap' as category,
    null::bigint as intent_key,
    null::bigint as line_key,
    null as intent_id,
    null as line_id,
    null as end_to_end_id,
    null as expected_cents,
    g.*
from (
    select * from walked_gap
    union all by name select * from unfiled_gap
) as g
