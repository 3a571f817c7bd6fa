-- The lifecycle order of each intent type (DESIGN.md "Lifecycles"): one row per
-- intent_type × status with its rank along the happy path, or kind = 'exit' for the
-- terminal exits. These are the defaults of recon.schemas (ONRAMP_LIFECYCLE,
-- OFFRAMP_LIFECYCLE, TERMINAL_EXITS); recon.analytics.connect() replaces this view with
-- the order configured in recon.toml `[analytics]`, and status_history follows it because
-- DuckDB binds views late.
CREATE OR REPLACE VIEW lifecycle_order AS
SELECT intent_type, status, CAST(stage_rank AS INTEGER) AS stage_rank, kind
FROM (
    VALUES
        ('onramp', 'created', 1, 'stage'),
        ('onramp', 'requires_compliance', 2, 'stage'),
        ('onramp', 'awaiting_fiat_payment', 3, 'stage'),
        ('onramp', 'fiat_received', 4, 'stage'),
        ('onramp', 'minting', 5, 'stage'),
        ('onramp', 'awaiting_onchain_transfer', 6, 'stage'),
        ('onramp', 'completed', 7, 'stage'),
        ('offramp', 'created', 1, 'stage'),
        ('offramp', 'requires_compliance', 2, 'stage'),
        ('offramp', 'awaiting_burn_approval', 3, 'stage'),
        ('offramp', 'burn_approved', 4, 'stage'),
        ('offramp', 'onchain_received', 5, 'stage'),
        ('offramp', 'burning', 6, 'stage'),
        ('offramp', 'paying_out', 7, 'stage'),
        ('offramp', 'completed', 8, 'stage'),
        ('onramp', 'expired', NULL, 'exit'),
        ('onramp', 'canceled', NULL, 'exit'),
        ('onramp', 'failed', NULL, 'exit'),
        ('onramp', 'refunded', NULL, 'exit'),
        ('offramp', 'expired', NULL, 'exit'),
        ('offramp', 'canceled', NULL, 'exit'),
        ('offramp', 'failed', NULL, 'exit'),
        ('offramp', 'refunded', NULL, 'exit')
) AS t(intent_type, status, stage_rank, kind);

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
CREATE OR REPLACE VIEW status_history AS
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
