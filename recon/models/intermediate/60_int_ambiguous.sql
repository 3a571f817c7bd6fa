-- Lines a heuristic pass could not pin to one intent: one row per (line, candidate intent).
-- These lines become ambiguous_match breaks, and their candidate intents are not reported
-- as missing their money (a person decides which one the line belongs to).
select line_key, intent_key, rule
from int_match_reference
where outcome = 'ambiguous'
union all
select line_key, intent_key, rule
from int_match_attributes
where outcome = 'ambiguous'
