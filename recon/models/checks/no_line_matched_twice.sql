-- A statement line settles at most one intent: no line twice among the confirmed pairs
-- (payments, duplicates and refunds together). The lines are counted first (by key), so
-- the list of intents is only built for the offending lines (not for every one of a million).
with

repeated as (
    select line_key from int_matches group by line_key having count(*) > 1
)

select
    l.line_id,
    count(*) as times,
    string_agg(i.intent_id, ', ' order by i.intent_id) as intents
from int_matches as m
semi join repeated as r on r.line_key = m.line_key
join stg_statement_lines as l on l.line_key = m.line_key
join stg_intents as i on i.intent_key = m.intent_key
group by l.line_id
