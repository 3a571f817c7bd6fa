"""Why a break is a break, as a person reads it: one message per reason code.

The SQL models say what and why as data: each break (and each intent awaiting statements)
carries `reason_code` and `reason_params`, a JSON object of ids, integer cents, ISO-8601 UTC
instants, statuses, rule names and names. The sentence is rendered here, from the gettext
catalogs, in the reader's language: by the run for the `reason` column of its files (the
configured language), and by the review app and the report where they show a break.

A message names its parameters as `{placeholders}`; a parameter is written by its key:

- ``*_cents``: money (``R$ 2.156,10`` / ``R$2,156.10``);
- ``*_at``: an instant, in the business time zone (``23/10/2026 17:21``);
- ``*_id``, ``*_ref``: an id (on a page: its first 8 characters, the full value in the title
  and a copy button); ``*_ids``: a list of them;
- ``rule``: the matching rule in plain words; ``*_category``: a category's label;
- other integers as numbers; the rest (statuses, names, texts) as they are; a missing one as
  "—".

A placeholder ending in ``_part`` is a fragment (FRAGMENTS): a message of its own, written
only when every parameter it names is known (" (expired {expired_at})").

A message may say something else on a page than on the command line (PAGE_MESSAGES): where
the action is a button of the page, the page's sentence points at it, not at a command.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

from markupsafe import Markup, escape

from recon import i18n
from recon.i18n import N_
from recon.schemas import category_label

__all__ = [
    "FRAGMENTS",
    "MESSAGES",
    "PAGE_MESSAGES",
    "RULE_LABELS",
    "Renderer",
    "differences",
    "placeholders",
    "render",
    "row_reason",
    "short_id",
]

# "text": a run file, a console, a notification; "page": HTML of the review app or the
# report; "link": HTML inside a link (a queue row), short ids without their copy buttons
Context = Literal["text", "page", "link"]

# reason_code -> the English sentence (the catalogs translate it)
MESSAGES: dict[str, str] = {
    "onramp_missing_credit": N_(
        "Onramp {intent_id} is {status} for {amount_cents} (payer {payer}, created "
        "{created_at}), but no PIX credit in the statements matches it by PIX charge code, "
        "reference, or amount, payer and time. Find the credit in the bank statement; if none "
        "arrived, stop the mint and contact the payer."
    ),
    "onramp_underpaid": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) pays onramp "
        "{intent_id}, which expects {expected_cents}: {difference_cents} short. Ask the payer "
        "for the difference, or return the credit (devolução) and cancel the intent."
    ),
    "onramp_overpaid": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) pays onramp "
        "{intent_id}, which expects {expected_cents}: {difference_cents} too much. Return the "
        "excess to the payer (devolução) before minting more than was ordered."
    ),
    "onramp_fee_mismatch": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) pays onramp "
        "{intent_id} of {expected_cents} net of a fee of {fee_cents}; the fee schedule of "
        "account {account} ({fee_schedule}) takes {schedule_fee_cents}. Ask the PSP about the "
        "difference of {difference_cents}, or correct the schedule in recon.toml."
    ),
    "onramp_duplicate_credit": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) is a second "
        "payment of onramp {intent_id}, already paid by credit {first_line_ref} on "
        "{first_booked_at}. Return the extra credit to the payer (devolução)."
    ),
    "onramp_credit_after_expiry": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) paid onramp "
        "{intent_id}, which is {status}{expiry_part} and was not refunded. Return the money to "
        "the payer (devolução) or reissue the order."
    ),
    "onramp_status_lag": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) paid onramp "
        "{intent_id}, but at {as_of_at} the intent is still {status}, more than "
        "{grace_minutes} min later. Check that the service received the payment notice; the "
        "payer has paid."
    ),
    "offramp_missing_payout": N_(
        "Offramp {intent_id} is completed (updated {updated_at}) for {amount_cents} to "
        "{payee}{key_part}, but no PIX debit in the statements matches it. Check the payout "
        "with the bank before telling the customer it was paid."
    ),
    "offramp_payout_short": N_(
        "Payout {line_ref} of {line_cents} sent {booked_at} (matched by {rule}) for offramp "
        "{intent_id}, which expects {expected_cents}, is {difference_cents} short. Pay the "
        "payee the difference."
    ),
    "offramp_payout_excess": N_(
        "Payout {line_ref} of {line_cents} sent {booked_at} (matched by {rule}) for offramp "
        "{intent_id}, which expects {expected_cents}, is {difference_cents} too much. Recover "
        "the excess from the payee."
    ),
    "offramp_duplicate_payout": N_(
        "Payout {line_ref} of {line_cents} sent {booked_at} (matched by {rule}) pays offramp "
        "{intent_id} a second time (first payout {first_line_ref} on {first_booked_at}). "
        "Recover the duplicate from the payee."
    ),
    "offramp_payout_for_failed_intent": N_(
        "Payout {line_ref} of {line_cents} sent {booked_at} (matched by {rule}) paid offramp "
        "{intent_id}, which is {status} (updated {updated_at}): the tokens were not taken. "
        "Recover the payout or complete the burn."
    ),
    "offramp_stuck_paying_out": N_(
        "Offramp {intent_id} has been paying out since {updated_at} (more than "
        "{grace_minutes} min before {as_of_at}) and no payout of {amount_cents} to {payee} is "
        "in the statements. Ask the payment provider about the transfer."
    ),
    "offramp_payout_returned": N_(
        "The payout of {expected_cents} for offramp {intent_id} came back: devolução "
        "{refund_ref} of {refund_cents} booked {booked_at}, yet the offramp is still "
        "completed. Pay the customer again to a valid PIX key, or return their tokens and "
        "mark the intent refunded."
    ),
    "refund_missing": N_(
        "Onramp {intent_id} is refunded (since {updated_at}, more than {grace_hours} h before "
        "{as_of_at}) but no devolução of {amount_cents}{credit_part} is in the statements. "
        "Send the devolução or correct the status."
    ),
    "refund_short": N_(
        "Credit {credit_ref} of {received_cents} received for onramp {intent_id} went back in "
        "devoluções totalling {returned_cents} (parts: {parts}; latest {last_ref} booked "
        "{last_booked_at}): {difference_cents} is still owed to the payer. Send the rest "
        "(devolução)."
    ),
    "refund_excess": N_(
        "Credit {credit_ref} of {received_cents} received for onramp {intent_id} went back in "
        "devoluções totalling {returned_cents} (parts: {parts}; latest {last_ref} booked "
        "{last_booked_at}): {difference_cents} was returned in excess. Recover it from the "
        "payer."
    ),
    "onramp_credit_returned": N_(
        "Onramp {intent_id} is {status} (tokens delivered) for credit {credit_ref} of "
        "{received_cents} booked {credit_booked_at}, but {returned_cents} of it went back to "
        "the payer in devoluções (parts: {parts}; latest {last_ref} booked {last_booked_at}). "
        "Recover the tokens or the money from the customer."
    ),
    "onramp_credit_returned_med": N_(
        "Onramp {intent_id} is {status} (tokens delivered) for credit {credit_ref} of "
        "{received_cents} booked {credit_booked_at}, but {returned_cents} of it went back to "
        "the payer in devoluções (parts: {parts}; latest {last_ref} booked {last_booked_at}, "
        "marked {marker}: a MED claim by the payer's bank). Recover the tokens or the money "
        "from the customer, and contest the claim with the payer's bank if it is unfounded."
    ),
    "onramp_third_party_payer": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) pays onramp "
        "{intent_id}, but it was paid by {payer} (document {payer_document}) and the onramp's "
        "party is {party} (document {party_document}): someone else paid. Check the payer "
        "against the compliance policy; if it does not allow third-party payments, return the "
        "credit (devolução) and cancel the intent."
    ),
    "onramp_third_party_payer_company": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) pays onramp "
        "{intent_id}, but it was paid by a company, {payer} (CNPJ {payer_document}), and the "
        "onramp's party is {party} (document {party_document}): someone else paid. Check the "
        "payer against the compliance policy; if it does not allow third-party payments, "
        "return the credit (devolução) and cancel the intent."
    ),
    "onramp_third_party_payer_mei": N_(
        "Credit {line_ref} of {line_cents} booked {booked_at} (matched by {rule}) pays onramp "
        "{intent_id}, but it was paid from a CNPJ, {payer_document} of {payer}, whose name "
        "agrees with the party's, {party} (CPF {party_document}): likely the party's MEI. "
        "Confirm that the CNPJ is the party's own and close the break, or return the credit "
        "(devolução)."
    ),
    "ambiguous_credit": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits these "
        "intents by {rule}, and the rules cannot tell which: {intent_ids}. Pick the right one "
        "(recon resolve) or ask the payer."
    ),
    "ambiguous_debit": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits these "
        "intents by {rule}, and the rules cannot tell which: {intent_ids}. Pick the right one "
        "(recon resolve) or ask the payee."
    ),
    "ambiguous_credit_shared": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits one "
        "intent by {rule}, {intent_ids}, and other lines fit it too: the rules cannot tell "
        "which of them paid it. Pick the right one (recon resolve) or ask the payer."
    ),
    "ambiguous_debit_shared": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits one "
        "intent by {rule}, {intent_ids}, and other lines fit it too: the rules cannot tell "
        "which of them paid it out. Pick the right one (recon resolve) or ask the payee."
    ),
    "unmatched_credit": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{from_part}{document_part}"
        "{description_part} matches no intent by PIX charge code, reference, or amount, payer "
        "and time{refund_of_part}. Identify the payer or return the money (devolução)."
    ),
    "unmatched_debit": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{to_part}{document_part}"
        "{description_part} matches no intent by PIX charge code, reference, or amount, payee "
        "and time{refund_of_part}. Find who authorised this payment."
    ),
    "unmatched_credit_not_pix": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{from_part}{document_part}"
        "{description_part} matches no intent{refund_of_part}. It does not say PIX (a "
        "transfer, cashback, yield or an entry of the bank itself): if a payer sent it, "
        "identify them; else book it outside recon and record why (recon resolve)."
    ),
    "unmatched_debit_not_pix": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{to_part}{document_part}"
        "{description_part} matches no intent{refund_of_part}. It does not say PIX (a "
        "transfer, a bill payment or an entry of the bank itself): if it paid a payee, find who "
        "authorised it; else book it outside recon and record why (recon resolve)."
    ),
    "status_regression": N_(
        "Intent {intent_id} ({intent_type}) moved backwards from {from_status} (snapshot of "
        "{from_at}) to {to_status} (snapshot of {to_at}). Ask the API provider why; do not act "
        "on the older status."
    ),
    "intent_vanished": N_(
        "Intent {intent_id} ({intent_type}, last seen {status}{amount_part} in the snapshot of "
        "{snapshot_at}) is missing from the latest snapshot. Ask the API provider whether it "
        "was deleted, and check any money it moved."
    ),
    "statement_balance_gap": N_(
        "Account {account}, {day}: the statement closes the day at {closing_cents}, but its "
        "opening {opening_cents} plus the lines imported for it, {movements_cents}, make "
        "{walked_cents}: {gap_cents} that no imported line shows. A line is missing from the "
        "day's file (or one is there twice): ask the bank for the day's complete statement and "
        "import it."
    ),
    "statement_balance_unfiled": N_(
        "Account {account}: no statement file for {first_day} to {last_day}, and the balance "
        "does not carry across: the day before closed at {before_cents}, the lines imported "
        "since add {movements_cents}, yet the next balance stated is {after_cents}: "
        "{gap_cents} unexplained. Ask the bank for the missing day's statement and import it."
    ),
    "awaiting_credit": N_(
        "Onramp {intent_id} ({status}, {amount_cents}) waits for statements: its credit would "
        "be booked between {window_start_at} and {window_end_at}, which the imported "
        "statements do not cover yet. Import the statement for that time; without the money "
        "it becomes “{would_be_category}”."
    ),
    "awaiting_payout": N_(
        "Offramp {intent_id} ({status}, {amount_cents}) waits for statements: its payout would "
        "be sent between {window_start_at} and {window_end_at}, which the imported statements "
        "do not cover yet. Import the statement for that time; without the money it becomes "
        "“{would_be_category}”."
    ),
    "awaiting_refund": N_(
        "Onramp {intent_id} ({status}, {amount_cents}) waits for statements: its devolução "
        "would be booked between {window_start_at} and {window_end_at}, which the imported "
        "statements do not cover yet. Import the statement for that time; without the money "
        "it becomes “{would_be_category}”."
    ),
    "awaiting_returned_payout": N_(
        "Offramp {intent_id} ({status}, {amount_cents}) waits for statements: its returned "
        "payout would be booked between {window_start_at} and {window_end_at}, which the "
        "imported statements do not cover yet. Import the statement for that time; without "
        "the money it becomes “{would_be_category}”."
    ),
}

# what a page says instead, where the action is a control of the page (same placeholders)
PAGE_MESSAGES: dict[str, str] = {
    "ambiguous_credit": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits these "
        "intents by {rule}, and the rules cannot tell which: {intent_ids}. Confirm the right "
        "candidate below, or ask the payer."
    ),
    "ambiguous_debit": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits these "
        "intents by {rule}, and the rules cannot tell which: {intent_ids}. Confirm the right "
        "candidate below, or ask the payee."
    ),
    "ambiguous_credit_shared": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits one "
        "intent by {rule}, {intent_ids}, and other lines fit it too: the rules cannot tell "
        "which of them paid it. Confirm the right candidate below, or ask the payer."
    ),
    "ambiguous_debit_shared": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{counterparty_part} fits one "
        "intent by {rule}, {intent_ids}, and other lines fit it too: the rules cannot tell "
        "which of them paid it out. Confirm the right candidate below, or ask the payee."
    ),
    "unmatched_credit_not_pix": N_(
        "Credit {line_ref} of {amount_cents} booked {booked_at}{from_part}{document_part}"
        "{description_part} matches no intent{refund_of_part}. It does not say PIX (a "
        "transfer, cashback, yield or an entry of the bank itself): if a payer sent it, "
        "identify them; else book it outside recon and resolve the break below, saying why."
    ),
    "unmatched_debit_not_pix": N_(
        "Debit {line_ref} of {amount_cents} booked {booked_at}{to_part}{document_part}"
        "{description_part} matches no intent{refund_of_part}. It does not say PIX (a "
        "transfer, a bill payment or an entry of the bank itself): if it paid a payee, find who "
        "authorised it; else book it outside recon and resolve the break below, saying why."
    ),
}

# a phrase written only when every parameter it names is known
FRAGMENTS: dict[str, str] = {
    "expiry_part": N_(" (expired {expired_at})"),
    "key_part": N_(" (PIX key {pix_key})"),
    "credit_part": N_(" for credit {credit_ref}"),
    "counterparty_part": N_(" ({counterparty})"),
    "from_part": N_(" from {counterparty}"),
    "to_part": N_(" to {counterparty}"),
    "document_part": N_(" (document {counterparty_document})"),
    "description_part": N_(", text “{description}”"),
    "refund_of_part": N_(" (a devolução of {refund_of_ref})"),
    "amount_part": N_(" for {amount_cents}"),
}

# how a sentence names the rule that matched (or found) a pair
RULE_LABELS: dict[str, str] = {
    "manual": N_("a person's pairing"),
    "txid": N_("PIX charge code"),
    "reference": N_("payment reference"),
    "attributes": N_("amount, payer and time"),
    "refund": N_("the original credit"),
    "elimination": N_("elimination"),
}

_MISSING = "—"
_E2E = re.compile(r"^[ED][0-9]{8}[0-9A-Za-z]{23}$")


@lru_cache(maxsize=1024)
def placeholders(message: str) -> frozenset[str]:
    """The `{names}` a message writes."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(message) if name)


@lru_cache(maxsize=1024)
def _translated(source: str, lang: str) -> str:
    return i18n.gettext(source, lang)


def short_id(value: str) -> str:
    """How a page shows an id: its first 8 characters. A PIX end-to-end id starts with the
    bank's code (the same for every line of a bank), so it shows its last 8 instead."""
    if len(value) <= 9:
        return value
    return "…" + value[-8:] if _E2E.match(value) else value[:8] + "…"


@dataclass(frozen=True)
class Renderer:
    """Renders reasons in one language and time zone, for one context (see Context)."""

    lang: str
    tz: str
    context: Context = "text"

    def __call__(self, code: str | None, params: str | Mapping[str, Any] | None) -> str:
        """The sentence of `code` with `params` (a JSON object text, or a mapping); "" for
        no code. An unknown code is written as the code and its parameters, never dropped."""
        if not code:
            return ""
        values = json.loads(params) if isinstance(params, str) else dict(params or {})
        message = self._message(code)
        if message is None:
            return self._unknown(code, values)
        return self._fill(message, values)

    def _message(self, code: str) -> str | None:
        source = (PAGE_MESSAGES.get(code) if self.html else None) or MESSAGES.get(code)
        return _translated(source, self.lang) if source else None

    def _fill(self, message: str, values: Mapping[str, Any]) -> str:
        filled: dict[str, str] = {}
        for name in placeholders(message):
            if name in FRAGMENTS:
                filled[name] = self._fragment(name, values)
            else:
                filled[name] = self._value(name, values.get(name))
        if self.html:
            return Markup(escape(message)).format(**filled)
        return message.format(**filled)

    def _fragment(self, name: str, values: Mapping[str, Any]) -> str:
        fragment = _translated(FRAGMENTS[name], self.lang)
        if any(values.get(key) is None for key in placeholders(fragment)):
            return ""
        return self._fill(fragment, values)

    def _value(self, key: str, value: Any) -> str:
        if value is None:
            return _MISSING
        if key.endswith("_ids") and isinstance(value, list):
            parts = [self._value(key[:-1], v) for v in value]
            return Markup(", ").join(parts) if self.html else ", ".join(parts)
        if key.endswith(("_id", "_ref")):
            return self._id(str(value))
        if key.endswith("_cents"):
            return _money(int(value), self.lang)
        if key.endswith("_at"):
            return _local(str(value), self.tz, self.lang)
        if key == "rule":
            label = RULE_LABELS.get(str(value))
            return _translated(label, self.lang) if label else str(value)
        if key.endswith("_category"):
            return category_label(str(value), self.lang)
        if isinstance(value, int) and not isinstance(value, bool):
            return i18n.format_number(value, self.lang)
        return str(value)

    @property
    def html(self) -> bool:
        return self.context != "text"

    def _id(self, value: str) -> str:
        if not self.html:
            return value
        short = short_id(value)
        if short == value:
            return Markup('<code class="id">{}</code>').format(value)
        if self.context == "link":
            return Markup('<code class="id" title="{}">{}</code>').format(value, short)
        return Markup(
            '<code class="id" title="{full}">{short}</code>'
            '<button type="button" class="copy" data-copy="{full}" '
            'aria-label="{label} {full}">⧉</button>'
        ).format(full=value, short=short, label=i18n.gettext(N_("Copy"), self.lang))

    def _unknown(self, code: str, values: Mapping[str, Any]) -> str:
        text = f"{code} {json.dumps(dict(values), ensure_ascii=False, sort_keys=True)}"
        return escape(text) if self.html else text

    def column(self, codes: Iterable[str | None], params: Iterable[str | None]) -> list[str]:
        """The sentences of a column of codes and one of parameters (a run's file)."""
        return [self(c, p) for c, p in zip(codes, params, strict=True)]


# how each language writes reais (recon.i18n.format_money, through Babel, which costs ~50x
# more per call: a run renders a reason per break): (symbol, thousands, decimal separator)
_MONEY = {"pt_BR": ("R$ ", ".", ","), "en": ("R$", ",", ".")}


def _money(cents: int, lang: str) -> str:
    """Integer cents as `lang` writes reais, exactly as recon.i18n.format_money does."""
    form = _MONEY.get(i18n.language(lang))
    if form is None:
        return i18n.format_money(cents, lang)
    symbol, thousands, decimal = form
    whole, part = divmod(abs(cents), 100)
    digits = f"{whole:,}".replace(",", thousands)
    return f"{'-' if cents < 0 else ''}{symbol}{digits}{decimal}{part:02d}"


@lru_cache(maxsize=65_536)
def _local(iso: str, tz: str, lang: str) -> str:
    return i18n.format_datetime(datetime.fromisoformat(iso.replace("Z", "+00:00")), tz, lang)


def row_reason(row: Mapping[str, Any], renderer: Renderer) -> str:
    """A break's (or waiting intent's) reason as `renderer` writes it, from the row's
    reason_code and reason_params; a row of a run that stored only the sentence keeps it."""
    code = row.get("reason_code")
    if isinstance(code, str) and code:
        return renderer(code, row.get("reason_params"))
    sentence = row.get("reason")
    text = sentence if isinstance(sentence, str) else ""
    return escape(text) if renderer.html else text


def render(
    code: str | None,
    params: str | Mapping[str, Any] | None,
    *,
    tz: str,
    lang: str | None = None,
    context: Context = "text",
) -> str:
    """The sentence of a reason code with its parameters, in `lang` (default: the chosen
    language, see recon.i18n), instants in the time zone `tz`; on a page (`context="page"`)
    as HTML with short ids that copy in full."""
    return Renderer(i18n.language(lang), tz, context)(code, params)


# recon_suggestions' `differences` (recon/models/marts/28_recon_suggestions.sql): fragments
# joined by "; ", written by the SQL in English on every engine; each is read back by the
# message it was written from (its %(name)s parts any text) and written in the reader's
# language; an unknown fragment is kept as it is.
_DIFFERENCES = (
    N_("amount %(amount)s less"),
    N_("amount %(amount)s more"),
    N_("booked %(n)s min after the window closed"),
    N_("booked %(n)s h after the window closed"),
    N_("booked %(n)s min before the window opened"),
    N_("booked %(n)s h before the window opened"),
    N_("payer name '%(line)s' vs '%(intent)s'"),
    N_("payee name '%(line)s' vs '%(intent)s'"),
    N_("document contradicts"),
    N_("PIX key contradicts"),
    N_("not marked as a devolução"),
    N_("amount, time and party agree"),
)
_READ_BACK = tuple(
    (re.compile(re.sub(r"%\\\(([a-z]+)\\\)s", r"(?P<\1>.+)", re.escape(m))), m)
    for m in _DIFFERENCES
)


def differences(text: str | None, lang: str | None = None) -> list[str]:
    """A suggestion's `differences`, one sentence fragment each, in `lang`. A name may hold
    "; " itself: the longest run of pieces that reads as one fragment is taken."""
    parts = (text or "").split("; ")
    out: list[str] = []
    start = 0
    while start < len(parts):
        for end in range(len(parts), start, -1):
            written = _difference("; ".join(parts[start:end]), lang)
            if written is not None:
                out.append(written)
                start = end
                break
        else:
            if parts[start]:
                out.append(parts[start])
            start += 1
    return out


def _difference(part: str, lang: str | None) -> str | None:
    for pattern, message in _READ_BACK:
        found = pattern.fullmatch(part)
        if found:
            return i18n.gettext(message, lang) % found.groupdict()
    return None
