-- The words of the free text (infoPagador, OFX MEMO, CSV description) of every payment line
-- the txid pass left unclaimed, for the reference pass: one row per (line, word of 3+
-- characters), upper case, with the word also without hyphens (an intent id may be written
-- either way). A table of its own, not a CTE of the pass: at ten million lines it is
-- ~9M rows that DuckDB must be able to spill while the pass joins it three times.
-- (A word repeated in one text gives repeated rows: harmless, the pass's pairs are a set.)
with

lines as (
    select l.line_key, l.direction, upper(l.description) as description_upper
    from stg_statement_lines as l
    anti join int_match_txid as claimed on claimed.line_key = l.line_key
    anti join int_match_manual as manual on manual.line_key = l.line_key
    where l.kind in ('pix_in', 'pix_out')
      and l.description is not null
),

words as (
    select
        line_key,
        direction,
        unnest(regexp_split_to_array(description_upper, '[^A-Z0-9_-]+')) as token
    from lines
)

select line_key, direction, token, replace(token, '-', '') as token_compact
from words
where length(token) >= 3
