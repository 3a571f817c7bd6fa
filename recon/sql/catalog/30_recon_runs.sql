-- The latest committed run's matches and breaks.
CREATE OR REPLACE VIEW recon_matches AS
SELECT * FROM {run_matches};

CREATE OR REPLACE VIEW recon_exceptions AS
SELECT * FROM {run_exceptions};
