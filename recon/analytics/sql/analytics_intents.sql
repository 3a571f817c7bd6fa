-- analytics_last_seen: one row per intent as last observed by any committed snapshot (not
-- only the latest one: an extract may be filtered by type or status), with what analytics
-- group and count by. It reads intent_snapshots once (one hash aggregate), not status_history.
--   created_local / created_date   creation time in the business time zone
--   outcome                        completed | expired | canceled | failed | refunded | open
--                                  (open = not terminal when last seen: right-censored)
CREATE OR REPLACE VIEW analytics_last_seen AS
WITH latest AS (
    -- the last observation of each intent (latest snapshot; within one, the latest version)
    SELECT
        arg_max(
            struct_pack(
                id := id,
                instance_id := instance_id,
                intent_type := intent_type,
                status := status,
                status_reason := status_reason,
                amount_cents := amount_cents,
                created_at := created_at,
                updated_at := updated_at,
                expires_at := expires_at,
                snapshot_at := snapshot_at
            ),
            -- no update time sorts below every real one (the earliest instant both engines hold)
            (snapshot_at, run_id, coalesce(updated_at, TIMESTAMPTZ '0001-01-01 00:00:00+00'), status)
        ) AS last_seen
    FROM intent_snapshots
    GROUP BY id
),

final_stage AS (
    SELECT intent_type, max(stage_rank) AS final_rank
    FROM analytics_lifecycle_order
    WHERE kind = 'stage'
    GROUP BY intent_type
)

SELECT
    -- ids
    l.id AS intent_id,
    l.instance_id,
    l.intent_type,
    -- status as last seen
    l.status,
    l.status_reason,
    CASE
        WHEN lo.kind = 'stage' AND lo.stage_rank = fs.final_rank THEN 'completed'
        WHEN lo.kind = 'exit' THEN l.status
        ELSE 'open'
    END AS outcome,
    -- amounts (cents)
    l.amount_cents,
    -- timestamps (UTC, and the business day)
    l.created_at,
    l.updated_at,
    l.expires_at,
    l.snapshot_at AS last_seen_at,
    timezone({tz}, l.created_at) AS created_local,
    CAST(timezone({tz}, l.created_at) AS DATE) AS created_date
FROM (SELECT last_seen.* FROM latest) AS l
LEFT JOIN analytics_lifecycle_order AS lo
    ON lo.intent_type = l.intent_type AND lo.status = l.status
LEFT JOIN final_stage AS fs ON fs.intent_type = l.intent_type;

-- analytics_intents: analytics_last_seen with
--   max_stage_rank                 furthest lifecycle stage the intent is known to have
--                                  reached: the highest stage any snapshot saw, or the stage
--                                  its exit implies (an expired onramp waited for payment);
--                                  every intent counts as created (rank 1)
-- It reads status_history, the costly part: queries that need no max_stage_rank read
-- analytics_last_seen, since DuckDB does not always prune the unused join (a join with
-- status_history elsewhere in the query keeps it, building status_history twice).
CREATE OR REPLACE VIEW analytics_intents AS
WITH reached AS (
    SELECT
        h.intent_id,
        max(coalesce(h.stage_rank, lo.implied_stage_rank)) AS max_stage_rank
    FROM status_history AS h
    LEFT JOIN analytics_lifecycle_order AS lo
        ON lo.intent_type = h.intent_type AND lo.status = h.status
    GROUP BY h.intent_id
)

SELECT
    l.intent_id,
    l.instance_id,
    l.intent_type,
    l.status,
    l.status_reason,
    l.outcome,
    coalesce(r.max_stage_rank, 1) AS max_stage_rank,
    l.amount_cents,
    l.created_at,
    l.updated_at,
    l.expires_at,
    l.last_seen_at,
    l.created_local,
    l.created_date
FROM analytics_last_seen AS l
LEFT JOIN reached AS r ON r.intent_id = l.intent_id;
