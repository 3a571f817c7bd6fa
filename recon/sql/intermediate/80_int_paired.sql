-- Every confirmed pair with the intent and line detail the break rules and their reasons
-- need. A table of its own (not a CTE of recon_exceptions) so that, at ten million rows,
-- DuckDB can spill it to disk like any other model.
select
    ---------- the pair (int_matches: ids, rule, role, amounts, booked_at)
    m.*,

    ---------- the intent
    i.status,
    i.created_at,
    i.expires_at,
    i.updated_at,
    i.party_display_name,

    ---------- the line
    l.counterparty_name,

    ---------- amounts (cents)
    m.actual_cents - m.expected_cents as delta_cents
from int_matches as m
join stg_intents as i using (intent_id)
join stg_statement_lines as l using (line_id)
