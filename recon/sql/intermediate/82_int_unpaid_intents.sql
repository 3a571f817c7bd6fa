-- The intents whose status says money moved (or should be moving) and that no payment line
-- matched, nor is a candidate of an ambiguous line: what the "no money" rules
-- (onramp_missing_credit, offramp_missing_payout, offramp_stuck_paying_out) look at.
with

paid as (
    select intent_key from int_matches where role = 'payment'
),

ambiguous_intents as (
    select distinct intent_key from int_ambiguous
)

select i.*
from stg_intents as i
anti join paid as m on m.intent_key = i.intent_key
anti join ambiguous_intents as a on a.intent_key = i.intent_key
left join status_vocabulary as v on v.intent_type = i.intent_type and v.status = i.status
where v.fiat_moved or (i.intent_type = 'offramp' and i.status = 'paying_out')
