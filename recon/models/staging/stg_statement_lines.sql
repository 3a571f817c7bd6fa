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
-- moved_from .. moved_until (below): when the money moved, for the attributes pass's windows.
-- bank_own marks the bank's own lines (fees, interest, yields), which every model leaves out of
-- the payments. gross_abs_cents is the PIX's own value (what the payer sent, what the payee received): the
-- amount that moved plus the fee the statement says the PSP took from it (fee_cents); the
-- passes match on it, and it is amount_abs_cents where no fee is stated.
with

-- the service's lines, each with its booking in the business time zone (converted once)
source as (
    select *, timezone((select business_tz from params), booked_at) as booked_local
    from statement_lines
    where line_id is not null
      and (array_length((select accounts from params)) = 0
           or list_contains((select accounts from params), account))
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
        account,
        direction,
        kind,
        -- the bank's own line (recon.statements.lines.OWN_KINDS: a fee, interest, a yield):
        -- nobody's payment, so no pass pairs it and no break names it; control totals count
        -- it apart, by kind
        kind in ('fee', 'interest', 'yield') as bank_own,

        ---------- amount (cents, a magnitude: direction says which way it moved)
        abs(amount_cents) as amount_abs_cents,
        fee_cents,
        abs(amount_cents + coalesce(fee_cents, 0)) as gross_abs_cents,

        ---------- counterparty
        counterparty_name,
        counterparty_document,
        counterparty_key,
        counterparty_key_hash,
        description,

        ---------- timestamps (UTC)
        booked_at,
        case
            when cast(booked_local as time) = time '00:00:00' then booked_at + interval 1 day
            else booked_at
        end as booked_latest,
        said_at(description, booked_local) as said_at,
        said_on(description, booked_local) as said_on

    from source
),

-- what the text says counts for a line booked on a date up to 7 days after the money moved
said as (
    select
        renamed.* exclude (said_at, said_on),
        case
            when said_at >= booked_at - interval 7 day and said_at < booked_latest
                then said_at
        end as said_at,
        case
            when said_on >= booked_at - interval 7 day and said_on < booked_latest
                then said_on
        end as said_on
    from renamed
)

select
    said.* exclude (said_at, said_on),
    -- moved_from .. moved_until: when the money moved. The booking (a date-only one spans
    -- its day), unless the line is booked on a date and its text says when the PIX was made:
    -- that instant (said_at), or that day (said_on; it spans that day, not the booking's)
    coalesce(said_at, said_on, booked_at) as moved_from,
    coalesce(said_at, said_on + interval 1 day, booked_latest) as moved_until
from said, params
where said.booked_at <= params.as_of
  and (params.window_start is null or said.booked_at >= params.window_start)
  and (params.window_end is null or said.booked_at < params.window_end)
