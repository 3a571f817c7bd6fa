-- Every break uses a category of the break vocabulary (docs/contracts.md) and carries its priority.
select break_id, category, priority
from recon_exceptions
where category not in (select name from categories)
   or priority is null
   or priority not in ('P1', 'P2', 'P3')
