-- The lifecycle order of each intent type (docs/emulator.md, lifecycles): one row per
-- intent_type × status with its rank along the happy path, or kind = 'exit' for the
-- terminal exits. The rows come from recon.schemas (ONRAMP_LIFECYCLE, OFFRAMP_LIFECYCLE,
-- TERMINAL_EXITS), the one status vocabulary, registered as the source `source_lifecycle`
-- (recon.catalog); recon.analytics.connect() replaces this view with the order configured
-- in recon.toml `[analytics]`, and status_history follows it because DuckDB binds views
-- late.
CREATE OR REPLACE VIEW lifecycle_order AS
SELECT intent_type, status, CAST(stage_rank AS INTEGER) AS stage_rank, kind
FROM source_lifecycle;

-- One row per intent × status observed across snapshots, with first/last seen and the best
-- estimate of when the intent entered that status.
--
-- The API only returns each intent's current status, so the history is what the snapshots
-- saw. When a status first appears in a snapshot, the intent entered it after the previous
-- snapshot that saw this intent (or after created_at, if none did) and no later than this
-- snapshot: that is the bracket (entered_after, entered_before]. The item's updated_at in
-- that snapshot is the time of its last change, so when it falls inside the bracket it is
-- the entry time itself (entry_source = 'updated_at'); otherwise (updated_at missing, or not
-- moved by the server) only the bracket is known (entry_source = 'bracket').
--
-- Cost: one window sort of intent_snapshots (by intent, then snapshot) and one hash
-- aggregate; at 1M intents x 30 snapshots that is ~12 s on 2 cores where two windows and a
-- join back took ~57 s and 17 GB (bench/analytics.py).
CREATE OR REPLACE VIEW status_history AS
WITH ordered AS (
    -- each intent's observations in snapshot order; within one snapshot (a list walk that
    -- returned an item twice) the latest version comes first
    SELECT
        id,
        intent_type,
        status,
        status_reason,
        created_at,
        updated_at,
        snapshot_at,
        run_id,
        lag(run_id) OVER by_intent AS previous_run_id,
        -- every row of one snapshot has its snapshot_at, so the row before the first row of
        -- a snapshot carries the previous snapshot's time
        lag(snapshot_at) OVER by_intent AS previous_seen_at
    FROM intent_snapshots
    WINDOW by_intent AS (
        PARTITION BY id ORDER BY snapshot_at, run_id, updated_at DESC NULLS LAST, status
    )
),

observed AS (
    -- one observation per intent and snapshot
    SELECT * FROM ordered WHERE previous_run_id IS DISTINCT FROM run_id
),

per_status AS (
    SELECT
        id,
        status,
        any_value(intent_type) AS intent_type,
        min(snapshot_at) AS first_seen_at,
        max(snapshot_at) AS last_seen_at,
        count(*) AS snapshots_seen,
        arg_max(status_reason, snapshot_at) AS status_reason,
        -- the first observation of the status (a struct, so NULL fields are kept)
        arg_min(
            struct_pack(
                previous_seen_at := previous_seen_at,
                updated_at := updated_at,
                created_at := created_at
            ),
            (snapshot_at, run_id)
        ) AS first_obs
    FROM observed
    GROUP BY id, status
),

bounded AS (
    SELECT
        *,
        first_obs.updated_at AS first_updated_at,
        greatest(
            coalesce(first_obs.previous_seen_at, first_obs.created_at), first_obs.created_at
        ) AS lower_bound
    FROM per_status
)

SELECT
    -- ids
    p.id AS intent_id,
    p.intent_type,
    p.status,
    -- lifecycle
    lo.stage_rank,
    coalesce(lo.kind, 'unknown') AS stage_kind,
    p.status_reason,
    -- what the snapshots saw
    p.first_seen_at,
    p.last_seen_at,
    p.snapshots_seen,
    -- entry into the status
    CASE WHEN p.first_updated_at >= p.lower_bound THEN p.first_updated_at END AS entered_at,
    p.lower_bound AS entered_after,
    greatest(p.first_seen_at, p.first_updated_at) AS entered_before,
    CASE
        WHEN p.first_updated_at >= p.lower_bound THEN 'updated_at'
        ELSE 'bracket'
    END AS entry_source,
    p.first_obs.created_at AS intent_created_at
FROM bounded AS p
LEFT JOIN lifecycle_order AS lo
    ON lo.intent_type = p.intent_type AND lo.status = p.status;
