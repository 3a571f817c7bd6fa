-- recon_exceptions: one row per break, in the vocabulary of the table `categories` (loaded
-- from recon.schemas.CATEGORIES): the breaks_all rows in coverage. Amounts are positive
-- magnitudes in cents; delta = actual - expected. `reason_code` and `reason_params` (a JSON
-- object) name the evidence and what to do; the run renders them as the `reason` sentence.
-- `evidence_at` is when the evidence arose (line booked, intent last updated, snapshot
-- seen, the day's end of a balance); age_days counts whole days from it to as_of. break_id
-- hashes (category, intent, line e2e or id, else the subject: a balance break's account
-- and day), so the same break keeps its id across runs. intent_key/line_key (this
-- run's keys, null for a break on no intent/line of it) let the control items find a
-- line's break cheaply; the run file leaves them out, in the order of
-- recon/reconciliation/runs.py. Each rule reads on its own in marts/2N_breaks_<family>.sql.
with

p as (
    select * from params
),

final as (
    select
        ---------- ids
        substr(md5(concat_ws('|', b.category, coalesce(b.intent_id, ''),
                             coalesce(b.end_to_end_id, b.line_id, b.subject, ''))), 1, 20) as break_id,
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

        ---------- why (the sentence: recon.reconciliation.reasons, in the reader's language)
        b.reason_code,
        b.reason_params,

        ---------- aging
        b.evidence_at,
        cast(greatest(0, (epoch_us(p.as_of) - epoch_us(b.evidence_at)) // 86400000000)
             as bigint) as age_days
    from breaks_all as b
    cross join p
    left join categories as c on c.name = b.category
    where b.in_coverage
)

select * from final
