-- Helpers the models share. Loaded first by the runner (files starting with "_" run as-is).
-- Parameters live in the one-row temp table `params` (bound by the runner, never formatted
-- into SQL text): as_of, grace periods (microseconds), tolerance, business time zone, window.

-- Cents as Brazilian reais text for reasons: 123456 -> 'R$ 1.234,56'. Integer math only.
CREATE OR REPLACE TEMP MACRO brl(c) AS
    CASE
        WHEN c IS NULL THEN 'R$ ?'
        ELSE (CASE WHEN c < 0 THEN '-' ELSE '' END)
            || 'R$ ' || replace(format('{:,}', abs(c) // 100), ',', '.')
            || ',' || lpad(CAST(abs(c) % 100 AS VARCHAR), 2, '0')
    END;

-- A UTC instant as ISO-8601 text in UTC, to the second ('2026-11-03T17:05:00Z'): how a
-- break's reason_params carry instants (the reader's time zone and format are applied when
-- the reason is rendered, recon.reconciliation.reasons).
CREATE OR REPLACE TEMP MACRO iso_utc(ts) AS
    strftime(timezone('UTC', ts), '%Y-%m-%d') || 'T' || strftime(timezone('UTC', ts), '%H:%M:%S')
    || 'Z';

-- 'YYYY-MM-DD' for a text's day and month (two digits each), in the year that puts it on or
-- before local_'s day.
CREATE OR REPLACE TEMP MACRO said_day(dd, mm, local_) AS
    CAST(
        year(CAST(local_ AS DATE))
        - CASE WHEN CAST(mm AS INTEGER) > month(CAST(local_ AS DATE)) THEN 1 ELSE 0 END
        AS VARCHAR)
    || '-' || mm || '-' || dd;

-- The UTC instant a date-only booking's text says (NULL when the booking has a time of day,
-- or the text does not match `pattern`, or names no real date): the day and month in groups
-- d and m of `pattern`, at `clock` ('HH:MM:SS'), in the business time zone (said_at, said_on).
CREATE OR REPLACE TEMP MACRO said(text_, local_, pattern, d, m, clock) AS
    CASE
        WHEN CAST(local_ AS TIME) = TIME '00:00:00' AND regexp_matches(text_, pattern)
            THEN timezone((SELECT business_tz FROM params), try_cast(
                said_day(regexp_extract(text_, pattern, d), regexp_extract(text_, pattern, m),
                         local_)
                || ' ' || clock AS TIMESTAMP))
    END;

-- What a line booked on a date says, in its text, about when the money moved (a PIX of the
-- weekend or a holiday that the bank books on the next business day, on a date):
--   said_at  the first "DD/MM HH:MM" of the text: Banco do Brasil's 'Pix - Recebido - 31/12
--            12:19 000***669495** IGOR';
--   said_on  a "DD/MM" that ends the text (not the end of a DD/MM/YY date), as the start of
--            that day: Itaú's 'PIX TRANSF  MARIA D04/10', the name cut to its field and the
--            PIX's day after it.
-- local_ is the booking in the business time zone (a TIMESTAMP); the result is the UTC
-- instant of what the text says, read in that time zone, in the year that puts the day on
-- or before the booking's (December's PIX booked in January). NULL when the booking has a
-- time of day, or the text says no such thing, or no real date. The model keeps them only
-- within the 7 days before the booking's day.
CREATE OR REPLACE TEMP MACRO said_at(text_, local_) AS
    said(text_, local_, '([0-3][0-9])/([01][0-9]) ([01][0-9]|2[0-3]):([0-5][0-9])', 1, 2,
         regexp_extract(text_, '([0-3][0-9])/([01][0-9]) ([01][0-9]|2[0-3]):([0-5][0-9])', 3) || ':'
         || regexp_extract(text_, '([0-3][0-9])/([01][0-9]) ([01][0-9]|2[0-3]):([0-5][0-9])', 4) || ':00');

CREATE OR REPLACE TEMP MACRO said_on(text_, local_) AS
    said(text_, local_, '(^|[^0-9/])([0-3][0-9])/([01][0-9]) *$', 2, 3, '00:00:00');

-- An intent id in the txid form of dynamic PIX charges: no hyphens, upper case.
CREATE OR REPLACE TEMP MACRO txid_form(id) AS upper(replace(id, '-', ''));

-- When an intent's money may last move (the attributes pass's window and the suggestions'):
-- an onramp until it expires plus the payment grace (as_of while it has no expiry), a
-- completed offramp until its completion plus the payout grace, any other offramp as_of.
CREATE OR REPLACE TEMP MACRO payment_window_end(
    intent_type, status, expires_at, updated_at, payment_grace, payout_grace, as_of_
) AS
    CASE
        WHEN intent_type = 'onramp' THEN coalesce(expires_at + payment_grace, as_of_)
        WHEN status = 'completed' THEN updated_at + payout_grace
        ELSE as_of_
    END;

-- The fee an account's PSP fee schedule (fee_schedules, recon.reconciliation.fees) takes from a
-- payment of `amount` cents: fixed + the rate (millionths) rounded half up, within min..max.
CREATE OR REPLACE TEMP MACRO schedule_fee(amount, rate_ppm, fixed_cents, min_cents, max_cents) AS
    CASE
        WHEN max_cents IS NULL
            THEN greatest(min_cents, fixed_cents + (amount * rate_ppm + 500000) // 1000000)
        ELSE least(max_cents, greatest(min_cents, fixed_cents + (amount * rate_ppm + 500000) // 1000000))
    END;

-- The business day (DATE) of a UTC instant.
CREATE OR REPLACE TEMP MACRO business_day(ts) AS
    CAST(timezone((SELECT business_tz FROM params), ts) AS DATE);

-- A person or company name reduced for comparison: upper case, no accents, punctuation and
-- runs of blanks to one space, the particles DA/DE/DO/DAS/DOS/E dropped ("João Pedro da
-- Silva" -> 'JOAO PEDRO SILVA'; banks write either), and so are numbers (a MEI's registered
-- name starts with its CNPJ's root, '52.062.865 ALAN SANTOS'; banks write it or not, and
-- Banco do Brasil cuts an account number into the name's field).
CREATE OR REPLACE TEMP MACRO norm_name(s) AS
    nullif(
        trim(regexp_replace(
            ' ' || regexp_replace(upper(strip_accents(s)), '[^A-Z0-9]+', ' ', 'g') || ' ',
            '( (DA|DE|DO|DAS|DOS|E|[0-9]+))+ ', ' ', 'g')),
        '');

-- Two name tokens agree when equal, or when one is an initial of the other ('P' ~ 'PEDRO').
CREATE OR REPLACE TEMP MACRO name_tokens_agree(x, y) AS
    x = y OR (length(x) = 1 AND starts_with(y, x)) OR (length(y) = 1 AND starts_with(x, y));

CREATE OR REPLACE TEMP MACRO names_agree(ta, tb) AS
    array_length(ta) >= 2 AND array_length(tb) >= 2
    AND ta[1] = tb[1]
    AND (starts_with(ta[-1], tb[-1]) OR starts_with(tb[-1], ta[-1]))
    AND list_bool_and(list_transform(
            CASE WHEN array_length(ta) <= array_length(tb) THEN ta[2:-2] ELSE tb[2:-2] END,
            lambda x: array_length(list_filter(
                CASE WHEN array_length(ta) <= array_length(tb) THEN tb[2:-2] ELSE ta[2:-2] END,
                lambda y: name_tokens_agree(x, y))) > 0)) IS NOT false;

-- Normalized names (norm_name) are compatible when either is unknown, one is a prefix of the
-- other (banks truncate names to the field width: 'JOAO PEDRO SIL'), or the first and the
-- last names agree (the last possibly truncated) and every middle name of the shorter list
-- agrees with one of the other's (abbreviated or dropped middle names and initials:
-- 'JOAO P SILVA' ~ 'JOAO PEDRO SILVA' ~ 'JOAO SILVA', but not 'JOAO PAULO SILVA').
CREATE OR REPLACE TEMP MACRO norm_names_compatible(a, b) AS
    a IS NULL OR b IS NULL OR starts_with(a, b) OR starts_with(b, a)
    OR names_agree(string_split(a, ' '), string_split(b, ' '));

-- A name's words as a bank's cut keeps them: norm_name with the particles kept (a cut may
-- end inside one: 'ANTONIA BITTENCOURT DOS REIS D', of '... dos Reis de Araújo').
CREATE OR REPLACE TEMP MACRO name_words(s) AS
    nullif(
        trim(regexp_replace(
            ' ' || regexp_replace(upper(strip_accents(s)), '[^A-Z0-9]+', ' ', 'g') || ' ',
            '( [0-9]+)+ ', ' ', 'g')),
        '');

-- One name's words (name_words) the other's cut at a field width, the first names agreeing.
CREATE OR REPLACE TEMP MACRO words_compatible(wa, wb) AS
    string_split(wa, ' ')[1] = string_split(wb, ' ')[1]
    AND (starts_with(wa, wb) OR starts_with(wb, wa));

-- Two names are compatible when either is unknown, when one is the other cut at a field
-- width inside any word, particles included, the first names agreeing (name_words), or
-- when their normalized forms (norm_name) are (norm_names_compatible). On names already
-- reduced (na, nb by norm_name; wa, wb by name_words): a model comparing each name with many
-- reduces each once.
CREATE OR REPLACE TEMP MACRO reduced_names_compatible(na, nb, wa, wb) AS
    norm_names_compatible(na, nb) OR words_compatible(wa, wb);

CREATE OR REPLACE TEMP MACRO names_compatible(a, b) AS
    reduced_names_compatible(norm_name(a), norm_name(b), name_words(a), name_words(b));

-- A document (CPF/CNPJ, possibly masked) reduced to its digits and mask stars; other mask
-- characters (Nubank's bullets, as lines imported before were stored) count as stars.
CREATE OR REPLACE TEMP MACRO norm_doc(s) AS
    nullif(regexp_replace(regexp_replace(s, '[•●·xX]', '*', 'g'), '[^0-9*]', '', 'g'), '');

-- Masked documents are compatible when either is unknown, or they have the same length and
-- agree on every position where both show a digit ('***456789**' vs '12345678901').
CREATE OR REPLACE TEMP MACRO docs_compatible(a, b) AS
    a IS NULL OR b IS NULL OR a = b
    OR (
        length(a) = length(b)
        AND list_bool_and(
            list_transform(
                range(1, length(a) + 1),
                lambda i: substr(a, i, 1) = '*' OR substr(b, i, 1) = '*'
                     OR substr(a, i, 1) = substr(b, i, 1)
            )
        )
    );

-- The type of a PIX key, from its text: 'email', 'evp' (random key, a uuid), 'phone'
-- (+55…, or 10-13 digits with phone punctuation), 'doc' (a CPF/CNPJ as written, or masked),
-- 'doc_or_phone' (11 bare digits: a CPF, or a mobile number without +55), or 'other'.
CREATE OR REPLACE TEMP MACRO pix_key_kind(s) AS
    CASE
        WHEN s LIKE '%@%' THEN 'email'
        WHEN regexp_full_match(lower(trim(s)),
                '[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}') THEN 'evp'
        WHEN trim(s) LIKE '+%' THEN 'phone'
        WHEN s LIKE '%*%' THEN 'doc'
        WHEN regexp_full_match(trim(s),
                '[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}|[0-9]{2}\.?[0-9]{3}\.?[0-9]{3}/?[0-9]{4}-?[0-9]{2}')
            THEN 'doc'
        WHEN regexp_full_match(trim(s), '[0-9]{11}') THEN 'doc_or_phone'
        WHEN regexp_full_match(regexp_replace(s, '[\s().-]', '', 'g'), '(55)?[0-9]{10,11}')
            THEN 'phone'
        ELSE 'other'
    END;

-- A phone key in E.164 digits (+55 optional on input: '(11) 98765-4321' -> '5511987654321').
CREATE OR REPLACE TEMP MACRO e164(s) AS
    CASE
        WHEN length(regexp_replace(s, '[^0-9]', '', 'g')) IN (10, 11)
            THEN '55' || regexp_replace(s, '[^0-9]', '', 'g')
        ELSE regexp_replace(s, '[^0-9]', '', 'g')
    END;

-- PIX keys are compared by type, never by suffix: e-mails case-insensitively and exactly;
-- random (EVP) keys exactly (case and hyphens aside); phones as E.164; CPF/CNPJ by digits, a
-- masked key compatible when its visible digits agree and its length fits; 11 bare digits
-- as a CPF or as a phone. Keys of different types are not compatible; an unknown key is.
CREATE OR REPLACE TEMP MACRO keys_compatible(a, b) AS
    a IS NULL OR b IS NULL OR keys_agree(a, b, pix_key_kind(a), pix_key_kind(b));

CREATE OR REPLACE TEMP MACRO keys_agree(a, b, ka, kb) AS
    CASE
        WHEN ka = 'email' OR kb = 'email' THEN ka = kb AND lower(trim(a)) = lower(trim(b))
        WHEN ka = 'evp' OR kb = 'evp'
            THEN ka = kb AND lower(replace(trim(a), '-', '')) = lower(replace(trim(b), '-', ''))
        WHEN ka = 'other' OR kb = 'other'
            THEN ka = kb
                 AND lower(regexp_replace(a, '[^0-9A-Za-z]', '', 'g'))
                   = lower(regexp_replace(b, '[^0-9A-Za-z]', '', 'g'))
        WHEN ka = 'phone' OR kb = 'phone'
            THEN ka <> 'doc' AND kb <> 'doc' AND e164(a) = e164(b)
        ELSE docs_compatible(norm_doc(a), norm_doc(b))
    END;

