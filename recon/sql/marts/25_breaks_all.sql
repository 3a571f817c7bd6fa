-- breaks_all: every break family's rows (breaks_onramp, breaks_offramp, breaks_refunds,
-- breaks_lines, breaks_history), each marked in_coverage: true when its evidence needs no
-- statement period (a line, a snapshot), or when the statements cover all of the time in
-- which the money it misses would have been booked (money_side, window_from..window_to,
-- both ends inclusive; stg_coverage). The rest are not breaks: recon_awaiting lists them.
-- The families are views, built once here (their rows, reasons included, are not copied
-- into a table of their own first).
select
    b.*,
    b.money_side is null or covered(b.money_side, b.window_from, b.window_to) as in_coverage
from (
    select * from breaks_onramp
    union all by name select * from breaks_offramp
    union all by name select * from breaks_refunds
    union all by name select * from breaks_lines
    union all by name select * from breaks_history
) as b
