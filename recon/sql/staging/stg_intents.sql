-- stg_intents: one row per intent of the latest snapshot, renamed for matching.
-- Rename and cast only; the optional business-day window (params.date_from/date_to) keeps
-- intents created inside it.
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

        ---------- references a statement line may carry
        upper(replace(id, '-', '')) as txid_key,
        nullif(trim(client_reference), '') as client_reference,
        nullif(trim(pix_description), '') as pix_description,

        ---------- counterparty (the party paying an onramp / receiving an offramp)
        party_display_name,
        party_document_masked,
        destination_address,

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
where (params.date_from is null or business_day(renamed.created_at) >= params.date_from)
  and (params.date_to is null or business_day(renamed.created_at) <= params.date_to)
