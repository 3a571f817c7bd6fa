-- materialized: view
-- stg_intent_history: one row per intent x committed snapshot that the history checks
-- (status_regression, intent_vanished) have not folded yet: every snapshot, or only those
-- after the ones the previous run's history state covers (source_history_snapshot_files,
-- chosen by recon.catalog; stg_history_state holds what the state says of the others).
-- is_latest flags the snapshot the `intents` view shows (the latest full and consistent
-- one). A view, not a table: with a month of daily snapshots and no state it has tens of
-- millions of rows, and the history checks read only the rows of intents seen at more than
-- one place (none when there is a single snapshot).
with

source as (
    select * from source_history_snapshot_files
),

renamed as (
    select
        ---------- ids
        id as intent_id,
        run_id as snapshot_run_id,
        intent_type,

        ---------- status
        status,

        ---------- amounts (cents)
        amount_cents,

        ---------- timestamps (UTC)
        snapshot_at,
        created_at,
        updated_at,

        ---------- lineage
        run_id = (select max(run_id) from intents) as is_latest

    from source
    where id is not null
)

select * from renamed
