-- surrogate_key: intent_key
-- stg_intents: one row per intent of the latest snapshot, renamed for matching.
-- Rename and cast only; the optional business-day window (params.date_from/date_to, as the
-- UTC instants window_start/window_end) keeps intents created inside it.
-- intent_key is a dense integer surrogate for intent_id, valid within one run: every later
-- model joins on it (an integer join is several times cheaper than one on a 36-character
-- uuid); ids come back only where a person reads them.
with

source as (
    select * from intents
),

renamed as (
    select
        ---------- ids
        id as intent_id,
        intent_type,

        ---------- status
        status,

        ---------- references a statement line may carry (the txid form of the id,
        ---------- txid_form(intent_id), is computed where a pass joins on it:
        ---------- stored, it would be 400 MB more per 10M intents to hold or spill)
        nullif(trim(client_reference), '') as client_reference,
        nullif(trim(pix_description), '') as pix_description,

        ---------- counterparty (the party paying an onramp / receiving an offramp)
        party_display_name,
        party_document_masked,
        destination_address,
        destination_address_hash,

        ---------- amounts (cents)
        amount_cents,

        ---------- timestamps (UTC)
        created_at,
        updated_at,
        expires_at

    from source
    where id is not null
)

select renamed.*
from renamed, params
where (params.window_start is null or renamed.created_at >= params.window_start)
  and (params.window_end is null or renamed.created_at < params.window_end)
