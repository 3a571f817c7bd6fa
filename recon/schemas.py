"""The column contracts of docs/contracts.md as explicit Arrow schemas, and the break vocabulary.

Every Parquet file recon writes uses one of these schemas, so the catalog views have the
same columns and types whether a table holds a million rows or none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from recon import i18n
from recon.i18n import N_

TS = pa.timestamp("us", tz="UTC")

INTENTS_SCHEMA = pa.schema(
    [
        # ids
        ("id", pa.string()),
        ("instance_id", pa.string()),
        ("party_id", pa.string()),
        # what it is
        ("intent_type", pa.string()),
        ("flow_version", pa.int64()),
        ("adapter", pa.string()),
        ("status", pa.string()),
        ("status_reason", pa.string()),
        ("client_reference", pa.string()),
        ("metadata", pa.string()),  # JSON text
        # timestamps (UTC)
        ("expires_at", TS),
        ("created_at", TS),
        ("updated_at", TS),
        ("chain_id", pa.string()),
        # amounts (cents)
        ("amount_cents", pa.int64()),
        ("amount_source", pa.string()),  # amountCents | pixInfo.amountCents | metadata.amountCents
        # pixInfo, flattened
        ("pix_key_type", pa.string()),
        ("pix_key_value", pa.string()),
        ("pix_recipient_name", pa.string()),
        ("pix_bank", pa.string()),
        ("pix_description", pa.string()),
        ("pix_amount_cents", pa.int64()),
        # party subset
        ("party_display_name", pa.string()),
        ("party_document_masked", pa.string()),
        ("party_solana_wallet", pa.string()),
        ("destination_address", pa.string()),  # a CPF/CNPJ/phone key masked (recon.pii)
        ("destination_address_hash", pa.string()),  # HMAC of a CPF/CNPJ/phone key
        # lineage
        ("snapshot_at", TS),
        ("run_id", pa.string()),
        ("raw", pa.string()),  # the item's JSON text
    ]
)

STATEMENT_LINES_SCHEMA = pa.schema(
    [
        ("line_id", pa.string()),  # stable hash
        ("source_format", pa.string()),  # pix-json | ofx | cnab240 | csv
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("account", pa.string()),
        ("booked_at", TS),
        ("amount_cents", pa.int64()),  # signed: credit > 0; what moved in the account
        # the PSP's fee taken from a credit as the statement states it (NULL: none stated):
        # the payer paid amount_cents + fee_cents
        ("fee_cents", pa.int64()),
        ("direction", pa.string()),  # credit | debit
        ("kind", pa.string()),  # pix_in | pix_out | pix_refund_in | pix_refund_out | fee | other
        ("end_to_end_id", pa.string()),
        ("txid", pa.string()),
        ("refund_of", pa.string()),  # original e2e, for devoluções
        ("counterparty_name", pa.string()),
        ("counterparty_document", pa.string()),  # masked (recon.pii)
        ("counterparty_document_hash", pa.string()),  # HMAC of the full document, if given
        ("counterparty_key", pa.string()),  # a CPF/CNPJ/phone key masked
        ("counterparty_key_hash", pa.string()),  # HMAC of a CPF/CNPJ/phone key
        ("description", pa.string()),
        ("bank_reference", pa.string()),
        ("imported_at", TS),
    ]
)

# One row per statement period recorded by an import: the account's statements cover
# [covered_from, covered_to) (UTC, end exclusive); `basis` says how we know (the file's own
# period, the first to last day of its lines, or a period declared at import) and `scope`
# which movements the statement lists.
STATEMENT_COVERAGE_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("source_format", pa.string()),
        ("source_file", pa.string()),
        ("covered_from", TS),
        ("covered_to", TS),  # exclusive
        ("basis", pa.string()),
        ("scope", pa.string()),  # all | received (API Pix: PIX received and their devoluções)
        ("lines", pa.int64()),  # lines the file held (a covered period may hold none)
        ("imported_at", TS),
    ]
)

# One row per balance a statement file states (recon.statements.lines.Balance), for the balance
# walk (the catalog view statement_balances): the account's balance at the start
# ("opening") or the end ("closing") of a business day (`day`: the local date in the
# business time zone), signed cents, the instant the file dates it at when it gives one,
# what states it (`basis`) and where.
STATEMENT_BALANCES_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("day", pa.date32()),
        ("side", pa.string()),  # opening | closing
        ("balance_cents", pa.int64()),
        ("stated_at", TS),  # null when the file gives a day only
        ("basis", pa.string()),  # "ofx LEDGERBAL", "cnab240 saldo_final", "camt CLBD", ...
        ("source_format", pa.string()),
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("imported_at", TS),
    ]
)

# One row per Open Finance transaction page an import read (recon.statements.formats.open_finance):
# which page of which request it is and what it says of the others, so that the request's
# period is recorded as covered once every page of it has been read, by one import or several.
STATEMENT_PAGES_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("request", pa.string()),  # links.self without page, page-size and pagination-key
        ("page", pa.int64()),
        ("last_page", pa.int64()),  # meta.totalPages, or the page itself when it links no next
        ("total_records", pa.int64()),  # meta.totalRecords (null when not stated)
        ("items", pa.int64()),  # the page's data items, money or not
        ("first_day", pa.date32()),  # business days of its lines (null: none)
        ("last_day", pa.date32()),
        ("source_file", pa.string()),
        ("imported_at", TS),
    ]
)

STATEMENT_QUARANTINE_SCHEMA = pa.schema(
    [
        ("source_format", pa.string()),
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("field", pa.string()),
        ("reason", pa.string()),
        ("raw", pa.string()),
        ("imported_at", TS),
    ]
)

EXCEPTIONS_SCHEMA = pa.schema(
    [
        ("break_id", pa.string()),
        ("run_id", pa.string()),
        ("category", pa.string()),
        ("priority", pa.string()),  # P1 | P2 | P3
        ("intent_id", pa.string()),
        ("line_id", pa.string()),
        ("end_to_end_id", pa.string()),
        ("expected_cents", pa.int64()),
        ("actual_cents", pa.int64()),
        ("delta_cents", pa.int64()),
        ("reason", pa.string()),  # the sentence, in the language configured at run time
        ("reason_code", pa.string()),  # what the sentence says (recon.reconciliation.reasons)
        ("reason_params", pa.string()),  # its parameters: a JSON object
        ("first_seen_run", pa.string()),
        ("age_days", pa.int64()),
        ("state", pa.string()),  # new | persisting
    ]
)

MATCHES_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("intent_id", pa.string()),
        ("line_id", pa.string()),
        ("end_to_end_id", pa.string()),
        ("rule", pa.string()),  # manual | txid | reference | attributes | elimination | refund
        ("intent_type", pa.string()),
        ("intent_status", pa.string()),
        ("line_kind", pa.string()),
        ("expected_cents", pa.int64()),
        ("actual_cents", pa.int64()),  # a credit's gross: what the payer paid
        # the PSP's fee on a credit: stated by the statement, or the account's fee schedule's
        # when the credit came net of it (NULL: no fee)
        ("fee_cents", pa.int64()),
        ("booked_at", TS),
    ]
)

# One row per audit entry about a break of a run (open or decided): runs/<run_id>/history.parquet,
# so the report can show what people did without reading anything but run files.
HISTORY_SCHEMA = pa.schema(
    [
        ("break_id", pa.string()),
        ("seq", pa.int64()),  # the entry's place in data/audit.jsonl
        ("at", TS),
        ("by", pa.string()),
        ("action", pa.string()),  # resolve | reopen | assign | comment | confirm_match | ...
        ("note", pa.string()),
        ("before", pa.string()),  # JSON
        ("after", pa.string()),  # JSON
    ]
)

# One row per (ambiguous line, candidate intent) of a run: runs/<run_id>/candidates.parquet.
# A person confirms one candidate in `recon review`; the next run matches it (rule manual).
CANDIDATES_SCHEMA = pa.schema(
    [
        ("line_id", pa.string()),
        ("intent_id", pa.string()),
        ("rule", pa.string()),  # the pass that found the candidates: reference | attributes
    ]
)


# One row per suggested pair of a run (runs/<run_id>/suggestions.parquet, view
# recon_suggestions): for an open break without its money or an unexplained line, one of the
# nearest candidates on the other side (rank 1..3, best first; score 0..100, 100 = nothing
# differs) and what differs from a pair the matching passes would confirm ('; '-separated).
SUGGESTIONS_SCHEMA = pa.schema(
    [
        ("break_id", pa.string()),
        ("intent_id", pa.string()),
        ("line_id", pa.string()),
        ("rank", pa.int64()),
        ("score", pa.int64()),
        ("differences", pa.string()),
    ]
)

# One row per intent whose money would fall outside the statements' coverage: a state, not a
# break (runs/<run_id>/awaiting.parquet, view recon_awaiting). `would_be` is the category
# the intent would raise if the statement covering [window_from, window_to) showed no money.
AWAITING_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("intent_id", pa.string()),
        ("intent_type", pa.string()),
        ("intent_status", pa.string()),
        ("direction", pa.string()),  # credit | debit: where the money is expected
        ("expected_cents", pa.int64()),
        ("window_from", TS),
        ("window_to", TS),
        ("would_be", pa.string()),
        ("reason", pa.string()),
        ("reason_code", pa.string()),
        ("reason_params", pa.string()),
    ]
)


# What a run leaves for the next run's history checks (runs/<run_id>/history_state.parquet):
# one row per intent seen in the snapshots it covers (their run ids: the file's metadata key
# HISTORY_STATE_SNAPSHOTS), with the intent's last observation there and its latest step
# backwards along its happy path (regressed_*: null when none). Not a contract file: a run
# folder without it, or one that no longer fits the kept snapshots, only means the next run
# reads every snapshot (recon.catalog).
HISTORY_STATE_SCHEMA = pa.schema(
    [
        ("intent_id", pa.string()),
        ("snapshot_run_id", pa.string()),  # the last observation's snapshot
        ("intent_type", pa.string()),
        ("status", pa.string()),
        ("amount_cents", pa.int64()),
        ("snapshot_at", TS),
        ("regressed_from", pa.string()),
        ("regressed_from_at", TS),
        ("regressed_to", pa.string()),
        ("regressed_at", TS),
    ]
)
HISTORY_STATE_FILE = "history_state.parquet"
HISTORY_STATE_SNAPSHOTS = b"recon.history_state.snapshots"
# the status vocabulary its steps backwards were judged by (history_state_ranks): a state
# made under another (another version's lifecycle) is not folded onto
HISTORY_STATE_RANKS = b"recon.history_state.ranks"


@dataclass(frozen=True)
class Category:
    name: str
    priority: str
    meaning: str


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with exactly `schema`'s columns, cast to its types (a column an older file
    lacks is null): how every reader meets files written before a column was added."""
    columns = [
        table.column(f.name).cast(f.type)
        if f.name in table.column_names
        else pa.nulls(table.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def stake_cents(row: Mapping[str, Any]) -> int:
    """Money at stake in a break (cents): |delta| when amounts differ, else the amount
    concerned (a duplicate credit or an unmatched line has no delta but a whole amount at
    stake). `STAKE_CENTS_SQL` is the same rule over the EXCEPTIONS_SCHEMA columns in SQL."""
    for key in ("delta_cents", "actual_cents", "expected_cents"):
        value = row.get(key)
        if value:
            return abs(int(value))
    return 0


STAKE_CENTS_SQL = (
    "abs(coalesce(nullif(delta_cents, 0), nullif(actual_cents, 0), nullif(expected_cents, 0), 0))"
)

CATEGORIES: dict[str, Category] = {
    c.name: c
    for c in [
        Category(
            "onramp_missing_credit", "P1", N_("onramp at/after fiat_received, no credit matched")
        ),
        Category("onramp_underpaid", "P1", N_("matched credit amount is below the intent's")),
        Category("onramp_overpaid", "P2", N_("matched credit amount is above the intent's")),
        Category(
            "onramp_fee_mismatch",
            "P2",
            N_(
                "a credit on an account with a PSP fee schedule came net of a fee the "
                "schedule does not give"
            ),
        ),
        Category("onramp_duplicate_credit", "P1", N_("more than one credit matched one onramp")),
        Category(
            "onramp_credit_after_expiry",
            "P1",
            N_("credit matched an expired/canceled onramp that was not refunded"),
        ),
        Category(
            "onramp_status_lag",
            "P2",
            N_("credit matched, intent still awaiting_fiat_payment past the grace period"),
        ),
        Category(
            "unmatched_credit",
            "P2",
            N_(
                "a credit (not a fee) that no intent explains; one that does not say PIX (kind `other`) is told so"
            ),
        ),
        Category("offramp_missing_payout", "P1", N_("completed offramp, no debit matched")),
        Category("offramp_payout_amount_mismatch", "P1", N_("matched payout amount differs")),
        Category("offramp_duplicate_payout", "P1", N_("more than one debit matched one offramp")),
        Category(
            "offramp_payout_for_failed_intent",
            "P1",
            N_("payout matched an offramp that is failed/canceled/expired/refunded"),
        ),
        Category(
            "offramp_stuck_paying_out", "P2", N_("paying_out past the grace period with no payout")
        ),
        Category(
            "unmatched_debit",
            "P1",
            N_(
                "a debit (not a fee) that no intent explains; one that does not say PIX (kind `other`) is told so"
            ),
        ),
        Category(
            "offramp_payout_returned",
            "P1",
            N_(
                "a payout came back (devolução from the payee's bank) and the offramp is still "
                "completed"
            ),
        ),
        Category(
            "onramp_credit_returned",
            "P1",
            N_(
                "a credit of an onramp whose tokens were delivered went back to the payer "
                "(devolução, MED or not), in whole or in parts"
            ),
        ),
        Category(
            "statement_balance_gap",
            "P1",
            N_(
                "an account's stated balance is not what the day's lines walk to (a file lacks "
                "a line), or it does not carry across days with no file"
            ),
        ),
        Category(
            "onramp_third_party_payer",
            "P2",
            N_(
                "a credit matched by txid or reference came from a payer whose document "
                "contradicts the party's (someone else paid; the pair stays matched)"
            ),
        ),
        Category("refund_missing", "P1", N_("refunded intent with no refund line")),
        Category(
            "refund_amount_mismatch", "P1", N_("refund line amount differs from what was received")
        ),
        Category(
            "ambiguous_match",
            "P3",
            N_("a heuristic pass found more than one candidate; needs a person"),
        ),
        Category(
            "status_regression", "P3", N_("an intent's status moved backwards between snapshots")
        ),
        Category(
            "intent_vanished", "P2", N_("an id in an earlier snapshot is missing from the latest")
        ),
    ]
}


# What a person reads for each category (the review app, the report, exports, console
# tables): English here, translated by the gettext catalogs (recon.i18n).
CATEGORY_LABELS: dict[str, str] = {
    "onramp_missing_credit": N_("Missing PIX credit"),
    "onramp_underpaid": N_("Underpaid"),
    "onramp_overpaid": N_("Overpaid"),
    "onramp_fee_mismatch": N_("PSP fee off its schedule"),
    "onramp_duplicate_credit": N_("Duplicate credit"),
    "onramp_credit_after_expiry": N_("Credit after expiry"),
    "onramp_status_lag": N_("Paid, status not updated"),
    "unmatched_credit": N_("Unidentified credit"),
    "offramp_missing_payout": N_("Missing payout"),
    "offramp_payout_amount_mismatch": N_("Payout amount differs"),
    "offramp_duplicate_payout": N_("Duplicate payout"),
    "offramp_payout_for_failed_intent": N_("Payout of a failed offramp"),
    "offramp_stuck_paying_out": N_("Payout stuck"),
    "unmatched_debit": N_("Unidentified debit"),
    "offramp_payout_returned": N_("Payout returned"),
    "onramp_credit_returned": N_("Credit returned after delivery"),
    "statement_balance_gap": N_("Balance does not walk"),
    "onramp_third_party_payer": N_("Paid by someone else"),
    "refund_missing": N_("Missing refund"),
    "refund_amount_mismatch": N_("Refund amount differs"),
    "ambiguous_match": N_("Ambiguous match"),
    "status_regression": N_("Status went backwards"),
    "intent_vanished": N_("Intent vanished"),
}


def category_label(name: str, lang: str | None = None) -> str:
    """The category's label in `lang` (default pt-BR); an unknown name is shown as it is."""
    label = CATEGORY_LABELS.get(name)
    return i18n.gettext(label, lang) if label else name


INTENT_STATUSES = (
    "created",
    "requires_compliance",
    "awaiting_fiat_payment",
    "fiat_received",
    "minting",
    "awaiting_onchain_transfer",
    "awaiting_burn_approval",
    "burn_approved",
    "onchain_received",
    "burning",
    "paying_out",
    "completed",
    "expired",
    "canceled",
    "failed",
    "refunded",
)

ONRAMP_LIFECYCLE = (
    "created",
    "requires_compliance",
    "awaiting_fiat_payment",
    "fiat_received",
    "minting",
    "awaiting_onchain_transfer",
    "completed",
)
OFFRAMP_LIFECYCLE = (
    "created",
    "requires_compliance",
    "awaiting_burn_approval",
    "burn_approved",
    "onchain_received",
    "burning",
    "paying_out",
    "completed",
)
TERMINAL_EXITS = ("expired", "canceled", "failed", "refunded")

# Where along each happy path the status says the fiat leg has moved: an onramp's PIX credit
# was received (fiat_received and every stage after it), an offramp's payout was made.
FIAT_MOVED_FROM = {"onramp": "fiat_received", "offramp": "completed"}


def status_vocabulary() -> list[tuple[str, str, int | None, str, bool, bool]]:
    """The status vocabulary as rows, for SQL (which never spells statuses out in lists):
    (intent_type, status, stage_rank, kind, terminal, fiat_moved). stage_rank is the 1-based
    place along the happy path (NULL for an exit); kind is 'stage' or 'exit'; terminal is true
    for completed and the exits; fiat_moved as in FIAT_MOVED_FROM."""
    rows: list[tuple[str, str, int | None, str, bool, bool]] = []
    for intent_type, stages in (("onramp", ONRAMP_LIFECYCLE), ("offramp", OFFRAMP_LIFECYCLE)):
        moved_from = stages.index(FIAT_MOVED_FROM[intent_type])
        for i, status in enumerate(stages):
            rows.append(
                (intent_type, status, i + 1, "stage", i == len(stages) - 1, i >= moved_from)
            )
        rows += [(intent_type, status, None, "exit", True, False) for status in TERMINAL_EXITS]
    return rows


def history_state_ranks() -> str:
    """The status vocabulary the history checks rank statuses by (int_history_regressions
    derives each status's place from it), as JSON text: a history state records it, and one
    made under another vocabulary is not folded onto."""
    return json.dumps(status_vocabulary())
