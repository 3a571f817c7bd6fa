-- The latest committed run's matches and breaks.
CREATE OR REPLACE VIEW recon_matches AS
SELECT * FROM source_run_matches;

CREATE OR REPLACE VIEW recon_exceptions AS
SELECT * FROM source_run_exceptions;

-- The intents of the latest run waiting for statements that cover their money (not breaks).
CREATE OR REPLACE VIEW recon_awaiting AS
SELECT * FROM source_run_awaiting;

-- The latest run's suggested pairs for its open breaks without their money and its
-- unexplained lines (recon/models/marts/28_recon_suggestions.sql).
CREATE OR REPLACE VIEW recon_suggestions AS
SELECT * FROM source_run_suggestions;
