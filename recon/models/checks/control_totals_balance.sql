-- Per business day and direction: statement total - intents total = sum explained by the
-- categories (and the non-break states). Any unexplained remainder fails the run.
select business_day, direction, statement_cents, intents_cents, explained_cents,
       unexplained_cents
from recon_control_totals
where unexplained_cents <> 0
