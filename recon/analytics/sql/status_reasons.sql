-- Intents by their status as last seen and its statusReason; share within (type, status).
SELECT
    intent_type,
    status,
    coalesce(status_reason, '(none)') AS status_reason,
    count(*) AS intents,
    CAST(coalesce(sum(amount_cents), 0) AS BIGINT) AS amount_cents,
    count(*) / sum(count(*)) OVER (PARTITION BY intent_type, status) AS share
FROM analytics_last_seen
WHERE list_contains(CAST($statuses AS VARCHAR[]), status)
    AND ($intent_type IS NULL OR intent_type = $intent_type)
    AND ($start IS NULL OR created_date >= CAST($start AS DATE))
    AND ($end IS NULL OR created_date <= CAST($end AS DATE))
GROUP BY intent_type, status, coalesce(status_reason, '(none)')
ORDER BY intent_type, status, intents DESC, status_reason;
