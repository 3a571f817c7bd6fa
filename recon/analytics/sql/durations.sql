-- Time from creation to entering a target stage, per intent that reached it.
-- The first status seen at or beyond the target tells when it was reached: if it is the
-- target itself with an exact entry (updated_at), that is the time; otherwise the target was
-- entered inside (reached_after, reached_before] and the estimate is the bracket's midpoint.
WITH target AS (
    SELECT stage_rank AS target_rank
    FROM analytics_lifecycle_order
    WHERE intent_type = $intent_type AND status = $stage AND kind = 'stage'
),

first_at_or_beyond AS (
    SELECT h.*
    FROM status_history AS h
    CROSS JOIN target AS t
    WHERE h.intent_type = $intent_type AND h.stage_rank >= t.target_rank
    QUALIFY row_number() OVER (
        PARTITION BY h.intent_id ORDER BY h.first_seen_at, h.stage_rank
    ) = 1
),

bounds AS (
    SELECT
        a.intent_id,
        a.intent_type,
        {cohort_expr} AS cohort,
        a.created_at,
        a.amount_cents,
        f.status AS reached_via,
        CASE WHEN f.status = $stage AND f.entry_source = 'updated_at' THEN f.entered_at END
            AS exact_at,
        f.entered_after AS reached_after,
        coalesce(f.entered_at, f.entered_before) AS reached_before
    FROM first_at_or_beyond AS f
    JOIN analytics_last_seen AS a USING (intent_id)
    WHERE ($start IS NULL OR a.created_date >= CAST($start AS DATE))
        AND ($end IS NULL OR a.created_date <= CAST($end AS DATE))
)

SELECT
    intent_id,
    intent_type,
    cohort,
    created_at,
    amount_cents,
    reached_via,
    exact_at IS NOT NULL AS exact,
    epoch(reached_after) - epoch(created_at) AS seconds_low,
    epoch(reached_before) - epoch(created_at) AS seconds_high,
    coalesce(
        epoch(exact_at),
        (epoch(reached_after) + epoch(reached_before)) / 2
    ) - epoch(created_at) AS seconds
FROM bounds
ORDER BY created_at, intent_id;
