-- Pass 3, attributes: same amount (within params.amount_tolerance_cents), right direction,
-- inside the intent's time window, counterparty compatible, and a unique candidate on BOTH
-- sides. Anything else with candidates is ambiguous and never auto-confirmed.
--   onramp window:  created_at - clock_skew .. expires_at + onramp_payment_grace (as_of
--                   when no expiry)
--   offramp window: created_at - clock_skew .. completion (updated_at of a completed
--                   offramp) + offramp_payout_grace, else as_of
--   both ends inclusive; a date-only booking is in the window when its day overlaps it
--                   (or, when its text says when the money moved, that instant or that
--                   day: stg_statement_lines.moved_from .. moved_until)
--   counterparty:   name (names_compatible: case, accents, punctuation, particles,
--                   numbers, truncation inside any word, abbreviated or dropped middle names), masked
--                   document (same digits where both show one), and for payouts the PIX
--                   key the money went to vs the intent's destination address, compared by
--                   key type (keys_compatible). A credit's key is our own receiving key, so
--                   it says nothing about the payer and is not compared. Every test must
--                   hold: a name never confirms a pair that the document or key contradicts.
--   amount:         the line's gross (what moved plus the fee its statement states); on an
--                   account with a PSP fee schedule (fee_schedules) a credit may also be the
--                   onramp's amount less the schedule's fee (within the fee's tolerance):
--                   each onramp is also a candidate at that net amount on that account
-- Lines claimed by earlier passes (matched or ambiguous) are skipped, and so are intents
-- that an earlier pass already matched.
with

claimed_lines as (
    select line_key from int_match_manual
    union all
    select line_key from int_match_txid
    union all
    select line_key from int_match_reference
),

matched_intents as (
    -- (an intent paired by hand only with its devolução still looks for its payment)
    select intent_key from int_match_manual where not is_refund
    union all
    select intent_key from int_match_txid
    union all
    select intent_key from int_match_reference where outcome = 'matched'
),

lines as (
    select
        l.line_key,
        l.account,
        l.direction,
        l.gross_abs_cents as amount_abs_cents,
        -- when the money moved (the booking, or what a date-only line's text says)
        l.moved_from,
        l.moved_until,
        l.counterparty_name,
        l.counterparty_document,
        l.counterparty_key,
        l.counterparty_key_hash,
        -- probe the neighbouring amount buckets only when a tolerance is set (a fee's
        -- tolerance too, for a credit on an account with a fee schedule)
        unnest(
            case when p.amount_tolerance_cents = 0 and s.account is null then [0]
                 else [-1, 0, 1] end
        ) + l.gross_abs_cents // (p.amount_tolerance_cents + 1) as bucket
    from stg_statement_lines as l
    cross join params as p
    left join fee_schedules as s on s.account = l.account and l.direction = 'credit'
    anti join claimed_lines as c on c.line_key = l.line_key
    where l.kind in ('pix_in', 'pix_out')
),

unmatched_intents as (
    select
        i.intent_key,
        i.intent_type,
        case i.intent_type when 'onramp' then 'credit' when 'offramp' then 'debit' end
            as direction,
        i.amount_cents,
        i.amount_cents // (p.amount_tolerance_cents + 1) as bucket,
        i.party_display_name,
        i.party_document_masked,
        i.destination_address,
        i.destination_address_hash,
        i.created_at - p.clock_skew as window_start,
        payment_window_end(
            i.intent_type, i.status, i.expires_at, i.updated_at,
            p.onramp_payment_grace, p.offramp_payout_grace, p.as_of
        ) as window_end
    from stg_intents as i
    cross join params as p
    anti join matched_intents as m on m.intent_key = i.intent_key
    where i.amount_cents is not null
),

-- each intent at its amount on any account, and each onramp also at its amount less the
-- fee of every account with a fee schedule, on that account
intents as (
    select *, null as account, amount_cents as candidate_cents, 0 as fee_tolerance_cents
    from unmatched_intents
    union all by name
    select
        i.* exclude (bucket),
        (i.amount_cents - f.fee_cents) // (p.amount_tolerance_cents + 1) as bucket,
        f.account,
        i.amount_cents - f.fee_cents as candidate_cents,
        f.tolerance_cents as fee_tolerance_cents
    from unmatched_intents as i
    cross join params as p
    join (
        select
            u.intent_key,
            s.account,
            s.tolerance_cents,
            schedule_fee(u.amount_cents, s.rate_ppm, s.fixed_cents, s.min_cents, s.max_cents)
                as fee_cents
        from unmatched_intents as u
        cross join fee_schedules as s
        where u.intent_type = 'onramp'
    ) as f on f.intent_key = i.intent_key
),

-- same amount, direction and window first (a hash join); the counterparty tests then run
-- on those few candidate pairs only
amount_pairs as (
    select
        lines.line_key,
        intents.intent_key,
        intents.intent_type,
        lines.counterparty_name,
        lines.counterparty_document,
        lines.counterparty_key,
        lines.counterparty_key_hash,
        intents.party_display_name,
        intents.party_document_masked,
        intents.destination_address,
        intents.destination_address_hash
    from lines
    join intents
      on lines.bucket = intents.bucket
     and lines.direction = intents.direction
    cross join params as p
    where abs(lines.amount_abs_cents - intents.candidate_cents)
              <= p.amount_tolerance_cents + intents.fee_tolerance_cents
      -- a net candidate on its account only, where the line is not its gross already
      and (intents.account is null
           or (intents.account = lines.account
               and abs(lines.amount_abs_cents - intents.amount_cents)
                   > p.amount_tolerance_cents))
      and lines.moved_until >= intents.window_start
      and lines.moved_from <= intents.window_end
),

-- a value equal on both sides (or missing on both) is compatible as it stands; only the
-- others are normalized (upper case, accents, punctuation) and compared, so the string
-- work runs on the pairs whose texts really differ
pairs as materialized (
    select line_key, intent_key
    from amount_pairs
    where (counterparty_name is not distinct from party_display_name
           or names_compatible(counterparty_name, party_display_name))
      and (counterparty_document is not distinct from party_document_masked
           or docs_compatible(norm_doc(counterparty_document), norm_doc(party_document_masked)))
      -- a CPF/CNPJ/phone key known whole on both sides is compared by its keyed hash
      -- (recon.pii); otherwise by type, on what each side shows
      and (intent_type = 'onramp'
           or (counterparty_key_hash is not null and destination_address_hash is not null
               and counterparty_key_hash = destination_address_hash)
           or ((counterparty_key_hash is null or destination_address_hash is null)
               and (counterparty_key is not distinct from destination_address
                    or keys_compatible(counterparty_key, destination_address))))
),

line_counts as (
    select line_key, count(*) as candidates from pairs group by line_key
),

intent_counts as (
    select intent_key, count(*) as candidates from pairs group by intent_key
)

select
    pairs.line_key,
    pairs.intent_key,
    'attributes' as rule,
    case
        when line_counts.candidates = 1 and intent_counts.candidates = 1 then 'matched'
        else 'ambiguous'
    end as outcome
from pairs
join line_counts using (line_key)
join intent_counts using (intent_key)
