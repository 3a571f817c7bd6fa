-- One row per committed snapshot, from its _manifest.json: when it was taken (server time),
-- whether it is full or filtered, and whether its walk was proven consistent.
CREATE OR REPLACE VIEW snapshots AS
SELECT * FROM source_snapshot_manifests;

-- One row per intent × committed snapshot (full or filtered, consistent or not: every row is
-- an observation of the API at snapshot_at). Only committed folders are read: a snapshot is
-- published by an atomic rename, and temp folders (.tmp-*) never match.
CREATE OR REPLACE VIEW intent_snapshots AS
SELECT * FROM source_snapshot_files;
