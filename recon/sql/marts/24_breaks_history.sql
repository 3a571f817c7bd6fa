-- materialized: view
-- breaks_history: what the snapshots say about the intents themselves.
-- (the columns every family shares, and what money_side/window_* mean: 25_breaks_all.sql)
with

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

-- the place along the intent's happy path (status_vocabulary); every terminal status ranks
-- after every stage, and a status outside the vocabulary before them all
history as (
    select
        h.*,
        case when v.terminal then 100 else coalesce(v.stage_rank, 0) end as status_rank
    from stg_intent_history as h
    semi join seen_again as a on a.id_hash = hash(h.intent_id)
    left join status_vocabulary as v on v.intent_type = h.intent_type and v.status = h.status
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
