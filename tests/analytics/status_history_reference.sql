-- The first, plain form of the status_history view (two windows and a join back): the
-- oracle the faster view in recon/models/catalog/12_status_history.sql is checked against.
CREATE OR REPLACE VIEW status_history_reference AS
WITH observed AS (
    -- one observation per intent and snapshot (a list walk may return an item twice)
    SELECT id, intent_type, status, status_reason, created_at, updated_at, snapshot_at, run_id
    FROM intent_snapshots
    QUALIFY row_number() OVER (
        PARTITION BY id, run_id ORDER BY updated_at DESC NULLS LAST, status
    ) = 1
),

sequenced AS (
    SELECT
        *,
        lag(snapshot_at) OVER by_intent AS previous_seen_at,
        row_number() OVER (PARTITION BY id, status ORDER BY snapshot_at, run_id) AS nth_of_status
    FROM observed
    WINDOW by_intent AS (PARTITION BY id ORDER BY snapshot_at, run_id)
),

first_appearance AS (
    SELECT
        id,
        status,
        created_at,
        updated_at,
        previous_seen_at,
        greatest(coalesce(previous_seen_at, created_at), created_at) AS lower_bound
    FROM sequenced
    WHERE nth_of_status = 1
),

per_status AS (
    SELECT
        id,
        status,
        any_value(intent_type) AS intent_type,
        min(snapshot_at) AS first_seen_at,
        max(snapshot_at) AS last_seen_at,
        count(*) AS snapshots_seen,
        arg_max(status_reason, snapshot_at) AS status_reason
    FROM observed
    GROUP BY id, status
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
    CASE
        WHEN f.updated_at IS NOT NULL AND f.updated_at >= f.lower_bound THEN f.updated_at
    END AS entered_at,
    f.lower_bound AS entered_after,
    greatest(p.first_seen_at, f.updated_at) AS entered_before,
    CASE
        WHEN f.updated_at IS NOT NULL AND f.updated_at >= f.lower_bound THEN 'updated_at'
        ELSE 'bracket'
    END AS entry_source,
    f.created_at AS intent_created_at
FROM per_status AS p
JOIN first_appearance AS f USING (id, status)
LEFT JOIN lifecycle_order AS lo
    ON lo.intent_type = p.intent_type AND lo.status = p.status;
