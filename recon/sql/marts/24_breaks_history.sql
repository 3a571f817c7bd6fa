-- materialized: view
-- breaks_history: what the snapshots say about the intents themselves.
-- (the columns every family shares, and what money_side/window_* mean: 25_breaks_all.sql)
with

-- the place along the intent's happy path (status_vocabulary); every terminal status ranks
-- after every stage, and a status outside the vocabulary before them all
ranks as (
    select
        intent_type,
        status,
        case when terminal then 100 else coalesce(stage_rank, 0) end as status_rank
    from status_vocabulary
),

-- the intents that can have moved backwards: observed at more than one rank. An intent seen
-- once, or always at the same place, cannot; with daily snapshots that is nearly all of
-- them, so the window below orders a few intents' rows instead of every snapshot's (1M
-- intents x 5 daily snapshots: 2.5 s -> 0.8 s; with 30, 424k rows are ordered, not 15.7M).
-- Grouped by a 64-bit hash of the id: a collision only lets another intent's rows through
moved as (
    select hash(h.intent_id) as id_hash
    from stg_intent_history as h
    left join ranks as r on r.intent_type = h.intent_type and r.status = h.status
    group by id_hash
    having min(coalesce(r.status_rank, 0)) < max(coalesce(r.status_rank, 0))
),

history as (
    select h.*, coalesce(r.status_rank, 0) as status_rank
    from stg_intent_history as h
    semi join moved as m on m.id_hash = hash(h.intent_id)
    left join ranks as r on r.intent_type = h.intent_type and r.status = h.status
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
)

select * from status_regression
union all by name select * from intent_vanished
