-- Outcome counts of one intent type per group ({key_expr}: cohort, amount bucket, hour of
-- day or weekday, all in the business time zone). `still_open` are intents not terminal when
-- last seen: right-censored, they may still expire.
SELECT
    {key_expr} AS group_key,
    count(*) AS intents,
    count(*) FILTER (WHERE outcome = 'expired') AS expired,
    count(*) FILTER (WHERE outcome = 'completed') AS completed,
    count(*) FILTER (WHERE outcome NOT IN ('expired', 'completed', 'open')) AS other_exit,
    count(*) FILTER (WHERE outcome = 'open') AS still_open
FROM analytics_last_seen
WHERE intent_type = $intent_type
    AND ($start IS NULL OR created_date >= CAST($start AS DATE))
    AND ($end IS NULL OR created_date <= CAST($end AS DATE))
GROUP BY group_key
ORDER BY group_key;
