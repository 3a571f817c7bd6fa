-- surrogate_key: line_key
-- stg_statement_lines: one row per normalized statement line, renamed for matching; only
-- the columns the models use (a million lines should fit in the memory budget). Amounts
-- are magnitudes in cents; direction says credit or debit. Lines booked after as_of are left
-- out (the intents are only known up to as_of), and so are lines outside the optional
-- business-day window. line_key is a dense integer surrogate for line_id, valid within one
-- run, that every later model joins on (see stg_intents).
with

source as (
    select * from statement_lines
),

renamed as (
    select
        ---------- ids
        line_id,
        end_to_end_id,
        upper(nullif(trim(txid), '')) as txid,
        refund_of,
        bank_reference,

        ---------- what it is
        direction,
        kind,

        ---------- amount (cents, a magnitude: direction says which way it moved)
        abs(amount_cents) as amount_abs_cents,

        ---------- counterparty
        counterparty_name,
        counterparty_document,
        counterparty_key,
        description,

        ---------- timestamps (UTC)
        booked_at

    from source
    where line_id is not null
)

select renamed.*
from renamed, params
where renamed.booked_at <= params.as_of
  and (params.window_start is null or renamed.booked_at >= params.window_start)
  and (params.window_end is null or renamed.booked_at < params.window_end)
