-- Pass 0, manual: pairs a person confirmed (`recon review`: one candidate of an ambiguous
-- match; `recon pair`: statement lines paired by hand with an intent that lacks its money),
-- kept in data/manual_matches.csv and bound into the temp table manual_matches. They are
-- honoured first, so the heuristic passes skip their lines and intents. Several lines of one
-- intent are one payment in parts (int_matches sums them). A devolução (pix_refund_out) paired
-- with an onramp is its refund (is_refund). A pair whose intent or line is no longer in scope,
-- or whose line goes the wrong way for the intent, is left out (and the break it was meant to
-- settle shows again).
select distinct
    l.line_key,
    i.intent_key,
    'manual' as rule,
    'matched' as outcome,
    l.kind = 'pix_refund_out' as is_refund
from manual_matches as m
join stg_intents as i on i.intent_id = m.intent_id
join stg_statement_lines as l on l.line_id = m.line_id
where (i.intent_type = 'onramp' and l.kind in ('pix_in', 'pix_refund_out'))
   or (i.intent_type = 'offramp' and l.kind = 'pix_out')
