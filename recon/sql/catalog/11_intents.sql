-- One row per intent, as of the latest committed full snapshot (run ids sort by time).
CREATE OR REPLACE VIEW intents AS
WITH latest AS (
    SELECT max(run_id) AS run_id FROM intent_snapshots
)
SELECT s.*
FROM intent_snapshots AS s
JOIN latest USING (run_id);
