-- An onramp is paid by credits and refunded by debits; an offramp the other way round.
select intent_id, line_id, rule, intent_type, line_kind
from recon_matches
where not (
    (intent_type = 'onramp' and rule <> 'refund' and line_kind = 'pix_in')
    or (intent_type = 'onramp' and rule = 'refund' and line_kind = 'pix_refund_out')
    or (intent_type = 'offramp' and rule <> 'refund' and line_kind = 'pix_out')
    or (intent_type = 'offramp' and rule = 'refund' and line_kind = 'pix_refund_in')
)
