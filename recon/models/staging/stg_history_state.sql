-- materialized: view
-- stg_history_state: the previous run's history state (runs/<run_id>/history_state.parquet),
-- one row per intent seen in the snapshots it covers: the intent's last observation there
-- (status, amount, snapshot) and its latest step backwards there (regressed_*, null when
-- none). The history checks fold the later snapshots (stg_intent_history) onto it, so a
-- daily run reads one new snapshot, not every kept one. Empty when the previous run left no
-- state that fits the snapshots kept now (recon.catalog decides): then stg_intent_history
-- holds every snapshot and the checks read them all.
select
    intent_id,
    snapshot_run_id,
    intent_type,
    status,
    amount_cents,
    snapshot_at,
    regressed_from,
    regressed_from_at,
    regressed_to,
    regressed_at
from source_history_state
