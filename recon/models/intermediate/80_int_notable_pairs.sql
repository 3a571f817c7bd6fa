-- The confirmed pairs a break rule can fire on, with the ids a reason names: a duplicate or a
-- refund, an amount off by more than the tolerance, a fee off its account's schedule
-- (fee_off: a shortfall that is the PSP's, not the payer's, is no amount_off), or an intent
-- not (yet) completed. A
-- clean match (a completed intent paid its amount once) is none of these, so the ids of the
-- bulk of the pairs are never fetched. Read by the break families (marts/2N_breaks_*).
-- actual_cents is what the pair carried (int_matches.paid_cents): for an intent paid in parts
-- (lines paired by hand), the sum of the parts, on its payment row; the parts themselves are
-- no break.
select
    x.* exclude (actual_cents),
    x.paid_cents as actual_cents,
    abs(x.delta_cents) > p.amount_tolerance_cents
        and not (x.fee_off and x.fee_cents is null) as amount_off,
    i.intent_id,
    l.line_id,
    l.end_to_end_id,
    l.account,
    -- how reasons name the line: its end-to-end id, or the bank's id when it has none (and,
    -- for a payment in parts, "(+N)": how many more lines it has, in no language's words)
    coalesce(l.end_to_end_id, l.line_id)
        || case when x.role = 'payment' and x.parts > 1
                then ' (+' || (x.parts - 1) || ')'
                else '' end as line_ref
from int_matches as x
cross join params as p
join stg_intents as i on i.intent_key = x.intent_key
join stg_statement_lines as l on l.line_key = x.line_key
where x.role <> 'part'
  and (x.role <> 'payment'
       or abs(x.delta_cents) > p.amount_tolerance_cents
       or x.fee_off
       or x.intent_status <> 'completed')
