-- An onramp is paid by credits and refunded by debits; an offramp the other way round.
select l.line_id, i.intent_id, m.rule, m.intent_type, m.line_kind
from int_matches as m
join stg_statement_lines as l on l.line_key = m.line_key
join stg_intents as i on i.intent_key = m.intent_key
where not (
    (m.intent_type = 'onramp' and m.role <> 'refund' and m.line_kind = 'pix_in')
    or (m.intent_type = 'onramp' and m.role = 'refund' and m.line_kind = 'pix_refund_out')
    or (m.intent_type = 'offramp' and m.role <> 'refund' and m.line_kind = 'pix_out')
    or (m.intent_type = 'offramp' and m.role = 'refund' and m.line_kind = 'pix_refund_in')
)
