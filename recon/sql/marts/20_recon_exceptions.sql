-- recon_exceptions: one row per break, in the DESIGN.md vocabulary (table `categories`,
-- loaded from recon.schemas.CATEGORIES). Amounts are positive magnitudes in cents;
-- delta = actual - expected. `reason` names the evidence and what to do. `evidence_at` is
-- when the evidence arose (line booked, intent last updated, snapshot seen); age_days
-- counts whole days from it to as_of. break_id hashes (category, intent, line e2e or id),
-- so the same break keeps its id across runs. intent_key/line_key (this run's keys, null
-- for a break on no intent/line of it) let the control items find a line's break cheaply;
-- the run file leaves them out, in the order of recon/reconcile/runs.py.
with

p as (
    select * from params
),

-- (read four times: a filter on int_matches each time, not a copy of its rows)
payments as not materialized (
    select * from int_matches where role = 'payment'
),

refunds as (
    select * from int_matches where role = 'refund'
),

ambiguous_intents as (
    select distinct intent_key from int_ambiguous
),

-- (union all: the anti join below needs no distinct set)
claimed_lines as (
    select line_key from int_matches
    union all
    select line_key from int_ambiguous
),

-- the intents neither paid nor a candidate of an ambiguous line, found once for the three
-- "no money moved" categories below (by key first: the anti joins carry no text)
unpaid_keys as (
    select i.intent_key
    from stg_intents as i
    anti join payments as m on m.intent_key = i.intent_key
    anti join ambiguous_intents as a on a.intent_key = i.intent_key
    where (i.intent_type = 'onramp'
           and i.status in ('fiat_received', 'minting', 'awaiting_onchain_transfer',
                            'completed'))
       or (i.intent_type = 'offramp' and i.status in ('completed', 'paying_out'))
),

unpaid_intents as materialized (
    select i.*
    from stg_intents as i
    semi join unpaid_keys as u on u.intent_key = i.intent_key
),

-- the confirmed pairs a rule below can fire on, with the ids a reason names: a duplicate or
-- a refund, an amount off by more than the tolerance, or an intent not (yet) completed.
-- A clean match (a completed intent paid its amount once) is none of these, so the ids of
-- the bulk of the pairs are never fetched.
paired as materialized (
    select
        x.*,
        i.intent_id,
        l.line_id,
        l.end_to_end_id
    from int_matches as x
    cross join p
    join stg_intents as i on i.intent_key = x.intent_key
    join stg_statement_lines as l on l.line_key = x.line_key
    where x.role <> 'payment'
       or abs(x.delta_cents) > p.amount_tolerance_cents
       or x.intent_status <> 'completed'
),

-- the payment line of each intent paid more than once, named in the duplicates' reasons
first_payments as (
    select x.intent_key, l.line_id, l.end_to_end_id, l.booked_at
    from payments as x
    semi join paired as d on d.intent_key = x.intent_key and d.role = 'duplicate'
    join stg_statement_lines as l on l.line_key = x.line_key
),

---------- onramps

onramp_missing_credit as (
    select
        'onramp_missing_credit' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        i.amount_cents as expected_cents,
        0 as actual_cents,
        'Onramp ' || i.intent_id || ' is ' || i.status || ' for ' || brl(i.amount_cents)
            || ' (payer ' || coalesce(i.party_display_name, 'unknown')
            || ', created ' || local_ts(i.created_at)
            || ') but no PIX credit matched it by txid, reference or amount/payer/time. '
            || 'Find the credit in the bank statement; if none arrived, stop the mint and '
            || 'contact the payer.' as reason,
        i.updated_at as evidence_at
    from unpaid_intents as i
    where i.intent_type = 'onramp'
      and i.status in ('fiat_received', 'minting', 'awaiting_onchain_transfer', 'completed')
),

onramp_amount as (
    select
        case when x.delta_cents < 0 then 'onramp_underpaid' else 'onramp_overpaid' end
            as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Credit ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' booked ' || local_ts(x.booked_at)
            || ' (matched by ' || x.rule || ') pays onramp ' || x.intent_id
            || ' which expects ' || brl(x.expected_cents) || ': '
            || brl(abs(x.delta_cents))
            || case when x.delta_cents < 0 then ' short. Ask the payer for the difference or '
                    || 'refund the credit and cancel the intent.'
                    else ' too much. Return the excess to the payer (devolução) before '
                    || 'minting more than was ordered.' end as reason,
        x.booked_at as evidence_at
    from paired as x, p
    where x.role = 'payment'
      and x.intent_type = 'onramp'
      and abs(x.delta_cents) > p.amount_tolerance_cents
),

onramp_duplicate_credit as (
    select
        'onramp_duplicate_credit' as category,
        d.intent_key,
        d.line_key,
        d.intent_id,
        d.line_id,
        d.end_to_end_id,
        d.expected_cents,
        d.actual_cents,
        'Credit ' || coalesce(d.end_to_end_id, d.line_id) || ' of ' || brl(d.actual_cents)
            || ' booked ' || local_ts(d.booked_at) || ' (matched by ' || d.rule
            || ') is a second payment of onramp ' || d.intent_id || ', already paid by '
            || coalesce(first.end_to_end_id, first.line_id) || ' on '
            || local_ts(first.booked_at)
            || '. Return the extra credit to the payer (devolução).' as reason,
        d.booked_at as evidence_at
    from paired as d
    join first_payments as first on first.intent_key = d.intent_key
    where d.role = 'duplicate'
      and d.intent_type = 'onramp'
),

onramp_credit_after_expiry as (
    select
        'onramp_credit_after_expiry' as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Credit ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' booked ' || local_ts(x.booked_at) || ' (matched by ' || x.rule
            || ') paid onramp ' || x.intent_id || ' which is ' || x.intent_status
            || coalesce(' (expired ' || local_ts(x.intent_expires_at) || ')', '')
            || ' and was not refunded. Return the money to the payer (devolução) or '
            || 'reissue the order.' as reason,
        x.booked_at as evidence_at
    from paired as x, p
    where x.role = 'payment'
      and x.intent_type = 'onramp'
      and (
          x.intent_status in ('expired', 'canceled')
          -- a failed onramp keeps the money only until its devolução, within refund_grace
          or (x.intent_status = 'failed' and x.intent_updated_at < p.as_of - p.refund_grace)
      )
      and not exists (select 1 from refunds as r where r.intent_key = x.intent_key)
),

onramp_status_lag as (
    select
        'onramp_status_lag' as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Credit ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' booked ' || local_ts(x.booked_at) || ' (matched by ' || x.rule
            || ') paid onramp ' || x.intent_id || ', but at ' || local_ts(p.as_of)
            || ' the intent is still ' || x.intent_status || ', more than '
            || (p.onramp_payment_grace_s // 60) || ' min later. Check that the service '
            || 'received the payment notice; the payer has paid.' as reason,
        x.booked_at as evidence_at
    from paired as x, p
    where x.role = 'payment'
      and x.intent_type = 'onramp'
      and x.intent_status in ('created', 'requires_compliance', 'awaiting_fiat_payment')
      and abs(x.delta_cents) <= p.amount_tolerance_cents
      and x.booked_at < p.as_of - p.onramp_payment_grace
),

---------- offramps

offramp_missing_payout as (
    select
        'offramp_missing_payout' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        i.amount_cents as expected_cents,
        0 as actual_cents,
        'Offramp ' || i.intent_id || ' is completed (updated ' || local_ts(i.updated_at)
            || ') for ' || brl(i.amount_cents) || ' to '
            || coalesce(i.party_display_name, 'unknown payee')
            || coalesce(' (key ' || i.destination_address || ')', '')
            || ' but no PIX debit matched it. Check the payout with the bank before '
            || 'telling the customer it was paid.' as reason,
        i.updated_at as evidence_at
    from unpaid_intents as i
    where i.intent_type = 'offramp'
      and i.status = 'completed'
),

offramp_payout_amount_mismatch as (
    select
        'offramp_payout_amount_mismatch' as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Payout ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' sent ' || local_ts(x.booked_at) || ' (matched by ' || x.rule
            || ') for offramp ' || x.intent_id || ' which expects '
            || brl(x.expected_cents) || ': ' || brl(abs(x.delta_cents))
            || case when x.delta_cents < 0 then ' short. Pay the payee the difference.'
                    else ' too much. Recover the excess from the payee.' end as reason,
        x.booked_at as evidence_at
    from paired as x, p
    where x.role = 'payment'
      and x.intent_type = 'offramp'
      and abs(x.delta_cents) > p.amount_tolerance_cents
),

offramp_duplicate_payout as (
    select
        'offramp_duplicate_payout' as category,
        d.intent_key,
        d.line_key,
        d.intent_id,
        d.line_id,
        d.end_to_end_id,
        d.expected_cents,
        d.actual_cents,
        'Payout ' || coalesce(d.end_to_end_id, d.line_id) || ' of ' || brl(d.actual_cents)
            || ' sent ' || local_ts(d.booked_at) || ' (matched by ' || d.rule
            || ') pays offramp ' || d.intent_id || ' a second time (first payout '
            || coalesce(first.end_to_end_id, first.line_id) || ' on '
            || local_ts(first.booked_at) || '). Recover the duplicate from the payee.'
            as reason,
        d.booked_at as evidence_at
    from paired as d
    join first_payments as first on first.intent_key = d.intent_key
    where d.role = 'duplicate'
      and d.intent_type = 'offramp'
),

offramp_payout_for_failed_intent as (
    select
        'offramp_payout_for_failed_intent' as category,
        x.intent_key,
        x.line_key,
        x.intent_id,
        x.line_id,
        x.end_to_end_id,
        x.expected_cents,
        x.actual_cents,
        'Payout ' || coalesce(x.end_to_end_id, x.line_id) || ' of ' || brl(x.actual_cents)
            || ' sent ' || local_ts(x.booked_at) || ' (matched by ' || x.rule
            || ') paid offramp ' || x.intent_id || ' which is ' || x.intent_status
            || ' (updated ' || local_ts(x.intent_updated_at) || '); the tokens were not taken. '
            || 'Recover the payout or complete the burn.' as reason,
        x.booked_at as evidence_at
    from paired as x
    where x.role = 'payment'
      and x.intent_type = 'offramp'
      and x.intent_status in ('failed', 'canceled', 'expired', 'refunded')
      and not exists (select 1 from refunds as r where r.intent_key = x.intent_key)
),

offramp_stuck_paying_out as (
    select
        'offramp_stuck_paying_out' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        i.amount_cents as expected_cents,
        0 as actual_cents,
        'Offramp ' || i.intent_id || ' has been paying_out since ' || local_ts(i.updated_at)
            || ' (more than ' || (p.offramp_payout_grace_s // 60) || ' min before '
            || local_ts(p.as_of) || ') and no payout of ' || brl(i.amount_cents)
            || ' to ' || coalesce(i.party_display_name, 'unknown payee')
            || ' is in the statement. Ask the payment provider about the transfer.' as reason,
        i.updated_at as evidence_at
    from unpaid_intents as i, p
    where i.intent_type = 'offramp'
      and i.status = 'paying_out'
      and i.updated_at < p.as_of - p.offramp_payout_grace
),

-- a devolução of one of our payouts (pix_refund_in: the payee's bank sent it back) on an
-- offramp still completed: the customer's tokens were burned and they were not paid
offramp_payout_returned as (
    select
        'offramp_payout_returned' as category,
        r.intent_key,
        r.line_key,
        r.intent_id,
        r.line_id,
        r.end_to_end_id,
        r.expected_cents,
        r.actual_cents,
        'Payout of ' || brl(r.expected_cents) || ' for offramp ' || r.intent_id
            || ' came back: devolução ' || coalesce(r.end_to_end_id, r.line_id) || ' of '
            || brl(r.actual_cents) || ' booked ' || local_ts(r.booked_at)
            || ', yet the offramp is still completed. Pay the customer again to a valid key, '
            || 'or return their tokens and mark the intent refunded.' as reason,
        r.booked_at as evidence_at
    from paired as r
    where r.role = 'refund'
      and r.line_kind = 'pix_refund_in'
      and r.intent_type = 'offramp'
      and r.intent_status = 'completed'
),

---------- refunds

refund_missing as (
    select
        'refund_missing' as category,
        i.intent_key,
        null::bigint as line_key,
        i.intent_id,
        null as line_id,
        null as end_to_end_id,
        coalesce(received.actual_cents, i.amount_cents) as expected_cents,
        0 as actual_cents,
        'Onramp ' || i.intent_id || ' is refunded (since ' || local_ts(i.updated_at)
            || ', more than ' || (p.refund_grace_s // 3600) || ' h before '
            || local_ts(p.as_of) || ') but no devolução of '
            || brl(coalesce(received.actual_cents, i.amount_cents))
            || coalesce(' for credit ' || received_line.end_to_end_id, '')
            || ' is in the statement. Send the devolução or correct the status.' as reason,
        i.updated_at as evidence_at
    from (
        -- refunded long enough ago, and no devolução matched
        select i.*
        from stg_intents as i
        cross join p
        anti join refunds as r on r.intent_key = i.intent_key
        where i.intent_type = 'onramp'
          and i.status = 'refunded'
          and i.updated_at < p.as_of - p.refund_grace
    ) as i
    cross join p
    -- the credit it received, if one matched (its amount is what should go back)
    left join payments as received on received.intent_key = i.intent_key
    left join stg_statement_lines as received_line on received_line.line_key = received.line_key
),

refund_amount_mismatch as (
    select
        'refund_amount_mismatch' as category,
        r.intent_key,
        r.line_key,
        r.intent_id,
        r.line_id,
        r.end_to_end_id,
        r.expected_cents,
        r.actual_cents,
        'Devolução ' || coalesce(r.end_to_end_id, r.line_id) || ' of ' || brl(r.actual_cents)
            || ' booked ' || local_ts(r.booked_at) || ' returns ' || brl(r.expected_cents)
            || ' received for intent ' || r.intent_id || ': ' || brl(abs(r.delta_cents))
            || case when r.delta_cents < 0 then ' still owed to the payer.'
                    else ' returned in excess; recover it.' end as reason,
        r.booked_at as evidence_at
    from paired as r, p
    where r.role = 'refund'
      and r.intent_type = 'onramp'
      and abs(r.delta_cents) > p.amount_tolerance_cents
),

---------- lines nobody explains

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
            || case l.direction
                   when 'credit' then 'Identify the payer or return the money (devolução).'
                   else 'Find who authorised this payment.'
               end as reason,
        l.booked_at as evidence_at
    from stg_statement_lines as l
    anti join claimed_lines as c on c.line_key = l.line_key
    where l.kind <> 'fee'
),

---------- snapshot history

-- only an intent seen in more than one snapshot can have moved backwards, so the window
-- functions below run over those intents' rows alone (one snapshot: none at all). Counted
-- by a hash of the id (an integer group is cheap); a collision only lets a few more rows
-- into the windows, which partition by the id itself.
seen_again as (
    select hash(intent_id) as id_hash
    from stg_intent_history
    -- seen twice implies seen in a snapshot before the latest: only those rows are counted
    -- (with a single snapshot, none)
    semi join (select distinct hash(intent_id) as id_hash from stg_intent_history
               where not is_latest) as earlier on earlier.id_hash = hash(intent_id)
    group by id_hash
    having count(*) > 1
),

history as (
    select
        h.*,
        case
            when h.status in ('completed', 'expired', 'canceled', 'failed', 'refunded') then 100
            else coalesce(
                list_position(
                    case h.intent_type
                        when 'onramp' then ['created', 'requires_compliance',
                            'awaiting_fiat_payment', 'fiat_received', 'minting',
                            'awaiting_onchain_transfer']
                        else ['created', 'requires_compliance', 'awaiting_burn_approval',
                            'burn_approved', 'onchain_received', 'burning', 'paying_out']
                    end,
                    h.status),
                0)
        end as status_rank
    from stg_intent_history as h
    semi join seen_again as a on a.id_hash = hash(h.intent_id)
),

steps as (
    select
        *,
        lag(status) over w as previous_status,
        lag(status_rank) over w as previous_rank,
        lag(snapshot_at) over w as previous_snapshot_at
    from history
    window w as (partition by intent_id order by snapshot_at, snapshot_run_id)
),

status_regression as (
    select
        'status_regression' as category,
        null::bigint as intent_key,
        null::bigint as line_key,
        s.intent_id,
        null as line_id,
        null as end_to_end_id,
        null as expected_cents,
        null as actual_cents,
        (case s.intent_type when 'onramp' then 'Onramp ' else 'Offramp ' end) || s.intent_id || ' moved backwards from '
            || s.previous_status || ' (snapshot ' || local_ts(s.previous_snapshot_at)
            || ') to ' || s.status || ' (snapshot ' || local_ts(s.snapshot_at)
            || '). Ask the API provider why; do not act on the older status.' as reason,
        s.snapshot_at as evidence_at
    from steps as s
    where s.status_rank < s.previous_rank
    qualify row_number() over (partition by s.intent_id order by s.snapshot_at desc) = 1
),

latest_snapshot as (
    select max(snapshot_at) as snapshot_at from stg_intent_history where is_latest
),

-- an id seen in an earlier snapshot and missing from the latest full one (snapshots taken
-- after it, e.g. filtered ones, are not compared)
intent_vanished as (
    select
        'intent_vanished' as category,
        null::bigint as intent_key,
        null::bigint as line_key,
        h.intent_id,
        null as line_id,
        null as end_to_end_id,
        null as expected_cents,
        null as actual_cents,
        (case h.intent_type when 'onramp' then 'Onramp ' else 'Offramp ' end)
            || h.intent_id || ' (last seen ' || h.status
            || coalesce(' for ' || brl(h.amount_cents), '') || ' in the snapshot of '
            || local_ts(h.snapshot_at) || ') is missing from the latest snapshot. Ask the '
            || 'API provider whether it was deleted, and check any money it moved.' as reason,
        h.snapshot_at as evidence_at
    from stg_intent_history as h
    anti join (
        select intent_id from stg_intent_history
        -- (nothing to compare when every row is of the latest snapshot)
        where is_latest and exists (select 1 from stg_intent_history where not is_latest)
    ) as latest on latest.intent_id = h.intent_id
    where h.snapshot_at < (select snapshot_at from latest_snapshot)
    qualify row_number() over (partition by h.intent_id order by h.snapshot_at desc) = 1
),

all_breaks as (
    select * from onramp_missing_credit
    union all by name select * from onramp_amount
    union all by name select * from onramp_duplicate_credit
    union all by name select * from onramp_credit_after_expiry
    union all by name select * from onramp_status_lag
    union all by name select * from offramp_missing_payout
    union all by name select * from offramp_payout_amount_mismatch
    union all by name select * from offramp_duplicate_payout
    union all by name select * from offramp_payout_for_failed_intent
    union all by name select * from offramp_stuck_paying_out
    union all by name select * from offramp_payout_returned
    union all by name select * from refund_missing
    union all by name select * from refund_amount_mismatch
    union all by name select * from ambiguous_match
    union all by name select * from unmatched_lines
    union all by name select * from status_regression
    union all by name select * from intent_vanished
),

final as (
    select
        ---------- ids
        substr(md5(concat_ws('|', b.category, coalesce(b.intent_id, ''),
                             coalesce(b.end_to_end_id, b.line_id, ''))), 1, 20) as break_id,
        b.category,
        c.priority,
        b.intent_id,
        b.line_id,
        b.end_to_end_id,
        b.intent_key,
        b.line_key,

        ---------- amounts (cents)
        cast(b.expected_cents as bigint) as expected_cents,
        cast(b.actual_cents as bigint) as actual_cents,
        cast(b.actual_cents - b.expected_cents as bigint) as delta_cents,

        ---------- why
        b.reason,

        ---------- aging
        b.evidence_at,
        cast(greatest(0, (epoch_us(p.as_of) - epoch_us(b.evidence_at)) // 86400000000)
             as bigint) as age_days
    from all_breaks as b
    cross join p
    left join categories as c on c.name = b.category
)

select * from final
