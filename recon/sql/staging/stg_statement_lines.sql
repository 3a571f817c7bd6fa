-- surrogate_key: line_key
-- stg_statement_lines: one row per normalized statement line, renamed for matching; only
-- the columns the models use (a million lines should fit in the memory budget). Amounts
-- are magnitudes in cents; direction says credit or debit. Lines booked after as_of are left
-- out (the intents are only known up to as_of), and so are lines outside the optional
-- business-day window, and so are lines of accounts that are not the service's
-- (params.accounts; all count when it is empty). line_key is a dense integer surrogate for
-- line_id, valid within one run, that every later model joins on (see stg_intents).
-- booked_latest is the latest the line can have been booked: booked_at, or for a date-only
-- booking (CNAB 240, bank CSV: local midnight) the end of that day; a pass pairs a line
-- only with an intent created before it (created_at <= booked_latest + clock_skew).
-- moved_at (below) is the instant a date-only line's text says the money moved.
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
        counterparty_key_hash,
        description,

        ---------- timestamps (UTC)
        booked_at,
        case
            when cast(timezone((select business_tz from params), booked_at) as time)
                 = time '00:00:00'
                then booked_at + interval 1 day
            else booked_at
        end as booked_latest,
        said_at(description, booked_at) as said_at

    from source
    where line_id is not null
      and (array_length((select accounts from params)) = 0
           or list_contains((select accounts from params), account))
)

select
    renamed.* exclude (said_at),
    -- moved_at: when the money moved, as the line's own text says, for a line booked on a
    -- date up to 7 days after it (a PIX of the weekend that Banco do Brasil books on Monday):
    -- the attributes pass places the line in an intent's window by it; NULL otherwise
    case
        when renamed.said_at >= renamed.booked_at - interval 7 day
         and renamed.said_at < renamed.booked_latest
            then renamed.said_at
    end as moved_at
from renamed, params
where renamed.booked_at <= params.as_of
  and (params.window_start is null or renamed.booked_at >= params.window_start)
  and (params.window_end is null or renamed.booked_at < params.window_end)
