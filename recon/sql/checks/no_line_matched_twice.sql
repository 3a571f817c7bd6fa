-- A statement line settles at most one intent: no line_id twice among the confirmed pairs
-- (payments, duplicates and refunds together). The lines are counted first, so the list of
-- intents is only built for the offending lines (not for every one of a million).
with

repeated as (
    select line_id from int_matches group by line_id having count(*) > 1
)

select m.line_id, count(*) as times, string_agg(m.intent_id, ', ' order by m.intent_id) as intents
from int_matches as m
semi join repeated as r on r.line_id is not distinct from m.line_id
group by m.line_id
