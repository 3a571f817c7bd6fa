-- materialized: view
-- breaks_lines: statement lines nobody explains (one row per line).
-- (the columns every family shares, and what money_side/window_* mean: 25_breaks_all.sql)
with

claimed_lines as (
    select line_key from int_matches
    union all
    select line_key from int_ambiguous
),

ambiguous_match as (
    select
        'ambiguous_match' as category,
        null::bigint as intent_key,
        l.line_key,
        null as intent_id,
        l.line_id,
        l.end_to_end_id,
        null as expected_cents,
        l.amount_abs_cents as actual_cents,
        (case l.direction when 'credit' then 'Credit ' else 'Debit ' end)
            || coalesce(l.end_to_end_id, l.line_id) || ' of ' || brl(l.amount_abs_cents)
            || ' booked ' || local_ts(l.booked_at)
            || coalesce(' (' || l.counterparty_name || ')', '')
            || ' fits ' || a.candidates || ' intents by ' || a.rule || ': '
            || a.intent_ids || '. Pick the right one (recon resolve) or ask the '
            || (case l.direction when 'credit' then 'payer.' else 'payee.' end) as reason,
        l.booked_at as evidence_at
    from (
        select
            a.line_key,
            any_value(a.rule) as rule,
            count(distinct i.intent_id) as candidates,
            string_agg(distinct i.intent_id, ', ' order by i.intent_id) as intent_ids
        from int_ambiguous as a
        join stg_intents as i on i.intent_key = a.intent_key
        group by a.line_key
    ) as a
    join (
        select * from stg_statement_lines
        semi join int_ambiguous as c on c.line_key = stg_statement_lines.line_key
    ) as l on l.line_key = a.line_key
),

unmatched_lines as (
    select
        case l.direction when 'credit' then 'unmatched_credit' else 'unmatched_debit' end
            as category,
        null::bigint as intent_key,
        l.line_key,
        null as intent_id,
        l.line_id,
        l.end_to_end_id,
        null as expected_cents,
        l.amount_abs_cents as actual_cents,
        (case l.direction when 'credit' then 'Credit ' else 'Debit ' end)
            || coalesce(l.end_to_end_id, l.bank_reference, l.line_id)
            || ' of ' || brl(l.amount_abs_cents) || ' booked ' || local_ts(l.booked_at)
            || coalesce(
                case l.direction when 'credit' then ' from ' else ' to ' end
                || l.counterparty_name
                || coalesce(' (' || l.counterparty_document || ')', ''),
                '')
            || coalesce(' "' || nullif(trim(l.description), '') || '"', '')
            || ' matches no intent by txid, reference or amount/party/time'
            || coalesce(' (devolução of ' || l.refund_of || ')', '') || '. '
            || case
                   -- a line that does not say PIX (a TED/DOC, a cashback, a yield, an entry of
                   -- the bank itself): the PIX advice would send a person after a payer who is not one
                   when l.kind = 'other' then
                       'It does not say PIX (a transfer, cashback, yield or an entry of the bank itself): '
                       || case l.direction
                              when 'credit' then 'if a payer sent it, identify them; else'
                              else 'if it paid a payee, find who authorised it; else'
                          end
                       || ' book it outside recon and record why (recon resolve).'
                   when l.direction = 'credit'
                       then 'Identify the payer or return the money (devolução).'
                   else 'Find who authorised this payment.'
               end as reason,
        l.booked_at as evidence_at
    from stg_statement_lines as l
    anti join claimed_lines as c on c.line_key = l.line_key
    where l.kind <> 'fee'
)

select * from ambiguous_match
union all by name select * from unmatched_lines
