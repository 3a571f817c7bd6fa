-- breaks_all: every break family's rows (breaks_onramp, breaks_offramp, breaks_refunds,
-- breaks_lines, breaks_balances, breaks_history: 2N_breaks_<family>.sql, one CTE per
-- category), each marked in_coverage.
--
-- Every family has the same columns: category, intent_key, line_key, intent_id, line_id,
-- end_to_end_id, expected_cents, actual_cents, reason_code, reason_params (what and why: the
-- sentence is rendered from them in the reader's language, recon.reconciliation.reasons),
-- evidence_at, `subject` (what a break on no intent and no line is about, for its break_id:
-- breaks_balances), and for a rule that
-- needs the statements to show that money did NOT move, money_side ('credit'|'debit', see
-- stg_coverage) and [window_from, window_to] (null elsewhere: `union all by name` fills them): the time in which that money would have
-- been booked. in_coverage is true when the evidence needs no statement period (a line, a
-- snapshot), or when the statements cover all of that time (both ends inclusive); the rest
-- are not breaks: the intent is awaiting_statement (recon_awaiting).
select
    b.*,
    b.money_side is null or covered(b.money_side, b.window_from, b.window_to) as in_coverage
from (
    select * from breaks_onramp
    union all by name select * from breaks_offramp
    union all by name select * from breaks_refunds
    union all by name select * from breaks_lines
    union all by name select * from breaks_balances
    union all by name select * from breaks_history
) as b
