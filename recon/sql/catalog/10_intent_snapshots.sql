-- One row per intent × committed snapshot. Only folders whose manifest was committed are
-- visible: snapshots are published by an atomic rename, temp folders never match the glob.
CREATE OR REPLACE VIEW intent_snapshots AS
SELECT * FROM {snapshot_files};
