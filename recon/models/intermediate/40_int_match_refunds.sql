-- Pass 4, refunds: a devolução line joins the original payment through refund_of (the
-- original end-to-end id); it belongs to the intent that original payment matched
-- (a devolução we sent returns a credit, one we received returns a payout). A devolução a
-- person paired by hand (int_match_manual, is_refund) is theirs, not this pass's.
with

payment_matches as (
    select line_key, intent_key from int_match_manual where not is_refund
    union all
    select line_key, intent_key from int_match_txid
    union all
    select line_key, intent_key from int_match_reference where outcome = 'matched'
    union all
    select line_key, intent_key from int_match_attributes where outcome = 'matched'
    union all
    select line_key, intent_key from int_match_elimination
),

refund_lines as (
    select
        line_key,
        refund_of,
        case kind when 'pix_refund_out' then 'pix_in' else 'pix_out' end as original_kind
    from stg_statement_lines
    anti join int_match_manual as manual on manual.line_key = stg_statement_lines.line_key
    where kind in ('pix_refund_out', 'pix_refund_in')
      and refund_of is not null
),

originals as (
    select line_key as original_line_key, end_to_end_id, kind
    from stg_statement_lines
    where kind in ('pix_in', 'pix_out')
      and end_to_end_id is not null
)

select
    refund_lines.line_key,
    payment_matches.intent_key,
    'refund' as rule,
    'matched' as outcome,
    originals.original_line_key
from refund_lines
join originals
  on originals.end_to_end_id = refund_lines.refund_of
 and originals.kind = refund_lines.original_kind
join payment_matches
  on payment_matches.line_key = originals.original_line_key
