-- break_id identifies one break: (category, intent, line) never collide within a run.
select break_id, count(*) as times
from recon_exceptions
group by break_id
having count(*) > 1
