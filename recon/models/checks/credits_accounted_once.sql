-- matched + unmatched credits = all credits: every credit line but the bank's own (bank_own) is either a match
-- or a line break (unmatched_credit, ambiguous_match, a duplicate), exactly once
-- (staging/_macros.sql: lines_not_accounted_once).
select * from lines_not_accounted_once('credit')
