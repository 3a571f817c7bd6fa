-- Where intents that ended in an exit (expired, canceled, failed, refunded) left the
-- lifecycle: the furthest stage they are known to have reached before the exit.
SELECT
    a.intent_type,
    a.status AS exit_status,
    lo.status AS last_stage,
    lo.stage_rank AS last_stage_rank,
    count(*) AS intents,
    CAST(coalesce(sum(a.amount_cents), 0) AS BIGINT) AS amount_cents,
    count(*) / sum(count(*)) OVER (PARTITION BY a.intent_type) AS share_of_exits
FROM analytics_intents AS a
JOIN analytics_lifecycle_order AS lo
    ON lo.intent_type = a.intent_type AND lo.kind = 'stage' AND lo.stage_rank = a.max_stage_rank
WHERE a.outcome NOT IN ('completed', 'open')
    AND ($intent_type IS NULL OR a.intent_type = $intent_type)
    AND ($start IS NULL OR a.created_date >= CAST($start AS DATE))
    AND ($end IS NULL OR a.created_date <= CAST($end AS DATE))
GROUP BY a.intent_type, a.status, lo.status, lo.stage_rank
ORDER BY a.intent_type, a.status, lo.stage_rank;
