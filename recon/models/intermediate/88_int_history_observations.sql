-- materialized: view
-- Every observation the history checks compare, one row per intent x snapshot: the last
-- one the previous run's history state kept of each intent (its earlier snapshots are
-- folded into it), then the rows of the snapshots after them (stg_intent_history).
-- is_latest flags the rows of the snapshot the `intents` view shows.
select intent_id, snapshot_run_id, intent_type, status, amount_cents, snapshot_at,
       false as is_latest
from stg_history_state
union all
select intent_id, snapshot_run_id, intent_type, status, amount_cents, snapshot_at, is_latest
from stg_intent_history
