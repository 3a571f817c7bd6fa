-- Lines a heuristic pass could not pin to one intent: one row per (line, candidate intent).
-- These lines become ambiguous_match breaks, and their candidate intents are not reported
-- as missing their money (a person decides which one the line belongs to).
select line_key, intent_key, rule
from int_match_reference
where outcome = 'ambiguous'
union all
select line_key, intent_key, rule
from int_match_attributes
-- a group of twins that elimination paired is no longer ambiguous (its lines and intents
-- have candidates only inside it)
anti join int_match_elimination as e on e.line_key = int_match_attributes.line_key
where outcome = 'ambiguous'
