-- recon_suggestions: for every break without its money (an intent whose credit, payout or
-- devolução no line matched) and every unexplained statement line (unmatched_credit,
-- unmatched_debit), the nearest candidates on the other side, best first (rank 1..3), each
-- with what differs from a pair the matching passes would have confirmed
-- (30_int_match_attributes.sql): the amount, the time window, the payer's or payee's name,
-- document and PIX key. Suggestions are read by people only: no match or break depends on
-- them.
--   candidates  an intent no payment line matched (nor a candidate of an ambiguous line),
--               or the devolução a refund_missing break owes, against a statement line that
--               nothing explains, in the same direction; of those, each line's and each
--               intent break's nearest in time (three before, three after) among the ones of
--               a like amount (the same or a neighbouring power of two), kept when the
--               larger amount is at most twice the smaller and the money moved at most two
--               days outside the intent's matching window. Sorting, not joining every line
--               to every intent: the cost grows with the rows, not with their product.
--   score       100 less a penalty per difference (amount beyond amount_tolerance_cents: 5
--               plus up to 25 by its share of the larger amount; outside the window: 5 plus
--               up to 15 by distance, 1 per 3 h; name not compatible: 15; document or PIX
--               key contradicts: 25 each), at least 0
--   rank        by score, then the smaller amount and time distance, then the other side's id
-- A pair of two such breaks (a missing credit and an unmatched credit) is suggested from
-- both: one row under each break_id.
with

p as (
    select * from params
),

-- the breaks on an intent that lack its money, and what money they lack
intent_breaks as (
    select break_id, intent_key, category, expected_cents
    from recon_exceptions
    where line_key is null
      and category in ('onramp_missing_credit', 'offramp_missing_payout',
                       'offramp_stuck_paying_out', 'refund_missing')
),

paid_intents as (
    select intent_key from int_matches where role = 'payment'
    union all
    select intent_key from int_ambiguous
),

-- what is owed and unpaid: an intent's payment (the attributes pass's window), or the
-- devolução of a refunded onramp (any time from creation to as_of)
owed as (
    select
        b.break_id,
        i.intent_key * 2 as owed_key,
        i.intent_id,
        i.intent_type,
        false as is_refund,
        case i.intent_type when 'onramp' then 'credit' else 'debit' end as direction,
        i.amount_cents,
        i.party_display_name,
        norm_name(i.party_display_name) as party_name_norm,
        name_words(i.party_display_name) as party_name_words,
        i.party_document_masked,
        norm_doc(i.party_document_masked) as party_document_norm,
        i.destination_address,
        i.destination_address_hash,
        i.created_at - p.clock_skew as window_start,
        payment_window_end(
            i.intent_type, i.status, i.expires_at, i.updated_at,
            p.onramp_payment_grace, p.offramp_payout_grace, p.as_of
        ) as window_end
    from stg_intents as i
    cross join p
    anti join paid_intents as m on m.intent_key = i.intent_key
    left join intent_breaks as b
      on b.intent_key = i.intent_key and b.category <> 'refund_missing'
    where i.amount_cents is not null and i.intent_type in ('onramp', 'offramp')
    union all
    select
        b.break_id,
        i.intent_key * 2 + 1 as owed_key,
        i.intent_id,
        i.intent_type,
        true as is_refund,
        'debit' as direction,
        b.expected_cents as amount_cents,
        i.party_display_name,
        norm_name(i.party_display_name) as party_name_norm,
        name_words(i.party_display_name) as party_name_words,
        i.party_document_masked,
        norm_doc(i.party_document_masked) as party_document_norm,
        null as destination_address,
        null as destination_address_hash,
        -- the devolução follows the refund
        i.updated_at - p.clock_skew as window_start,
        p.as_of as window_end
    from intent_breaks as b
    cross join p
    join stg_intents as i on i.intent_key = b.intent_key
    where b.category = 'refund_missing'
),

-- the unexplained lines
lines as (
    select
        b.break_id,
        l.line_key,
        l.line_id,
        l.kind,
        l.refund_of,
        l.direction,
        l.amount_abs_cents,
        l.moved_from,
        l.moved_until,
        l.counterparty_name,
        norm_name(l.counterparty_name) as counterparty_name_norm,
        name_words(l.counterparty_name) as counterparty_name_words,
        l.counterparty_document,
        norm_doc(l.counterparty_document) as counterparty_document_norm,
        l.counterparty_key,
        l.counterparty_key_hash
    from recon_exceptions as b
    join stg_statement_lines as l on l.line_key = b.line_key
    where b.category in ('unmatched_credit', 'unmatched_debit')
      and l.amount_abs_cents > 0
),

-- Both sides in bands of direction and powers of two of the amount (a line in its own band
-- and the two around it), each band in time order (lines by when the money moved, what is
-- owed by when its window opens). The band is the number of binary digits of the cents
-- (floor(log2(x)) + 1 in integers: a float's log puts an exact power of two in another band
-- on another engine).
events as (
    select
        direction,
        unnest([-1, 0, 1]) + length(bin(amount_abs_cents)) as band,
        moved_from as event_at,
        true as is_line,
        line_key as event_key,
        true as wanted
    from lines
    union all
    select
        direction,
        length(bin(amount_cents)) as band,
        window_start as event_at,
        false as is_line,
        owed_key as event_key,
        break_id is not null as wanted
    from owed
    where amount_cents > 0
),

-- how many of the other side came before each row in its band: the ordinal of its
-- neighbours in time
ordered as (
    select
        *,
        sum(case when is_line then 0 else 1 end) over (
            partition by direction, band order by event_at, is_line, event_key
            rows between unbounded preceding and current row) as owed_before,
        sum(case when is_line then 1 else 0 end) over (
            partition by direction, band order by event_at, is_line, event_key
            rows between unbounded preceding and current row) as lines_before
    from events
),

owed_at as (
    select direction, band, event_key as owed_key, owed_before as ordinal
    from ordered where not is_line
),

lines_at as (
    select direction, band, event_key as line_key, lines_before as ordinal
    from ordered where is_line
),

-- each line's three owed neighbours before and after it in time, in each of its bands; and
-- each intent break's three lines before and after it in its band
pairs as (
    select r.line_key, o.owed_key
    from (
        select direction, band, event_key as line_key,
               unnest([-2, -1, 0, 1, 2, 3]) + owed_before as ordinal
        from ordered where is_line
    ) as r
    join owed_at as o using (direction, band, ordinal)
    union
    select l.line_key, r.owed_key
    from (
        select direction, band, event_key as owed_key,
               unnest([-2, -1, 0, 1, 2, 3]) + lines_before as ordinal
        from ordered where not is_line and wanted
    ) as r
    join lines_at as l using (direction, band, ordinal)
),

-- the neighbours within the bounds: the larger amount at most twice the smaller, the money
-- moved at most two days outside the intent's window
close as (
    select
        lines.*,
        owed.break_id as intent_break_id,
        owed.intent_id,
        owed.intent_type,
        owed.is_refund,
        owed.amount_cents,
        owed.party_display_name,
        owed.party_name_norm,
        owed.party_name_words,
        owed.party_document_masked,
        owed.party_document_norm,
        owed.destination_address,
        owed.destination_address_hash,
        owed.window_start,
        owed.window_end
    from pairs
    join lines on lines.line_key = pairs.line_key
    join owed on owed.owed_key = pairs.owed_key
    where greatest(lines.amount_abs_cents, owed.amount_cents)
              <= least(lines.amount_abs_cents, owed.amount_cents) * 2
      and lines.moved_until >= owed.window_start - interval 2 day
      and lines.moved_from <= owed.window_end + interval 2 day
),

near as (
    select
        lines.break_id as line_break_id,
        lines.intent_break_id,
        lines.intent_id,
        lines.line_id,
        lines.direction,
        lines.is_refund,
        lines.amount_abs_cents as line_cents,
        lines.amount_cents as owed_cents,
        lines.amount_abs_cents - lines.amount_cents as delta_cents,
        abs(lines.amount_abs_cents - lines.amount_cents) > p.amount_tolerance_cents
            as amount_off,
        case
            when lines.moved_from > lines.window_end
                then (epoch_us(lines.moved_from) - epoch_us(lines.window_end)) // 60000000
            when lines.moved_until < lines.window_start
                then (epoch_us(lines.moved_until) - epoch_us(lines.window_start)) // 60000000
            else 0
        end as minutes_out,
        lines.counterparty_name,
        lines.party_display_name,
        not (lines.counterparty_name is not distinct from lines.party_display_name
             or reduced_names_compatible(lines.counterparty_name_norm, lines.party_name_norm,
                                         lines.counterparty_name_words,
                                         lines.party_name_words))
            as name_off,
        not (lines.counterparty_document is not distinct from lines.party_document_masked
             or docs_compatible(lines.counterparty_document_norm, lines.party_document_norm))
            as document_off,
        -- a payout's PIX key against the offramp's destination (a credit's key is ours)
        lines.intent_type = 'offramp' and not lines.is_refund
            and not ((lines.counterparty_key_hash is not null
                      and lines.destination_address_hash is not null
                      and lines.counterparty_key_hash = lines.destination_address_hash)
                     or ((lines.counterparty_key_hash is null
                          or lines.destination_address_hash is null)
                         and (lines.counterparty_key is not distinct from lines.destination_address
                              or keys_compatible(lines.counterparty_key,
                                                 lines.destination_address)))) as key_off,
        lines.is_refund and (lines.kind <> 'pix_refund_out' or lines.refund_of is null)
            as not_a_refund
    from close as lines
    cross join p
),

scored as (
    select
        *,
        greatest(0, 100
            - case when amount_off
                   then 5 + least(25, abs(delta_cents) * 50 // greatest(line_cents, owed_cents))
                   else 0 end
            - case when minutes_out <> 0 then 5 + least(15, abs(minutes_out) // 180) else 0 end
            - case when name_off then 15 else 0 end
            - case when document_off then 25 else 0 end
            - case when key_off then 25 else 0 end) as score,
        coalesce(nullif(concat_ws('; ',
            case when delta_cents <> 0 then 'amount ' || brl(abs(delta_cents))
                 || case when delta_cents < 0 then ' less' else ' more' end end,
            case when minutes_out <> 0 then 'booked '
                 || case when abs(minutes_out) < 120 then abs(minutes_out) || ' min'
                         else (abs(minutes_out) // 60) || ' h' end
                 || case when minutes_out > 0 then ' after the window closed'
                         else ' before the window opened' end end,
            case when name_off then
                 case direction when 'credit' then 'payer' else 'payee' end
                 || ' name ''' || lines_name || ''' vs ''' || intent_name || '''' end,
            case when document_off then 'document contradicts' end,
            case when key_off then 'PIX key contradicts' end,
            case when not_a_refund then 'not marked as a devolução' end
        ), ''), 'amount, time and party agree') as differences
    from (
        select
            *,
            coalesce(counterparty_name, '?') as lines_name,
            coalesce(party_display_name, '?') as intent_name
        from near
    ) as n
),

-- each pair under the line's break, and under the intent's break when it has one
per_break as (
    select line_break_id as break_id, intent_id, line_id, intent_id as other_id, score,
           delta_cents, minutes_out, differences
    from scored
    union all
    select intent_break_id as break_id, intent_id, line_id, line_id as other_id, score,
           delta_cents, minutes_out, differences
    from scored
    where intent_break_id is not null
),

ranked as (
    select
        break_id,
        intent_id,
        line_id,
        row_number() over (
            partition by break_id
            order by score desc, abs(delta_cents), abs(minutes_out), other_id
        ) as rank,
        score,
        differences
    from per_break
)

select
    break_id,
    intent_id,
    line_id,
    cast(rank as bigint) as rank,
    cast(score as bigint) as score,
    differences
from ranked
where rank <= 3
