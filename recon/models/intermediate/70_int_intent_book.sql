-- The "book": the money each intent's status says has moved, per direction, on the
-- business day of the line that matched it (or of the intent's last update when none did).
--   onramp at/after fiat_received (or refunded):  a credit of its amount
--   onramp refunded:                               a debit (the devolução) of what was
--                                                  received (its amount if nothing matched)
--   offramp completed:                             a debit of its amount
-- The control totals compare this book with the statement per day and direction.
with

onramp_paid_statuses as (
    select status from status_vocabulary
    where intent_type = 'onramp' and (fiat_moved or status = 'refunded')
),

entries as (
    select intent_key, 'credit' as direction, 'payment' as role, amount_cents, updated_at
    from stg_intents
    where intent_type = 'onramp'
      and status in (select status from onramp_paid_statuses)
    union all
    select i.intent_key, 'debit', 'refund', coalesce(received.paid_cents, i.amount_cents),
           i.updated_at
    from stg_intents as i
    left join int_matches as received
      on received.intent_key = i.intent_key and received.role = 'payment'
    where i.intent_type = 'onramp' and i.status = 'refunded'
    union all
    select intent_key, 'debit', 'payment', amount_cents, updated_at
    from stg_intents
    where intent_type = 'offramp' and status = 'completed'
),

-- (an intent paid in parts: its payment row carries the parts' sum, paid_moved_cents)
first_match as (
    select intent_key, role, booked_at, line_key, paid_moved_cents as moved_cents
    from int_matches
    where role in ('payment', 'refund') and line_rank = 1
)

select
    entries.intent_key,
    entries.direction,
    entries.role,
    entries.amount_cents as book_cents,
    first_match.line_key as matched_line_key,
    -- what the line moved (net of a PSP's fee: control items label the fee psp_fee)
    first_match.moved_cents as matched_cents,
    business_day(coalesce(first_match.booked_at, entries.updated_at)) as business_day
from entries
left join first_match
  on first_match.intent_key = entries.intent_key
 and first_match.role = entries.role
