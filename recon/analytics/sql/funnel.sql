-- Funnel of one intent type: per cohort (creation day/week in the business time zone) and
-- stage, how many intents reached the stage. A later stage counts as passing the earlier
-- ones (max_stage_rank), because snapshots miss the stages an intent moves through quickly.
WITH cohort_intents AS (
    SELECT {cohort_expr} AS cohort, max_stage_rank
    FROM analytics_intents
    WHERE intent_type = $intent_type
        AND ($start IS NULL OR created_date >= CAST($start AS DATE))
        AND ($end IS NULL OR created_date <= CAST($end AS DATE))
),

stages AS (
    SELECT status AS stage, stage_rank
    FROM analytics_lifecycle_order
    WHERE intent_type = $intent_type
        AND kind = 'stage'
        AND list_contains(CAST($stages AS VARCHAR[]), status)
),

counts AS (
    SELECT
        c.cohort,
        s.stage,
        s.stage_rank,
        count(*) AS cohort_size,
        count(*) FILTER (WHERE c.max_stage_rank >= s.stage_rank) AS reached
    FROM cohort_intents AS c
    CROSS JOIN stages AS s
    GROUP BY c.cohort, s.stage, s.stage_rank
)

SELECT
    cohort,
    stage,
    stage_rank,
    CAST(row_number() OVER by_cohort AS INTEGER) AS step,
    cohort_size,
    reached,
    reached / cohort_size AS share,
    -- a step's base is the previous stage's reach (the cohort for the first stage)
    coalesce(lag(reached) OVER by_cohort, cohort_size) - reached AS dropped,
    reached / nullif(coalesce(lag(reached) OVER by_cohort, cohort_size), 0) AS step_conversion
FROM counts
WINDOW by_cohort AS (PARTITION BY cohort ORDER BY stage_rank)
ORDER BY cohort, stage_rank;
