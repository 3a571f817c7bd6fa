-- recon_control_items: every amount that makes the statement differ from the book
-- (int_intent_book), each labelled with what explains it.
--   * each statement line but the bank's own (bank_own: fees, interest, yields), on its business day and direction: its amount, less the
--     book amount it settles when it is the (first) payment or refund of a booked intent;
--   * each book entry that no line settles: minus its amount, on its business day.
-- A line that settles its book entry to the cent makes no difference (0 cents) and is not
-- an item: on a normal day that is almost every line, so only the rest are labelled.
-- label = the break category on that line (or, for an unsettled book entry, on that intent);
-- otherwise one of the states that are not breaks:
--   psp_fee           a credit that settles its book entry net of its PSP's fee (stated
--                     by the statement, or the account's fee schedule's: int_matches),
--   within_tolerance  settles its book entry within amount_tolerance_cents,
--   in_flight         money ahead of the status, or a status ahead of the money, still
--                     inside its grace period (or an offramp not yet completed),
--   returned          money that came in (went out) and was sent back, on an intent whose
--                     status books neither (a credit returned after an onramp's tokens
--                     were delivered is the break onramp_credit_returned instead),
--   split_refund      one of several devoluções of a credit that together settle it,
--   awaiting_statement  the intent waits for statements covering the rest of its money
--                     (recon_awaiting).
-- An amount with no label is unexplained and fails checks/control_totals_balance.
-- Items name their line and intent by this run's keys (stg_statement_lines.line_key,
-- stg_intents.intent_key): join those for the ids.
with

p as (
    select * from params
),

-- the lines that settle their book entry exactly (an intent paid in parts: all its parts,
-- whose sum the book entry's matched_cents is)
settled_entries as (
    select matched_line_key as line_key, intent_key, role
    from int_intent_book
    where matched_line_key is not null
      and matched_cents = book_cents
),

settled as (
    select line_key from settled_entries
    union all
    select m.line_key
    from int_matches as m
    semi join settled_entries as s on s.intent_key = m.intent_key and s.role = 'payment'
    where m.role = 'part'
),

lines as (
    select l.*
    from stg_statement_lines as l
    anti join settled as s on s.line_key = l.line_key
    where not l.bank_own
),

-- a third-party payer is a flag on a line that settles its intent: it explains no money
line_breaks as (
    select line_key, min(category) as category
    from recon_exceptions
    where line_key is not null and category <> 'onramp_third_party_payer'
    group by line_key
),

intent_breaks as (
    select intent_key, category
    from recon_exceptions
    where line_key is null
      and category in ('onramp_missing_credit', 'offramp_missing_payout', 'refund_missing')
),

ambiguous_intents as (
    select distinct intent_key from int_ambiguous
),

refunded_intents as (
    select distinct intent_key from int_matches where role = 'refund'
),

awaiting_intents as (
    select distinct intent_key from recon_awaiting
),

-- the credits whose devoluções do not add up (one break per credit, on its latest
-- devolução: every devolução of the credit carries that label), came back after the tokens
-- were delivered (onramp_credit_returned, on the credit: its devoluções carry the label), or
-- are still under way
refund_states as (
    select
        intent_key,
        original_line_key,
        case
            when delivered then 'onramp_credit_returned'
            when mismatched and not under_way and intent_type = 'onramp'
                then 'refund_amount_mismatch'
            when under_way then 'in_flight'
        end as label
    from int_refund_groups
),

line_items as materialized (
    select
        m.role,
        m.intent_key as matched_intent_key,
        business_day(l.booked_at) as business_day,
        l.direction,
        l.line_key,
        coalesce(m.intent_key, book.intent_key) as intent_key,
        l.amount_abs_cents - coalesce(book.book_cents, 0) as cents,
        case
            when lb.category is not null then lb.category
            when rs.label is not null then rs.label
            when m.intent_key in (select intent_key from awaiting_intents)
                then 'awaiting_statement'
            when book.intent_key is not null and m.fee_cents is not null
                 and abs(m.paid_cents - book.book_cents) <= p.amount_tolerance_cents
                then 'psp_fee'
            when book.intent_key is not null
                 and abs(book.matched_cents - book.book_cents) <= p.amount_tolerance_cents
                then 'within_tolerance'
            -- a credit on an onramp not yet marked paid, still inside the grace period
            when m.role = 'payment' and m.intent_type = 'onramp'
                 and m.intent_status in (select status from status_vocabulary
                                         where intent_type = 'onramp' and kind = 'stage'
                                           and not fiat_moved)
                 and l.booked_at >= p.as_of - p.onramp_payment_grace
                then 'in_flight'
            -- a credit on a failed onramp whose devolução is still inside refund_grace
            when m.role = 'payment' and m.intent_type = 'onramp' and m.intent_status = 'failed'
                 and m.intent_updated_at >= p.as_of - p.refund_grace
                then 'in_flight'
            -- a payout on an offramp that has not reached completed yet
            when m.role = 'payment' and m.intent_type = 'offramp'
                 and m.intent_status not in (select status from status_vocabulary
                                             where terminal)
                then 'in_flight'
            -- a payment sent back on an intent that books neither leg
            when m.role = 'payment'
                 and m.intent_status in (select status from status_vocabulary
                                         where kind = 'exit')
                 and m.intent_key in (select intent_key from refunded_intents)
                then 'returned'
            when m.role = 'refund' and book.intent_key is null
                 and not (m.intent_type = 'onramp' and m.intent_status = 'refunded')
                then 'returned'
            when m.role = 'refund'
                then 'split_refund'
        end as label
    from lines as l
    cross join p
    left join int_matches as m on m.line_key = l.line_key
    left join int_intent_book as book on book.matched_line_key = l.line_key
    left join line_breaks as lb on lb.line_key = l.line_key
    left join refund_states as rs
      on m.role = 'refund'
     and rs.intent_key = m.intent_key
     and rs.original_line_key is not distinct from m.original_line_key
),

-- the parts of a payment that does not settle its book entry carry the label of the
-- payment line (whose item already subtracts the whole book amount)
part_items as (
    select
        i.business_day, i.direction, i.line_key, i.intent_key, i.cents,
        coalesce(pay.label, i.label) as label
    from line_items as i
    left join line_items as pay
      on pay.matched_intent_key = i.matched_intent_key and pay.role = 'payment'
    where i.role = 'part'
),

book_items as (
    select
        b.business_day,
        b.direction,
        null::bigint as line_key,
        b.intent_key,
        -b.book_cents as cents,
        case
            when ib.category is not null then ib.category
            when b.intent_key in (select intent_key from awaiting_intents) then 'awaiting_statement'
            when b.intent_key in (select intent_key from ambiguous_intents) then 'ambiguous_match'
            when b.role = 'refund' and i.updated_at >= p.as_of - p.refund_grace then 'in_flight'
        end as label
    from int_intent_book as b
    cross join p
    join stg_intents as i on i.intent_key = b.intent_key
    left join intent_breaks as ib
      on ib.intent_key = b.intent_key
     and ib.category = case
             when b.role = 'refund' then 'refund_missing'
             when b.direction = 'credit' then 'onramp_missing_credit'
             else 'offramp_missing_payout'
         end
    where b.matched_line_key is null
)

select business_day, direction, line_key, intent_key, cents, label
from line_items
where role is null or role <> 'part'
union all by name
select * from part_items
union all by name
select * from book_items
