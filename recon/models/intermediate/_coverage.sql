-- Helpers over the staged coverage (run before the intermediate models, once stg_coverage
-- exists: a macro binds the tables it reads when it is created).

-- Whether the statements cover every moment from a to b on a side ('credit' | 'debit'; see
-- stg_coverage): a money-side break needs the whole time its money could have moved in.
CREATE OR REPLACE TEMP MACRO covered(side_, a, b) AS
    EXISTS (
        SELECT 1 FROM stg_coverage AS c
        WHERE c.side = side_ AND c.covered_from <= a AND b <= c.covered_to
    );
