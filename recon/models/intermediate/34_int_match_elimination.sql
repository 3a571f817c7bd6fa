-- Pass 3b, elimination: every way to give each line of a group of twins
-- (32_int_twin_groups.sql) its own candidate intent is listed; a group with exactly one way
-- is paired that way (rule elimination), any other stays ambiguous (int_ambiguous).
with

g as (
    select * from int_twin_groups
),

ways as (
    select p1.group_key, p1.intent_key as i1, p2.intent_key as i2, p3.intent_key as i3
    from g as p1
    join g as p2
      on p2.group_key = p1.group_key and p2.line_rank = 2 and p2.intent_key <> p1.intent_key
    left join g as p3
      on p3.group_key = p1.group_key and p3.line_rank = 3
     and p3.intent_key <> p1.intent_key and p3.intent_key <> p2.intent_key
    where p1.line_rank = 1
      and (p1.lines = 2) = (p3.intent_key is null)
),

one_way as (
    select group_key, any_value(i1) as i1, any_value(i2) as i2, any_value(i3) as i3
    from ways
    group by group_key
    having count(*) = 1
),

eliminated as (
    select g.line_key, g.intent_key
    from g
    join one_way as w on w.group_key = g.group_key
    where g.intent_key = case g.line_rank when 1 then w.i1 when 2 then w.i2 else w.i3 end
)

select e.line_key, e.intent_key, 'elimination' as rule, 'matched' as outcome
from eliminated as e
