-- Counts and amounts (cents) per cohort and intent type, split by outcome.
SELECT
    {cohort_expr} AS cohort,
    intent_type,
    count(*) AS intents,
    CAST(coalesce(sum(amount_cents), 0) AS BIGINT) AS amount_cents,
    count(*) FILTER (WHERE outcome = 'completed') AS completed,
    CAST(coalesce(sum(amount_cents) FILTER (WHERE outcome = 'completed'), 0) AS BIGINT) AS completed_cents,
    count(*) FILTER (WHERE outcome = 'expired') AS expired,
    CAST(coalesce(sum(amount_cents) FILTER (WHERE outcome = 'expired'), 0) AS BIGINT) AS expired_cents,
    count(*) FILTER (WHERE outcome NOT IN ('completed', 'expired', 'open')) AS other_exit,
    CAST(coalesce(
        sum(amount_cents) FILTER (WHERE outcome NOT IN ('completed', 'expired', 'open')), 0
    ) AS BIGINT) AS other_exit_cents,
    count(*) FILTER (WHERE outcome = 'open') AS still_open,
    CAST(coalesce(sum(amount_cents) FILTER (WHERE outcome = 'open'), 0) AS BIGINT) AS open_cents
FROM analytics_last_seen
WHERE ($intent_type IS NULL OR intent_type = $intent_type)
    AND ($start IS NULL OR created_date >= CAST($start AS DATE))
    AND ($end IS NULL OR created_date <= CAST($end AS DATE))
GROUP BY cohort, intent_type
ORDER BY cohort, intent_type;
