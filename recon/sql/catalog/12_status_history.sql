-- One row per intent × status observed across snapshots, with first/last seen.
-- (Refined by recon.analytics: entry-time estimates and lifecycle order.)
CREATE OR REPLACE VIEW status_history AS
SELECT
    id AS intent_id,
    any_value(intent_type) AS intent_type,
    status,
    min(snapshot_at) AS first_seen_at,
    max(snapshot_at) AS last_seen_at,
    count(*) AS snapshots_seen
FROM intent_snapshots
GROUP BY id, status;
