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

-- A UTC instant as business-time-zone wall clock text, e.g. '2026-11-03 14:05 America/Sao_Paulo'.
CREATE OR REPLACE TEMP MACRO local_ts(ts) AS
    CASE
        WHEN ts IS NULL THEN '?'
        ELSE strftime(timezone((SELECT business_tz FROM params), ts), '%Y-%m-%d %H:%M')
            || ' ' || (SELECT business_tz FROM params)
    END;

-- An intent id in the txid form of dynamic PIX charges: no hyphens, upper case.
CREATE OR REPLACE TEMP MACRO txid_form(id) AS upper(replace(id, '-', ''));

-- The business day (DATE) of a UTC instant.
CREATE OR REPLACE TEMP MACRO business_day(ts) AS
    CAST(timezone((SELECT business_tz FROM params), ts) AS DATE);

-- A person or company name reduced for comparison: upper case, no accents, single spaces.
CREATE OR REPLACE TEMP MACRO norm_name(s) AS
    nullif(trim(regexp_replace(upper(strip_accents(s)), '[^A-Z0-9]+', ' ', 'g')), '');

-- A document (CPF/CNPJ, possibly masked) reduced to its digits and mask stars.
CREATE OR REPLACE TEMP MACRO norm_doc(s) AS
    nullif(regexp_replace(s, '[^0-9*]', '', 'g'), '');

-- A PIX key reduced for comparison: e-mails lower case, anything else alphanumerics only.
CREATE OR REPLACE TEMP MACRO norm_key(s) AS
    nullif(
        CASE
            WHEN s LIKE '%@%' THEN lower(trim(s))
            ELSE lower(regexp_replace(s, '[^0-9A-Za-z]', '', 'g'))
        END,
        ''
    );

-- Names are compatible when either is unknown, equal, or one is a prefix of the other
-- (banks truncate long names in statements).
CREATE OR REPLACE TEMP MACRO names_compatible(a, b) AS
    a IS NULL OR b IS NULL OR a = b OR starts_with(a, b) OR starts_with(b, a);

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

-- PIX keys are compatible when either is unknown, equal, or one ends with the other
-- (a phone key with or without the +55 country code).
CREATE OR REPLACE TEMP MACRO keys_compatible(a, b) AS
    a IS NULL OR b IS NULL OR a = b OR ends_with(a, b) OR ends_with(b, a);
