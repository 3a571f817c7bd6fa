-- Groups of twins for elimination (34_int_match_elimination.sql): the lines and intents the
-- attributes pass left ambiguous that are connected only to each other by its candidates
-- (and by no ambiguous reference), at most 3 lines and as many intents. One row per
-- (line, candidate intent) of a group, its lines ranked 1..lines.
-- A model of its own, stored before the ways are counted: each pass plans on its own
-- (folded into the attributes pass, the whole chain overflowed Spark's planner).
-- A group is found as the lines within two steps of each other (line - intent - line -
-- intent - line); it is kept only when that reach is the same for each of its lines and no
-- intent of it has a candidate outside it: then it is the whole connected group (a line
-- whose reach is all lines within two steps of a common line, of at most 3 lines, reaches
-- every line of its component). Lines and intents with more than 3 candidates are in no
-- group, which keeps the self-joins small.
with

ambiguous as (
    select line_key, intent_key from int_match_attributes where outcome = 'ambiguous'
),

line_counts as (
    select line_key, count(*) as candidates from ambiguous group by line_key
),

intent_counts as (
    select intent_key, count(*) as candidates from ambiguous group by intent_key
),

-- a line with too many candidates, or one of an intent with too many, or of an intent an
-- ambiguous reference also names (connected beyond these candidates)
crowded_lines as (
    select a.line_key
    from ambiguous as a
    join line_counts as lc on lc.line_key = a.line_key
    join intent_counts as ic on ic.intent_key = a.intent_key
    where lc.candidates > 3 or ic.candidates > 3
    union all
    select a.line_key
    from ambiguous as a
    semi join int_match_reference as r
      on r.intent_key = a.intent_key and r.outcome = 'ambiguous'
),

twin_pairs as (
    select a.line_key, a.intent_key, ic.candidates as intent_candidates
    from ambiguous as a
    join intent_counts as ic on ic.intent_key = a.intent_key
    anti join crowded_lines as x on x.line_key = a.line_key
),

near as (
    select distinct a.line_key, b.line_key as other
    from twin_pairs as a
    join twin_pairs as b on b.intent_key = a.intent_key
),

reach as (
    select distinct n1.line_key, n2.other
    from near as n1
    join near as n2 on n2.line_key = n1.other
),

reach_sizes as (
    select line_key, min(other) as group_key, count(*) as lines
    from reach
    group by line_key
),

-- lines whose reach holds a line of another group or of another reach size
leaking_lines as (
    select distinct r.line_key
    from reach as r
    join reach_sizes as a on a.line_key = r.line_key
    join reach_sizes as o on o.line_key = r.other
    where o.group_key <> a.group_key or o.lines <> a.lines
),

group_pairs as (
    select s.group_key, s.lines, t.line_key, t.intent_key, t.intent_candidates,
           x.line_key is not null as leaks
    from twin_pairs as t
    join reach_sizes as s on s.line_key = t.line_key
    left join leaking_lines as x on x.line_key = t.line_key
    where s.lines <= 3
),

-- the closed groups: no line leaks, every intent's candidates inside, as many intents as
-- lines
closed_groups as (
    select group_key
    from (
        select group_key, intent_key, any_value(lines) as lines, count(*) as inside,
               any_value(intent_candidates) as candidates,
               max(case when leaks then 1 else 0 end) as leaks
        from group_pairs
        group by group_key, intent_key
    ) as per_intent
    group by group_key
    having count(*) = max(lines)
       and max(leaks) = 0
       and max(case when inside <> candidates then 1 else 0 end) = 0
),

kept as (
    select g.group_key, g.lines, g.line_key, g.intent_key
    from group_pairs as g
    semi join closed_groups as c on c.group_key = g.group_key
),

ranks as (
    select
        line_key,
        row_number() over (partition by group_key order by line_key) as line_rank
    from (select distinct group_key, line_key from kept) as l
)

select k.group_key, k.lines, k.line_key, k.intent_key, r.line_rank
from kept as k
join ranks as r on r.line_key = k.line_key
