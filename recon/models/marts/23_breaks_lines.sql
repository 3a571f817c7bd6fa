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
        -- one candidate that other lines fit too says so ("fits one intent")
        case
            when l.direction = 'credit' and a.candidates = 1 then 'ambiguous_credit_shared'
            when l.direction = 'credit' then 'ambiguous_credit'
            when a.candidates = 1 then 'ambiguous_debit_shared'
            else 'ambiguous_debit'
        end as reason_code,
        to_json({
            'line_ref': coalesce(l.end_to_end_id, l.line_id), 'amount_cents': l.amount_abs_cents,
            'booked_at': iso_utc(l.booked_at), 'counterparty': l.counterparty_name,
            'rule': a.rule, 'candidates': a.candidates,
            'intent_ids': string_split(a.intent_ids, ', ')
        }) as reason_params,
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
        -- a line that does not say PIX (a TED/DOC, a cashback, a yield, an entry of the bank
        -- itself) has its own advice: the PIX one would send a person after a payer who is
        -- not one
        case
            when l.direction = 'credit' and l.kind = 'other' then 'unmatched_credit_not_pix'
            when l.direction = 'credit' then 'unmatched_credit'
            when l.kind = 'other' then 'unmatched_debit_not_pix'
            else 'unmatched_debit'
        end as reason_code,
        to_json({
            'line_ref': coalesce(l.end_to_end_id, l.bank_reference, l.line_id),
            'amount_cents': l.amount_abs_cents, 'booked_at': iso_utc(l.booked_at),
            'counterparty': l.counterparty_name,
            'counterparty_document': l.counterparty_document,
            'description': nullif(trim(l.description), ''), 'refund_of_ref': l.refund_of
        }) as reason_params,
        l.booked_at as evidence_at
    from stg_statement_lines as l
    anti join claimed_lines as c on c.line_key = l.line_key
    where not l.bank_own
)

select * from ambiguous_match
union all by name select * from unmatched_lines
