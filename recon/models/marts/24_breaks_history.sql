-- materialized: view
-- breaks_history: what the snapshots say about the intents themselves.
-- (the columns every family shares, and what money_side/window_* mean: 25_breaks_all.sql)
-- The observations are the snapshots' rows, folded onto the previous run's history state
-- when it fits (int_history_observations, int_history_regressions).
with

-- an intent that stepped back along its happy path, at its latest such step
status_regression as (
    select
        'status_regression' as category,
        null::bigint as intent_key,
        null::bigint as line_key,
        r.intent_id,
        null as line_id,
        null as end_to_end_id,
        null as expected_cents,
        null as actual_cents,
        'status_regression' as reason_code,
        to_json({
            'intent_id': r.intent_id, 'intent_type': r.intent_type,
            'from_status': r.regressed_from, 'from_at': iso_utc(r.regressed_from_at),
            'to_status': r.regressed_to, 'to_at': iso_utc(r.regressed_at)
        }) as reason_params,
        r.regressed_at as evidence_at
    from int_history_regressions as r
),

latest_snapshot as (
    select max(snapshot_at) as snapshot_at from int_history_observations where is_latest
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
        'intent_vanished' as reason_code,
        to_json({
            'intent_id': h.intent_id, 'intent_type': h.intent_type, 'status': h.status,
            'amount_cents': h.amount_cents, 'snapshot_at': iso_utc(h.snapshot_at)
        }) as reason_params,
        h.snapshot_at as evidence_at
    from int_history_observations as h
    anti join (
        select intent_id from int_history_observations
        -- (nothing to compare when every row is of the latest snapshot)
        where is_latest and exists (select 1 from int_history_observations where not is_latest)
    ) as latest on latest.intent_id = h.intent_id
    where h.snapshot_at < (select snapshot_at from latest_snapshot)
    qualify row_number() over (partition by h.intent_id order by h.snapshot_at desc) = 1
)

select * from status_regression
union all by name select * from intent_vanished
