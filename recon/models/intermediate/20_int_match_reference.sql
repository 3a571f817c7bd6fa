-- Pass 2, reference: the intent's id (with or without hyphens), client_reference or
-- pix_description found in the line's free text (infoPagador, OFX MEMO, CSV description).
-- Only reference values that identify exactly one intent are keys (a generic description
-- such as "Compra de cripto" shared by many intents proves nothing). Lines claimed by the
-- txid pass are skipped. Like every pass, a line pairs only with an intent that existed when
-- the money moved (created_at <= booked_latest + clock_skew): a reference to an intent
-- created later is no evidence. A line whose text names more than one intent is ambiguous:
-- it is never auto-confirmed.
--
-- Speed: instead of testing every reference against every line (N x M substring tests),
-- the line text is cut into tokens; an intent id joins a token directly, a free-text
-- reference joins on its most specific token (most digits, then longest) and is then
-- checked with a substring test on the few pairs that share that token.
with

-- the words of the unclaimed lines' texts (int_line_words)
line_tokens as not materialized (
    select * from int_line_words
),

-- each distinct word of the lines once (at 10M lines, 3.85M of 8.7M rows): the semi joins
-- below build their hash tables on it, not on the references' 24M words
line_words as (
    select distinct token from int_line_words
),

-- the intent id itself, as written (uuid) or compacted (txid style): unique by nature, so
-- it joins the line's tokens directly, hyphens removed on both sides
id_keys as (
    select
        intent_key,
        case intent_type when 'onramp' then 'credit' when 'offramp' then 'debit' end as direction,
        txid_form(intent_id) as token
    from stg_intents
),

-- free-text references (client_reference, pix_description): keys only when unique
-- (read twice: recomputed rather than held, 17M rows at 10M intents)
reference_values as not materialized (
    select intent_key, intent_type, upper(client_reference) as reference from stg_intents
    where client_reference is not null
    union all
    select intent_key, intent_type, upper(pix_description) from stg_intents
    where pix_description is not null
),

-- the words of every reference of 6+ characters, with the intent carrying it
reference_words as (
    select
        intent_key,
        intent_type,
        reference,
        unnest(regexp_split_to_array(reference, '[^A-Z0-9_-]+')) as token
    from reference_values
    where length(reference) >= 6
),

-- a reference can only be found in a text that has its join token as a word, so only the
-- references sharing a word with some line are looked at further (most order numbers and
-- descriptions appear in no statement text). That depends on the reference's text alone:
-- every intent carrying such a reference passes, so its group is whole and uniqueness is
-- decided here
unique_candidates as (
    select
        reference,
        min(intent_key) as intent_key,
        any_value(intent_type) as intent_type
    from reference_words
    semi join line_words on line_words.token = reference_words.token
    group by reference
    having min(intent_key) = max(intent_key)
),

-- the join key of a reference is its token with the most digits, then the longest:
-- "Pedido 7KX2Q9A" joins on 7KX2Q9A, not on the word many descriptions share (a
-- one-token reference, the usual order number, is its own key: no comparison to run)
reference_tokens as (
    select
        intent_key,
        intent_type,
        reference,
        list_filter(
            regexp_split_to_array(reference, '[^A-Z0-9_-]+'), lambda t: length(t) >= 3
        ) as tokens
    from unique_candidates
),

unique_references as (
    select
        intent_key,
        intent_type,
        reference,
        case
            when array_length(tokens) <= 1 then tokens[1]
            else list_reduce(
                tokens,
                lambda a, b: case
                    when (length(b) - length(translate(b, '0123456789', '')), length(b))
                         > (length(a) - length(translate(a, '0123456789', '')), length(a))
                    then b else a end
            )
        end as join_token
    from reference_tokens
),

keyed as (
    select
        intent_key,
        case intent_type when 'onramp' then 'credit' when 'offramp' then 'debit' end as direction,
        reference,
        join_token
    from unique_references
    semi join line_words on line_words.token = unique_references.join_token
),

-- only a word as long as some compacted id can be one (a uuid: 32 characters); the txid
-- form's upper case keeps the length, so it is left out here (half the cost on 10M ids)
id_lengths as (
    select
        min(length(replace(intent_id, '-', ''))) as shortest,
        max(length(replace(intent_id, '-', ''))) as longest
    from stg_intents
),

pairs as (
    select line_tokens.line_key, id_keys.intent_key
    from line_tokens
    cross join id_lengths
    join id_keys
      on line_tokens.token_compact = id_keys.token
     and line_tokens.direction = id_keys.direction
    where length(line_tokens.token_compact) between id_lengths.shortest and id_lengths.longest
    union
    select line_tokens.line_key, keyed.intent_key
    from line_tokens
    join keyed
      on line_tokens.token = keyed.join_token
     and line_tokens.direction = keyed.direction
    join stg_statement_lines as lines on lines.line_key = line_tokens.line_key
    where contains(upper(lines.description), keyed.reference)
),

-- the intent existed when the money moved
pairs_in_time as materialized (
    select pairs.line_key, pairs.intent_key
    from pairs
    join stg_statement_lines as l on l.line_key = pairs.line_key
    join stg_intents as i on i.intent_key = pairs.intent_key
    cross join params as p
    where i.created_at <= l.booked_latest + p.clock_skew
),

line_counts as (
    select line_key, count(*) as candidates
    from pairs_in_time
    group by line_key
)

select
    pairs_in_time.line_key,
    pairs_in_time.intent_key,
    'reference' as rule,
    case when line_counts.candidates = 1 then 'matched' else 'ambiguous' end as outcome
from pairs_in_time
join line_counts using (line_key)
