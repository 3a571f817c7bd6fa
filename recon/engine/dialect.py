"""The one place recon's SQL is translated: DuckDB's text, as the files spell it, to Spark SQL.

The `.sql` files are written for DuckDB and run there as they are. For Spark, each text is
parsed (sqlglot, DuckDB dialect), its macros are expanded in the syntax tree (the
``CREATE MACRO`` helpers of ``_macros.sql`` / ``_coverage.sql`` / the checks'), the
DuckDB-only spellings below are rewritten, and the tree is written out as Spark SQL:

- list indexing and slicing (1-based, negative from the end, ``l[2:-2]``) -> ``element_at``
  / ``slice``; ``array_length`` -> ``size``; ``list_bool_and`` -> ``forall``;
  ``list_reduce`` -> ``aggregate``; ``unnest(list) + x`` -> ``explode(transform(...))``;
- ``timezone(zone, instant)`` -> ``from_utc_timestamp`` (and of a local ``TIMESTAMP``,
  ``to_utc_timestamp``); ``epoch_us`` -> ``unix_micros``; ``hash`` -> ``xxhash64``;
- ``CAST(x AS TIME)`` and ``TIME '…'`` -> the time of day as text (Spark has no TIME);
- ``regexp_full_match`` -> an anchored ``regexp_like``; ``format('{:,}', n)`` ->
  ``format_number(n, 0)``; ``strip_accents`` -> ``translate`` over the accented letters;
- ``string_agg([DISTINCT] x, sep ORDER BY x)`` -> ``array_join(array_sort(collect_...))``;
- a tuple ``(a, b)`` -> ``struct(a, b)`` (ordered field by field in both engines);
- ``to_json({'k': v, ...})`` -> ``to_json(struct(v AS k, ...))`` keeping null fields
  (``"k":null``, as DuckDB writes them; Spark drops them unless told);
- ``UNION ALL BY NAME`` of ``SELECT *`` branches -> positional, each branch listing the
  union's columns (NULL where it has none), given the tables' columns (`columns_of`).

`SPARK_FUNCTIONS` lists every function a translated model may call: `check_functions`
(the lint test runs it over every model) fails on any other, so a new DuckDB-only spelling
cannot land unseen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import time

import sqlglot
from sqlglot import exp

__all__ = [
    "SPARK_FUNCTIONS",
    "Macro",
    "check_functions",
    "expand_macros",
    "parse_macros",
    "spark_functions_used",
    "to_spark",
]

_MACRO = re.compile(
    r"^\s*CREATE\s+OR\s+REPLACE\s+TEMP\s+MACRO\s+([a-z_][a-z0-9_]*)\s*\(([^)]*)\)\s+AS\s+"
    r"(TABLE\s+)?(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_COMMENT = re.compile(r"--[^\n]*")


@dataclass(frozen=True)
class Macro:
    """A DuckDB macro: its parameters and body (an expression, or a query for a table macro)."""

    name: str
    params: tuple[str, ...]
    body: exp.Expr
    table: bool


def parse_macros(script: str) -> dict[str, Macro]:
    """The macros a ``_*.sql`` script defines (every statement of it must be one)."""
    macros: dict[str, Macro] = {}
    for statement in _statements(script):
        match = _MACRO.match(statement)
        if not match:
            raise ValueError(f"not a macro definition: {statement[:60]!r}")
        name, params, table, body = match.groups()
        names = tuple(p.strip() for p in params.split(",") if p.strip())
        macros[name.lower()] = Macro(
            name.lower(), names, sqlglot.parse_one(body, read="duckdb"), bool(table)
        )
    return macros


def _statements(script: str) -> list[str]:
    text = _COMMENT.sub("", script)
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", text) if s.strip()]


def expand_macros(tree: exp.Expr, macros: dict[str, Macro]) -> exp.Expr:
    """Replace every call of a macro by its body, arguments substituted, until none is left."""
    for _ in range(32):  # macros call macros; a cycle would never end
        found = False

        def replace(node: exp.Expr) -> exp.Expr:
            nonlocal found
            if not isinstance(node, exp.Anonymous):
                return node
            macro = macros.get(str(node.this).lower())
            if macro is None:
                return node
            found = True
            args = list(node.expressions)
            if len(args) != len(macro.params):
                raise ValueError(
                    f"macro {macro.name} takes {len(macro.params)} arguments, got {len(args)}"
                )
            body = _substitute(macro.body.copy(), dict(zip(macro.params, args, strict=True)))
            if macro.table:
                return exp.Subquery(this=body)
            return exp.Paren(this=body)

        tree = tree.transform(replace)
        if not found:
            return tree
    raise ValueError("macro expansion does not end (a macro calls itself?)")


def _substitute(body: exp.Expr, args: dict[str, exp.Expr]) -> exp.Expr:
    def put(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in args:
            return exp.Paren(this=args[node.name].copy())
        return node

    return body.transform(put)


# ---------------------------------------------------------------------------------- Spark

# every function a translated text may call (as Spark spells it): what recon's SQL uses today;
# a new one is added here deliberately, once it is known to mean the same on both engines
SPARK_FUNCTIONS = frozenset(
    {
        "ABS", "AGGREGATE", "ANY_VALUE", "ARRAY", "ARRAY_CONTAINS", "ARRAY_JOIN", "ARRAY_SORT", "BIN",
        "CAST", "COALESCE", "COLLECT_LIST", "COLLECT_SET", "CONCAT", "CONCAT_WS", "CONTAINS",
        "COUNT", "DATE_FORMAT", "EXISTS", "EXPLODE", "FILTER", "FORALL", "FORMAT_NUMBER",
        "FROM_UTC_TIMESTAMP", "GREATEST", "IF", "LAG", "LEAD", "LEAST", "LENGTH", "LOWER",
        "LPAD", "MAP", "MAX", "MAX_BY", "MD5", "MIN", "MIN_BY", "MONTH", "NULLIF", "REGEXP_EXTRACT",
        "REGEXP_LIKE", "REGEXP_REPLACE", "REPLACE", "ROW_NUMBER", "SEQUENCE", "SIZE", "SLICE",
        "SPLIT", "STARTSWITH", "STRUCT", "SUBSTRING", "SUM", "TO_DATE", "TO_JSON", "TO_UTC_TIMESTAMP",
        "TRANSFORM", "TRANSLATE", "TRIM", "TRY_ELEMENT_AT", "UNIX_MICROS", "UPPER", "XXHASH64",
        "YEAR",
    }
)  # fmt: skip

_ACCENTED = "ÁÀÂÃÄÅáàâãäåÉÈÊËéèêëÍÌÎÏíìîïÓÒÔÕÖóòôõöÚÙÛÜúùûüÇçÑñÝýÿ"
_PLAIN = "AAAAAAaaaaaaEEEEeeeeIIIIiiiiOOOOOoooooUUUUuuuuCcNnYyy"


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _lit(value: int | str) -> exp.Expr:
    return exp.Literal.number(value) if isinstance(value, int) else exp.Literal.string(value)


def _int_literal(node: exp.Expr) -> int | None:
    """The value of an integer literal, negative ones included (-2 parses as Neg(2))."""
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(node.this)
        except ValueError:
            return None
    if isinstance(node, exp.Neg):
        inner = _int_literal(node.this)
        return None if inner is None else -inner
    return None


def _bracket(node: exp.Bracket) -> exp.Expr:
    """l[k] -> try_element_at(l, k) (negative from the end, like DuckDB); l[s:-k] -> slice."""
    (index,) = node.expressions
    array = node.this
    if isinstance(index, exp.Slice):
        start = _int_literal(index.this) if index.this is not None else 1
        end = _int_literal(index.expression) if index.expression is not None else -1
        if start is None or end is None or start < 1:
            raise ValueError(f"cannot translate the slice {node.sql('duckdb')}")
        size = _fn("SIZE", array.copy())
        if end < 0:  # up to the (-end)-th element from the end, inclusive
            length: exp.Expr = exp.Sub(this=size, expression=_lit(-end + start - 2))
        else:
            length = _lit(end - start + 1)
        return _fn("SLICE", array, _lit(start), _fn("GREATEST", length, _lit(0)))
    # sqlglot holds a DuckDB index 0-based (l[1] as 0, l[-1] as -2): back to DuckDB's
    value = _int_literal(index)
    if value is None:
        return _fn("TRY_ELEMENT_AT", array, exp.Add(this=index, expression=_lit(1)))
    return _fn("TRY_ELEMENT_AT", array, _lit(value + 1))


def _spark_rewrite(node: exp.Expr) -> exp.Expr:
    name = str(node.this).upper() if isinstance(node, exp.Anonymous) else ""
    if isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
        node.set("materialized", None)  # a hint for DuckDB's planner; Spark plans its own
        return node
    if isinstance(node, exp.Bracket) and not isinstance(node.this, exp.Struct):
        return _bracket(node)
    if isinstance(node, exp.ArraySize):
        return _fn("SIZE", node.this)
    if isinstance(node, exp.Tuple) and not isinstance(node.parent, (exp.In, exp.Values)):
        return _fn("STRUCT", *node.expressions)
    if isinstance(node, exp.Explode) and isinstance(node.parent, exp.Binary):
        return node  # handled at the parent (below)
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.this, exp.Explode):
        lam = exp.Lambda(
            this=node.__class__(this=exp.to_identifier("__v"), expression=node.expression),
            expressions=[exp.to_identifier("__v")],
        )
        return exp.Explode(this=_fn("TRANSFORM", node.this.this, lam))
    if name == "LIST_BOOL_AND":
        (array,) = node.expressions
        var = exp.to_identifier("__v")
        if isinstance(array, exp.Transform):
            return _fn("FORALL", array.this, array.expression)
        return _fn("FORALL", array, exp.Lambda(this=var.copy(), expressions=[var]))
    if name == "LIST_REDUCE":
        array, lam = node.expressions
        rest = _fn("SLICE", array.copy(), _lit(2), _fn("SIZE", array.copy()))
        return _fn("AGGREGATE", rest, _fn("TRY_ELEMENT_AT", array, _lit(1)), lam)
    if name in ("REGEXP_SPLIT_TO_ARRAY", "STRING_SPLIT_REGEX"):
        return _fn("SPLIT", *node.expressions)
    if isinstance(node, exp.TimeToUnix) or name == "EPOCH":
        # DuckDB's epoch keeps the fraction of a second (Spark's unix_timestamp drops it)
        value = node.this if isinstance(node, exp.TimeToUnix) else node.expressions[0]
        micros = exp.cast(_fn("UNIX_MICROS", value), exp.DataType.build("DOUBLE"))
        return exp.Div(this=micros, expression=_lit(1_000_000))
    if isinstance(node, exp.DayOfWeekIso):
        # ISO: Monday 1 .. Sunday 7 (Spark's dayofweek: Sunday 1 .. Saturday 7)
        shifted = exp.Paren(this=exp.Add(this=_fn("DAYOFWEEK", node.this), expression=_lit(5)))
        weekday = exp.Paren(this=exp.Mod(this=shifted, expression=_lit(7)))
        return exp.Paren(this=exp.Add(this=weekday, expression=_lit(1)))
    if name == "TO_JSON" and len(node.expressions) == 1:
        options = exp.VarMap(
            keys=exp.array(_lit("ignoreNullFields"), copy=False),
            values=exp.array(_lit("false"), copy=False),
        )
        return _fn("TO_JSON", node.expressions[0], options)
    if name == "EPOCH_US":
        return _fn("UNIX_MICROS", *node.expressions)
    if name == "STRIP_ACCENTS":
        return _fn("TRANSLATE", node.expressions[0], _lit(_ACCENTED), _lit(_PLAIN))
    if isinstance(node, exp.RegexpFullMatch) or name == "REGEXP_FULL_MATCH":
        text, pattern = (
            (node.this, node.expression)
            if isinstance(node, exp.RegexpFullMatch)
            else node.expressions[:2]
        )
        anchored = (
            _lit(f"^(?:{pattern.this})$")
            if isinstance(pattern, exp.Literal)
            else _fn("CONCAT", _lit("^(?:"), pattern, _lit(")$"))
        )
        return _fn("REGEXP_LIKE", text, anchored)
    if (isinstance(node, exp.Func) and node.key == "hash") or name == "HASH":
        args = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
        return _fn("XXHASH64", *args)
    if isinstance(node, exp.ConvertTimezone) or name == "TIMEZONE":
        return _timezone(node)
    if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.TIME:
        return _time_of_day(node.this)
    if isinstance(node, exp.Format) or name == "FORMAT":
        args = [node.this, *node.expressions] if isinstance(node, exp.Format) else node.expressions
        if len(args) == 2 and isinstance(args[0], exp.Literal) and args[0].this == "{:,}":
            return _fn("FORMAT_NUMBER", args[1], _lit(0))
    if isinstance(node, (exp.GroupConcat, exp.ArrayAgg)) or name == "STRING_AGG":
        return _string_agg(node)
    return node


def _time_of_day(value: exp.Expr) -> exp.Expr:
    """DuckDB's ``CAST(x AS TIME)`` and ``TIME 'hh:mm:ss'``. Spark has no TIME type: written
    as Spark's, ``CAST('00:00:00' AS TIMESTAMP)`` is today's midnight, so a date-only
    booking's test (its time of day is midnight) never held there. Both sides become the time
    of day as fixed-width text, 'HH:mm:ss.SSSSSS', which compares as times do."""
    if isinstance(value, exp.Literal) and value.is_string:
        return _lit(time.fromisoformat(value.this).strftime("%H:%M:%S.%f"))
    return _fn("DATE_FORMAT", value, _lit("HH:mm:ss.SSSSSS"))


# DuckDB's TIMESTAMP (no zone): a wall clock (sqlglot reads it as TIMESTAMPNTZ)
_WALL_CLOCK = (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ)


def _timezone(node: exp.Expr) -> exp.Expr:
    """DuckDB's timezone(zone, value): of an instant, its wall clock there; of a wall clock
    (a TIMESTAMP), the instant it is there."""
    if isinstance(node, exp.ConvertTimezone):
        zone, value = node.args["target_tz"], node.args["timestamp"]
    else:
        zone, value = node.expressions[:2]
    if isinstance(value, exp.Cast) and value.to.this in _WALL_CLOCK:
        return _fn("TO_UTC_TIMESTAMP", value, zone)
    # a wall clock, like DuckDB's TIMESTAMP (Spark's own TIMESTAMP is an instant)
    wall_clock = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")
    return exp.cast(_fn("FROM_UTC_TIMESTAMP", value, zone), wall_clock)


def _string_agg(node: exp.Expr) -> exp.Expr:
    """string_agg([DISTINCT] x, sep ORDER BY x) -> array_join(array_sort(collect_...(x)), sep).

    Only the order by the aggregated value itself is supported (what recon's SQL uses)."""
    this = node.this
    order = None
    if isinstance(this, exp.Order):
        order = this
        this = this.this
    distinct = isinstance(this, exp.Distinct)
    value = this.expressions[0] if distinct else this
    separator = node.args.get("separator") or _lit(",")
    if order is not None:
        keys = [o.this for o in order.expressions]
        if len(keys) != 1 or keys[0].sql() != value.sql():
            raise ValueError(f"string_agg ordered by another value: {node.sql('duckdb')}")
    collected = _fn("COLLECT_SET" if distinct else "COLLECT_LIST", value)
    return _fn("ARRAY_JOIN", _fn("ARRAY_SORT", collected), separator)


def _union_by_name(
    tree: exp.Expr, columns_of: Callable[[str], list[tuple[str, str]]] | None
) -> exp.Expr:
    """`q1 UNION ALL BY NAME q2 ...` -> positional: each branch wrapped to list the union's
    columns in first-seen order (a typed NULL where it has none). A branch's columns and
    their types come from the engine (`columns_of`, given a Spark query: analysis only),
    with the WITH clause's
    earlier CTEs in front of it."""
    for union in list(tree.find_all(exp.Union)):
        if not union.args.get("by_name"):
            continue
        if isinstance(union.parent, exp.Union) and union.parent.args.get("by_name"):
            continue  # a part of a longer union, translated with it
        if columns_of is None:
            raise ValueError("UNION ALL BY NAME needs the engine's columns (columns_of)")
        branches: list[exp.Expr] = []
        _flatten_union(union, branches)
        context = _ctes_before(union, tree)
        per_branch = []
        for branch in branches:
            query = branch.copy()
            if context:
                query.set("with_", exp.With(expressions=[c.copy() for c in context]))
            per_branch.append(columns_of(query.sql(dialect="spark")))
        types: dict[str, str] = {}
        for cols in per_branch:
            for name, type_ in cols:
                types.setdefault(name, type_)
        selects = [
            exp.select(
                *[
                    exp.column(c)
                    if c in dict(cols)
                    else exp.alias_(exp.cast(exp.Null(), exp.DataType.build(t, dialect="spark")), c)
                    for c, t in types.items()
                ]
            ).from_(exp.Subquery(this=branch.copy(), alias=exp.TableAlias(this="__branch")))
            for branch, cols in zip(branches, per_branch, strict=True)
        ]
        combined: exp.Expr = selects[0]
        for select in selects[1:]:
            combined = exp.union(combined, select, distinct=False)
        if union is tree:  # the statement itself: keep its WITH
            with_ = tree.args.get("with_")
            tree = combined
            if with_ is not None:
                tree.set("with_", with_)
        else:
            union.replace(combined)
    return tree


def _ctes_before(node: exp.Expr, tree: exp.Expr) -> list[exp.CTE]:
    """The CTEs of the statement's WITH that come before the one holding `node` (all of
    them when `node` is in the final query)."""
    with_ = tree.args.get("with_")
    if with_ is None:
        return []
    holder = node.find_ancestor(exp.CTE)
    ctes = list(with_.expressions)
    if holder is None:
        return ctes
    return ctes[: ctes.index(holder)] if holder in ctes else []


def _flatten_union(node: exp.Expr, out: list[exp.Expr]) -> None:
    if isinstance(node, exp.Union) and node.args.get("by_name"):
        _flatten_union(node.this, out)
        _flatten_union(node.expression, out)
    else:
        out.append(node)


def to_spark(
    sql: str,
    macros: dict[str, Macro] | None = None,
    *,
    columns_of: Callable[[str], list[tuple[str, str]]] | None = None,
) -> str:
    """One DuckDB statement of recon's as Spark SQL (macros expanded, rewrites applied)."""
    tree = _parse(sql)
    tree = expand_macros(tree, macros or {})
    # a rewritten node's new children are rewritten on the next pass: repeat to a fixpoint
    text = tree.sql(dialect="spark")
    for _ in range(16):
        tree = tree.transform(_spark_rewrite)
        again = tree.sql(dialect="spark")
        if again == text:
            break
        text = again
    else:
        raise ValueError("the Spark rewrites do not settle")
    if any(u.args.get("by_name") for u in tree.find_all(exp.Union)):
        text = _union_by_name(tree, columns_of).sql(dialect="spark")
    return text


def _parse(sql: str) -> exp.Expr:
    trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    if len(trees) != 1:
        raise ValueError(f"expected one statement, found {len(trees)}")
    return trees[0]


_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def spark_functions_used(spark_sql: str) -> set[str]:
    """Every function a Spark SQL text calls, as Spark spells it (upper case)."""
    tree = sqlglot.parse_one(spark_sql, read="spark")
    names: set[str] = set()
    for node in tree.walk():
        if isinstance(node, exp.Anonymous):
            names.add(str(node.this).upper())
        elif isinstance(node, exp.Func) and not isinstance(node, (exp.Cast, exp.Case)):
            call = _CALL.match(node.sql(dialect="spark"))
            if call:
                names.add(call.group(1).upper())
    return names


def check_functions(texts: Iterable[tuple[str, str]]) -> list[str]:
    """(name, Spark SQL) pairs -> one problem per function outside SPARK_FUNCTIONS."""
    problems = []
    for name, text in texts:
        for fn in sorted(spark_functions_used(text) - SPARK_FUNCTIONS):
            problems.append(f"{name}: {fn} is not in the Spark function list")
    return problems
