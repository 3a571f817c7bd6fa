-- Amounts are positive magnitudes and delta = actual - expected wherever both are known.
select break_id, category, expected_cents, actual_cents, delta_cents
from recon_exceptions
where expected_cents < 0
   or actual_cents < 0
   or (expected_cents is not null and actual_cents is not null
       and delta_cents is distinct from actual_cents - expected_cents)
