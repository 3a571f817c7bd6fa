-- Pass 1, txid: a statement txid equal to the intent id without hyphens (the convention for
-- dynamic PIX charges). Deterministic: one intent per txid, so every pair is confirmed.
-- A payment line of the right direction only (onramp <- credit, offramp -> debit);
-- devoluções are left to the refund pass. Lines a person matched (pass 0) are skipped.
-- Like every pass, it pairs a line only with an intent that existed when the money moved:
-- created_at <= booked_latest + clock_skew.
with

lines as (
    select line_key, txid, direction, booked_latest
    from stg_statement_lines
    where kind in ('pix_in', 'pix_out')
      and txid is not null
),

intents as (
    select
        intent_key,
        txid_form(intent_id) as txid_key,
        created_at,
        case intent_type when 'onramp' then 'credit' when 'offramp' then 'debit' end as direction
    from stg_intents
),

pairs as (
    select lines.line_key, intents.intent_key
    from lines
    join intents
      on lines.txid = intents.txid_key
     and lines.direction = intents.direction
    -- a person's confirmation (pass 0) comes first
    anti join int_match_manual as m on m.line_key = lines.line_key
    cross join params as p
    where intents.created_at <= lines.booked_latest + p.clock_skew
)

select
    line_key,
    intent_key,
    'txid' as rule,
    'matched' as outcome
from pairs
