-- matched + unmatched debits = all debits (the bank's own apart: bank_own): every payout or devolução line is
-- either a match or a line break (unmatched_debit, ambiguous_match, a duplicate), exactly
-- once (staging/_macros.sql: lines_not_accounted_once).
select * from lines_not_accounted_once('debit')
