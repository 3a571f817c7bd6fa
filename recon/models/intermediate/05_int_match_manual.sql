-- Pass 0, manual: pairs a person confirmed (`recon review`: one candidate of an ambiguous
-- match, kept in data/manual_matches.csv and bound into the temp table manual_matches).
-- They are honoured first, so the heuristic passes skip their lines and intents. A pair
-- whose intent or line is no longer in scope, or whose line goes the wrong way for the
-- intent, is left out (and the break it was meant to settle shows again).
select distinct
    l.line_key,
    i.intent_key,
    'manual' as rule,
    'matched' as outcome
from manual_matches as m
join stg_intents as i on i.intent_id = m.intent_id
join stg_statement_lines as l on l.line_id = m.line_id
where (i.intent_type = 'onramp' and l.kind = 'pix_in')
   or (i.intent_type = 'offramp' and l.kind = 'pix_out')
