"""The languages recon speaks: gettext catalogs read through Babel, and the formats of each.

Every sentence a person reads (the review app, the report, break reasons, category labels,
console tables, export headers) is written in English in the code, marked for translation
(`_()`/`N_()` in Python, `{{ _("...") }}` / `{% trans %}` in templates), and translated by
the catalog `recon/locale/<lang>/LC_MESSAGES/recon.po`. Portuguese (Brazil) is the default;
English is the other choice (`recon.toml` `[ui] language = "en"`, `--lang en`,
`$RECON_LANG`).

The catalogs ship as `.po` text and are compiled in memory on first use (Babel's reader and
`.mo` writer), so the repository and the wheel hold no generated `.mo` file and an edit to a
`.po` is live at once. `make messages` extracts the marked strings and updates the catalogs;
tests/test_i18n.py fails when a marked string has no translation.
"""

from __future__ import annotations

import gettext as _gettext
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from recon.errors import UsageError

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "N_",
    "_",
    "chosen",
    "format_date",
    "format_datetime",
    "format_money",
    "format_number",
    "format_percent",
    "gettext",
    "html_lang",
    "install_jinja",
    "language",
    "ngettext",
    "override",
    "translations",
]

DOMAIN = "recon"
# catalog names (gettext's ll_CC) -> the tag a page declares (`<html lang>`, BCP 47)
LANGUAGES: dict[str, str] = {"pt_BR": "pt-BR", "en": "en"}
DEFAULT_LANGUAGE = "pt_BR"
# the language the code's strings are written in: it has no catalog of its own
SOURCE_LANGUAGE = "en"

# what each language writes for an instant in local time, and for money
_DATETIME_FORMAT = {"pt_BR": "%d/%m/%Y %H:%M", "en": "%Y-%m-%d %H:%M"}
_DATE_FORMAT = {"pt_BR": "%d/%m/%Y", "en": "%Y-%m-%d"}


def N_(message: str) -> str:
    """Mark `message` for the catalogs without translating it (labels kept as data)."""
    return message


# the language chosen for what runs in this context (a command's --lang, a web app's setting)
_chosen: ContextVar[str | None] = ContextVar("recon_language", default=None)


@contextmanager
def override(lang: str | None) -> Iterator[None]:
    """Speak `lang` inside the block (None: leave the choice as it is)."""
    token = _chosen.set(language(lang)) if lang else None
    try:
        yield
    finally:
        if token is not None:
            _chosen.reset(token)


def chosen() -> str | None:
    """The language someone chose for this context (`override`, else `$RECON_LANG`), or
    None: then `recon.toml` `[ui] language` decides (recon.config.ui_language)."""
    value = _chosen.get() or os.environ.get("RECON_LANG")
    return language(value) if value else None


def language(value: str | None = None) -> str:
    """The catalog name for `value` ("pt-BR", "pt_br", "pt", "en-US" ...), else the chosen
    language (`override`, `$RECON_LANG`), else pt_BR. An unknown one is a UsageError (exit 2)."""
    chosen = value or _chosen.get() or os.environ.get("RECON_LANG") or DEFAULT_LANGUAGE
    base = chosen.strip().replace("-", "_").split("_")[0].lower()
    # one catalog per language: any region of Portuguese reads pt_BR, any English en
    for name in LANGUAGES:
        if name.split("_")[0].lower() == base:
            return name
    known = ", ".join(LANGUAGES.values())
    raise UsageError(f"unknown language {chosen!r}: recon speaks {known}")


def html_lang(lang: str | None = None) -> str:
    """The `<html lang>` value of `lang`: "pt-BR" or "en"."""
    return LANGUAGES[language(lang)]


@cache
def translations(lang: str | None = None) -> _gettext.NullTranslations:
    """The gettext translations of `lang` (compiled in memory from its `.po`, once)."""
    name = language(lang)
    if name == SOURCE_LANGUAGE:
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    po = resources.files("recon") / "locale" / name / "LC_MESSAGES" / f"{DOMAIN}.po"
    with po.open("rb") as fh:
        catalog = read_po(fh, locale=name, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def gettext(message: str, lang: str | None = None) -> str:
    """`message` in `lang` (the message itself where the catalog has no translation)."""
    return translations(language(lang)).gettext(message)


def _(message: str) -> str:
    """`message` in the language of this context (see `language`)."""
    return translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int, lang: str | None = None) -> str:
    """The singular or plural of a message for count `n`, in `lang`."""
    return translations(language(lang)).ngettext(singular, plural, n)


def install_jinja(env: Environment, lang: str | None = None) -> None:
    """Give `env` the i18n extension and `lang`'s catalog: `{{ _("...") }}`,
    `{{ ngettext(...) }}` and `{% trans %}` translate; `html_lang` names the page's language."""
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_translations(  # type: ignore[attr-defined]
        translations(language(lang)), newstyle=True
    )
    env.globals["html_lang"] = html_lang(lang)


def format_datetime(value: datetime, tz: str | ZoneInfo, lang: str | None = None) -> str:
    """An instant as a person reads it, in local time (`tz`), without the zone (a page
    states its zone once): pt-BR "23/10/2026 17:21", en "2026-10-23 17:21"."""
    zone = tz if isinstance(tz, ZoneInfo) else ZoneInfo(tz)
    return value.astimezone(zone).strftime(_DATETIME_FORMAT[language(lang)])


def format_date(value: date, lang: str | None = None) -> str:
    """A day as a person reads it: pt-BR "23/10/2026", en "2026-10-23"."""
    return value.strftime(_DATE_FORMAT[language(lang)])


def format_money(cents: int, lang: str | None = None, currency: str = "BRL") -> str:
    """Integer cents as money in `lang`: pt-BR "R$ 2.156,10", en "R$2,156.10"; negatives
    with a minus sign. Exact: cents become a Decimal, never a float."""
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise TypeError(f"cents must be int, got {type(cents).__name__}")
    from babel.numbers import format_currency

    text: Any = format_currency(Decimal(cents).scaleb(-2), currency, locale=language(lang))
    # CLDR's pt-BR puts a no-break space between symbol and number: a plain one pastes cleanly
    return str(text).replace("\xa0", " ")


def format_number(n: float, lang: str | None = None) -> str:
    """A number as `lang` writes it: pt-BR "1.939" and "0,25", en "1,939" and "0.25"."""
    from babel.numbers import format_decimal

    return str(format_decimal(n, locale=language(lang)))


def format_percent(fraction: float, lang: str | None = None, digits: int = 1) -> str:
    """A share as `lang` writes it, with `digits` decimals: pt-BR "99,0%", en "99.0%"."""
    from babel.numbers import format_percent as _format_percent

    pattern = "#,##0." + "0" * digits + "%" if digits else "#,##0%"
    return str(_format_percent(fraction, pattern, locale=language(lang)))
