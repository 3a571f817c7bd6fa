-- A statement line settles at most one intent: no line_id twice among the confirmed pairs
-- (payments, duplicates and refunds together).
select line_id, count(*) as times, string_agg(intent_id, ', ' order by intent_id) as intents
from int_matches
group by line_id
having count(*) > 1
