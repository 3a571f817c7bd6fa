-- The intents whose status says money moved (or should be moving) and that no payment line
-- matched, nor is a candidate of an ambiguous line: what the "no money" rules
-- (onramp_missing_credit, offramp_missing_payout, offramp_stuck_paying_out) look at.
with

paid as (
    select intent_key from int_matches where role = 'payment'
),

ambiguous_intents as (
    select distinct intent_key from int_ambiguous
),

-- statuses that say the fiat moved (status_vocabulary.fiat_moved), and an offramp paying out
moving as (
    select intent_type, status from status_vocabulary where fiat_moved
    union all
    select 'offramp', 'paying_out'
)

select i.*
from stg_intents as i
semi join moving as s on s.intent_type = i.intent_type and s.status = i.status
anti join paid as m on m.intent_key = i.intent_key
anti join ambiguous_intents as a on a.intent_key = i.intent_key
