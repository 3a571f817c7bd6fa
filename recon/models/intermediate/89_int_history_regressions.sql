-- Each intent's latest step backwards along its happy path between two consecutive
-- observations (int_history_observations), or the one the previous run's history state
-- kept when no later step went backwards: what status_regression reports, and what the
-- next history state keeps.
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
    from int_history_observations as h
    left join ranks as r on r.intent_type = h.intent_type and r.status = h.status
    group by id_hash
    having min(coalesce(r.status_rank, 0)) < max(coalesce(r.status_rank, 0))
),

history as (
    select h.*, coalesce(r.status_rank, 0) as status_rank
    from int_history_observations as h
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

stepped_back as (
    select
        intent_id,
        intent_type,
        previous_status as regressed_from,
        previous_snapshot_at as regressed_from_at,
        status as regressed_to,
        snapshot_at as regressed_at
    from steps
    where status_rank < previous_rank
    union all
    select intent_id, intent_type, regressed_from, regressed_from_at, regressed_to, regressed_at
    from stg_history_state
    where regressed_at is not null
)

select *
from stepped_back
qualify row_number() over (partition by intent_id order by regressed_at desc) = 1
