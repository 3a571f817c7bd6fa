-- One row per intent, as of the latest committed snapshot that is full (no --intent-type /
-- --status filter) and consistent (its manifest says so). A filtered or inconsistent
-- snapshot never becomes "the latest": it would make unlisted intents look vanished.
CREATE OR REPLACE VIEW intents AS
SELECT * FROM source_latest_snapshot_files;
