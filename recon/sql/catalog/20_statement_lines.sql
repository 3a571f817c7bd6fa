-- One row per normalized statement line; a line imported again (or upserted, like a
-- devolução whose status changed) keeps its latest version.
CREATE OR REPLACE VIEW statement_lines AS
SELECT * FROM {statement_files}
QUALIFY row_number() OVER (PARTITION BY line_id ORDER BY imported_at DESC, source_file DESC) = 1;

CREATE OR REPLACE VIEW statement_quarantine AS
SELECT * FROM {quarantine_files};
