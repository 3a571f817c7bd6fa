"""The rules of the exception desk, in one place: who may do what to a break, and how.

Every door calls these functions: the review app (`recon review`), the CLI (`recon resolve`,
`recon pair`, `recon unpair`) and the Python API (`recon.reconciliation.resolve`,
`recon.pair`). Each action takes the data dir's lock (`audit.locked`), reads the review state
afresh from the files under it (`State.read`), checks the action against that state and
appends the change with its audit entry before it lets go. Two app processes and a CLI call
therefore never both resolve one break, nor both approve one request.

Roles, lowest first: viewer (reads), reviewer (assigns, comments, resolves, reopens, pairs),
approver (also resolves a P1 and approves). `NEEDS` says which role each action needs. The
CLI and the Python API act as the OS user (or `--by NAME`) with the approver role: whoever can
write the data dir can do every action by hand anyway; four-eyes binds them all the same.

Four-eyes (`[review] four_eyes_p1 = true` in recon.toml, or `recon review --four-eyes`):
resolving a P1 break records a request (`request_approval` in the audit log) and leaves the
break open; an approver other than the one who asked approves it, which resolves it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from recon.config import DataDir, load_config
from recon.errors import ConfigError, NotAllowed, UsageError
from recon.reconciliation import audit
from recon.reconciliation.decisions import (
    Decision,
    append_decision,
    check_break_id,
    current_user,
    load_history,
)
from recon.reconciliation.manual import ManualMatch, append_match, load_manual_matches

__all__ = [
    "LACKS_MONEY",
    "NEEDS",
    "PAIRS_WITH",
    "REFUND_KIND",
    "ROLES",
    "UNEXPLAINED",
    "Actor",
    "NotAllowed",
    "Pairing",
    "Policy",
    "Request",
    "State",
    "approve",
    "assign",
    "candidate_ids",
    "comment",
    "confirm",
    "four_eyes_warning",
    "latest_break",
    "pair",
    "pair_break",
    "pairing_of",
    "reopen",
    "resolve",
    "unpair",
]

ROLES = ("viewer", "reviewer", "approver")
NEEDS = {
    "assign": "reviewer",
    "comment": "reviewer",
    "resolve": "reviewer",
    "reopen": "reviewer",
    "confirm": "reviewer",
    "pair": "reviewer",
    "unpair": "reviewer",
    "approve": "approver",
}
MAX_NOTE = 2000

Data = str | os.PathLike[str] | DataDir | None


@dataclass(frozen=True)
class Actor:
    """Who acts, and with which role."""

    name: str
    role: str = "approver"

    def can(self, need: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(need)

    def same_person(self, other: str | None) -> bool:
        """Names compared without case: `Ana` may not approve what `ana` asked for."""
        return (other or "").casefold() == self.name.casefold()


def _begin(data: Data, actor: Actor | None, by: str | None, action: str) -> tuple[DataDir, Actor]:
    """The data directory and the person acting (`actor`, else `by` as an approver), once
    their role may take `action`."""
    dd = DataDir.resolve(data) if not isinstance(data, DataDir) else data
    who = actor if actor is not None else Actor((by or "").strip() or current_user(), "approver")
    permit(who, action)
    return dd, who


@dataclass(frozen=True)
class Policy:
    """The desk's settings: `[review] four_eyes_p1` of recon.toml."""

    four_eyes_p1: bool = False

    @classmethod
    def load(cls, data: DataDir, config: str | None = None) -> Policy:
        section = load_config(config, data).get("review", {})
        if not isinstance(section, dict):
            raise ConfigError("recon.toml: [review] must be a table")
        four = section.get("four_eyes_p1", False)
        if not isinstance(four, bool):
            raise ConfigError("recon.toml [review] four_eyes_p1 must be true or false")
        return cls(four)


def four_eyes_warning(policy: Policy, approvers: int) -> str:
    """What start-up says when four-eyes is on but nobody could approve a request ('' if ok)."""
    if not policy.four_eyes_p1 or approvers >= 2:
        return ""
    return (
        f"four-eyes is on but only {approvers} approver(s) exist: a P1 resolution needs a "
        "second, different approver, so requests will wait forever. Add one with "
        "`recon review adduser NAME --role approver`."
    )


@dataclass(frozen=True)
class Request:
    """A P1 resolution waiting for a second approver (four-eyes)."""

    break_id: str
    note: str
    requested_by: str
    requested_at: str


@dataclass
class State:
    """The review state replayed from the audit log (verified first) and the decisions file."""

    history: dict[str, list[Decision]] = field(default_factory=dict)
    assignee: dict[str, str] = field(default_factory=dict)
    comments: dict[str, int] = field(default_factory=dict)
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)  # request_approval entries
    decided: dict[str, Decision] = field(default_factory=dict)  # last decision is a resolve
    manual: dict[str, str] = field(default_factory=dict)  # line_id -> intent_id, in force
    entries: list[dict[str, Any]] = field(default_factory=list)  # the audit log, verified
    approved: set[str] = field(default_factory=set)  # resolved through a four-eyes approval
    last_comment: dict[str, str] = field(default_factory=dict)  # break_id -> its last comment

    @classmethod
    def read(cls, data: DataDir) -> State:
        history = load_history(data)
        st = cls(
            history=history,
            decided={b: rows[-1] for b, rows in history.items() if rows[-1].action == "resolve"},
            manual={m.line_id: m.intent_id for m in load_manual_matches(data)},
        )
        st.entries = audit.read_verified(data)  # AuditBroken: nothing acts on a broken log
        for entry in st.entries:
            bid, action = entry.get("break_id", ""), entry.get("action")
            if action == "assign":
                st.assignee[bid] = str(entry.get("after", {}).get("assignee") or "")
            elif action == "comment":
                st.comments[bid] = st.comments.get(bid, 0) + 1
                st.last_comment[bid] = str(entry.get("note") or "")
            elif action == "request_approval":
                st.pending[bid] = entry
            elif action in ("approve", "resolve", "reopen"):
                st.pending.pop(bid, None)
                if action == "approve":
                    st.approved.add(bid)
                elif action == "reopen":
                    st.approved.discard(bid)
        return st


def latest_break(data: DataDir, break_id: str) -> dict[str, Any] | None:
    """The break's row in the latest run's exceptions (None when it is not open there)."""
    import pyarrow.parquet as pq

    from recon.catalog import latest_run

    run = latest_run(data)
    if run is None:
        raise UsageError("no reconciliation run yet: run `recon reconcile` first")
    rows = pq.read_table(
        run / "exceptions.parquet", filters=[("break_id", "=", break_id)]
    ).to_pylist()
    return rows[0] if rows else None


def note_text(note: str, *, required: bool = True) -> str:
    """The note on one line; a required one must say something, and none may be too long."""
    text = " ".join((note or "").split())
    if required and not text:
        raise UsageError("write a note saying what was done or why")
    if len(text) > MAX_NOTE:
        raise UsageError(f"the note is longer than {MAX_NOTE} characters")
    return text


def permit(actor: Actor, action: str) -> None:
    """NotAllowed unless the actor's role may do `action`."""
    need = NEEDS[action]
    if not actor.can(need):
        raise NotAllowed(f"your role ({actor.role}) cannot {action}; a {need} can")


def _at(now: datetime | None) -> datetime:
    return (now or datetime.now(UTC)).astimezone(UTC)


def resolve(
    break_id: str,
    note: str,
    *,
    data: Data = None,
    decided_by: str | None = None,
    actor: Actor | None = None,
    policy: Policy | None = None,
    now: datetime | None = None,
    check_exists: bool = True,
) -> Decision | Request:
    """Resolve a break, or with four-eyes on a P1, ask for the resolution (a `Request`).

    The break must be open in the latest run (unless `check_exists` is false) and not
    resolved already (reopen it first; a further word is a comment). A P1 needs an approver
    when four-eyes is off; with four-eyes on it needs a second approver's `approve`.
    """
    dd, who = _begin(data, actor, decided_by, "resolve")
    break_id, note = check_break_id(break_id), note_text(note)
    policy = policy or Policy.load(dd)
    at = _at(now)
    with audit.locked(dd) as log:
        st = State.read(dd)
        done = st.decided.get(break_id)
        if done is not None:
            raise UsageError(
                f"break {break_id} is already resolved (by {done.decided_by}, "
                f"{done.decided_at}): reopen it first, or add a comment"
            )
        row = latest_break(dd, break_id) if check_exists else None
        if check_exists and row is None:
            raise UsageError(f"break {break_id} is not in the latest run (its open breaks)")
        if row is not None and row.get("priority") == "P1":
            if policy.four_eyes_p1:
                return _request(log, st, who, break_id, note, at)
            if not who.can("approver"):
                raise NotAllowed("resolving a P1 break needs the approver role")
        return append_decision(dd, log, Decision(break_id, note, who.name, _iso(at)), False)


def _request(
    log: audit.AuditWriter, st: State, who: Actor, break_id: str, note: str, at: datetime
) -> Request:
    waiting = st.pending.get(break_id)
    if waiting is not None:
        raise UsageError(
            f"a resolution by {waiting.get('by')} already waits for approval (four-eyes)"
        )
    log.append(
        by=who.name, action="request_approval", break_id=break_id,
        before={"decision": "open"}, after={"decision": "awaiting approval"}, note=note, at=at,
    )  # fmt: skip
    return Request(break_id, note, who.name, _iso(at))


def approve(
    break_id: str,
    note: str = "",
    *,
    data: Data = None,
    decided_by: str | None = None,
    actor: Actor | None = None,
    now: datetime | None = None,
) -> Decision:
    """A second approver approves the waiting request: the break is resolved."""
    dd, who = _begin(data, actor, decided_by, "approve")
    break_id, extra = check_break_id(break_id), note_text(note, required=False)
    at = _at(now)
    with audit.locked(dd) as log:
        pending = State.read(dd).pending.get(break_id)
        if pending is None:
            raise UsageError("no resolution of this break waits for approval")
        asked = str(pending.get("by") or "")
        if who.same_person(asked):
            raise UsageError("a different approver must approve (four-eyes): you asked for it")
        log.append(
            by=who.name, action="approve", break_id=break_id,
            before={"decision": "awaiting approval", "requested_by": asked},
            after={"decision": "resolved"}, note=extra, at=at,
        )  # fmt: skip
        text = f"{pending.get('note', '')} (requested by {asked}, approved by {who.name})"
        text += f"; {extra}" if extra else ""
        return append_decision(dd, log, Decision(break_id, text, who.name, _iso(at)), False)


def reopen(
    break_id: str,
    note: str,
    *,
    data: Data = None,
    decided_by: str | None = None,
    actor: Actor | None = None,
    now: datetime | None = None,
) -> Decision:
    """Reopen a resolved break: the next run lists it as open again. Its notes stay."""
    dd, who = _begin(data, actor, decided_by, "reopen")
    break_id, note = check_break_id(break_id), note_text(note)
    at = _at(now)
    with audit.locked(dd) as log:
        if break_id not in State.read(dd).decided:
            raise UsageError(f"break {break_id} is not resolved: nothing to reopen")
        decision = Decision(break_id, note, who.name, _iso(at), "reopen")
        return append_decision(dd, log, decision, True)


def comment(
    break_id: str, note: str, *, data: Data = None, actor: Actor | None = None
) -> dict[str, Any]:
    """Add a comment to a break (its audit entry)."""
    dd, who = _begin(data, actor, None, "comment")
    break_id, note = check_break_id(break_id), note_text(note)
    with audit.locked(dd) as log:
        return log.append(by=who.name, action="comment", break_id=break_id, note=note)


def assign(
    break_id: str,
    assignee: str,
    note: str = "",
    *,
    data: Data = None,
    actor: Actor | None = None,
) -> dict[str, Any]:
    """Assign a break to someone ('' unassigns); assigning it to whom it has is refused."""
    dd, who = _begin(data, actor, None, "assign")
    break_id, note = check_break_id(break_id), note_text(note, required=False)
    with audit.locked(dd) as log:
        now = State.read(dd).assignee.get(break_id, "")
        if assignee == now:
            raise UsageError(
                f"the break is already {'assigned to ' + now if now else 'unassigned'}"
            )
        return log.append(
            by=who.name, action="assign", break_id=break_id,
            before={"assignee": now or None}, after={"assignee": assignee or None}, note=note,
        )  # fmt: skip


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="seconds")


# ---------------------------------------------------------------------------- manual matches

# what each intent type's money is on the statement, and the devolução an onramp is owed
# when it is refunded (05_int_match_manual.sql matches these)
PAYMENT_KIND = {"onramp": "pix_in", "offramp": "pix_out"}
REFUND_KIND = {"onramp": "pix_refund_out"}
_KIND_WORDS = {
    "pix_in": "a PIX credit",
    "pix_out": "a PIX debit",
    "pix_refund_out": "a devolução sent (PIX refund)",
}
# the break a difference between the lines and the intent leaves, by intent type (and a
# devolução's): the rest stays visible as one of these on the next run
_REST = {
    ("onramp", False, -1): "onramp_underpaid",
    ("onramp", False, 1): "onramp_overpaid",
    ("offramp", False, -1): "offramp_payout_amount_mismatch",
    ("offramp", False, 1): "offramp_payout_amount_mismatch",
    ("onramp", True, -1): "refund_amount_mismatch",
    ("onramp", True, 1): "refund_amount_mismatch",
}


def confirm(
    break_id: str,
    intent_id: str,
    note: str = "",
    *,
    data: Data = None,
    actor: Actor | None = None,
    now: datetime | None = None,
) -> ManualMatch:
    """Confirm one candidate of an ambiguous match: the next run matches it (rule manual)."""
    dd, who = _begin(data, actor, None, "confirm")
    break_id, note = check_break_id(break_id), note_text(note, required=False)
    intent_id = intent_id.strip()
    if not intent_id:
        raise UsageError("choose one of the candidates")
    row = latest_break(dd, break_id)
    if row is None or row.get("category") != "ambiguous_match":
        raise UsageError("only an ambiguous match open in the latest run has candidates")
    line_id = str(row["line_id"])
    if intent_id not in candidate_ids(dd, line_id):
        raise UsageError(f"{intent_id!r} is not one of this line's candidates")
    with audit.locked(dd) as log:
        if State.read(dd).manual.get(line_id) == intent_id:
            raise UsageError("that candidate is already confirmed")
        match = ManualMatch(intent_id, line_id, break_id, who.name, _iso(_at(now)), note)
        return append_match(dd, log, match)


def candidate_ids(data: DataDir, line_id: str) -> set[str]:
    """The intents the latest run found fitting an ambiguous line equally well."""
    import pyarrow.parquet as pq

    from recon.catalog import latest_run

    run = latest_run(data)
    path = run / "candidates.parquet" if run is not None else None
    if path is None or not path.is_file():
        return set()
    table = pq.read_table(path, columns=["intent_id"], filters=[("line_id", "=", line_id)])
    return {str(v) for v in table.column(0).to_pylist()}


@dataclass(frozen=True)
class Pairing:
    """A pair made by hand: the intent, its lines (several: a payment in parts), and what the
    lines carry against what the intent expects (`refund`: the lines are its devolução)."""

    intent_id: str
    line_ids: tuple[str, ...]
    expected_cents: int
    paired_cents: int
    matches: tuple[ManualMatch, ...]
    intent_type: str = "onramp"
    refund: bool = False
    line_cents: tuple[int, ...] = ()  # each line's amount, in line_ids' order

    @property
    def difference_cents(self) -> int:
        """paired - expected: negative when the lines carry less than the intent."""
        return self.paired_cents - self.expected_cents

    @property
    def rest_category(self) -> str:
        """The break the difference stays on the next run ('' when the amounts agree)."""
        if not self.difference_cents:
            return ""
        sign = 1 if self.difference_cents > 0 else -1
        return _REST[(self.intent_type, self.refund, sign)]


def pair(
    intent_id: str,
    line_ids: list[str] | tuple[str, ...] | str,
    note: str,
    *,
    data: Data = None,
    by: str | None = None,
    actor: Actor | None = None,
    break_id: str | None = None,
    now: datetime | None = None,
) -> Pairing:
    """Pair statement line(s) by hand with an intent whose money no pass matched.

    The intent must lack its money in the latest run (a refunded onramp: its devolução), and
    each line must be unexplained (not matched by any pass, nor paired already), on one of
    the service's accounts (all on the same one), and go the intent's way (an onramp's money is
    a PIX credit and its devolução a refund sent, an offramp's a PIX debit). Anything else is a
    UsageError saying what, and nothing is written. Several lines are one payment in parts:
    the next run matches each with `rule = manual` and compares their sum with the intent; a
    difference stays a break of its kind (`Pairing.rest_category`), and the note must say why.
    """
    dd, who = _begin(data, actor, by, "pair")
    lines = tuple(dict.fromkeys([line_ids] if isinstance(line_ids, str) else line_ids))
    note, intent_id = note_text(note), intent_id.strip()
    if not intent_id or not lines or not all(x.strip() for x in lines):
        raise UsageError("a pair needs an intent id and at least one statement line id")
    facts = _pair_facts(dd, intent_id, lines)
    at = _at(now)
    with audit.locked(dd) as log:
        in_force = State.read(dd).manual
        for line_id in lines:
            if line_id in in_force:
                raise UsageError(
                    f"statement line {line_id} is already paired with intent {in_force[line_id]}:"
                    " unpair it first (recon unpair)"
                )
        if _paired_lines(dd, intent_id, facts.kind, in_force):
            raise UsageError(f"intent {intent_id} is already paired by hand: unpair it first")
        bid = break_id or facts.break_id
        made = tuple(
            append_match(dd, log, ManualMatch(intent_id, x, bid, who.name, _iso(at), note, "pair"))
            for x in lines
        )
    return Pairing(
        intent_id, lines, facts.expected, sum(facts.line_cents), made, facts.intent_type,
        facts.refund, facts.line_cents,
    )  # fmt: skip


# the breaks a pair by hand starts from: an intent that lacks its money (paired with lines),
# and a line nobody explains (paired with an intent)
LACKS_MONEY = ("onramp_missing_credit", "offramp_missing_payout", "refund_missing")
UNEXPLAINED = ("unmatched_credit", "unmatched_debit")
PAIRS_WITH = {
    "onramp_missing_credit": ("unmatched_credit",),
    "offramp_missing_payout": ("unmatched_debit",),
    "refund_missing": ("unmatched_debit",),
    "unmatched_credit": ("onramp_missing_credit",),
    "unmatched_debit": ("offramp_missing_payout", "refund_missing"),
}


def pair_break(
    break_id: str,
    *,
    line_ids: list[str] | tuple[str, ...] = (),
    intent_id: str = "",
    note: str,
    data: Data = None,
    actor: Actor | None = None,
) -> Pairing:
    """Pair from a break: statement line(s) for an intent that lacks its money (a missing
    credit, payout or devolução), or the intent of a line nobody explains (what
    `POST /breaks/<break_id>/pair` does)."""
    dd, who = _begin(data, actor, None, "pair")
    break_id = check_break_id(break_id)
    lines = [x.strip() for x in line_ids if x.strip()]
    if bool(lines) == bool(intent_id.strip()):
        raise UsageError("choose the statement line(s) or the intent to pair with (one side)")
    row = latest_break(dd, break_id)
    if row is None:
        raise UsageError(f"break {break_id} is not in the latest run (its open breaks)")
    category = str(row["category"])
    if lines:
        if category not in LACKS_MONEY:
            raise UsageError(
                f"a {category} break has no intent waiting for money: statement lines pair "
                f"with {' or '.join(LACKS_MONEY)}"
            )
        return pair(str(row["intent_id"]), lines, note, data=dd, actor=who, break_id=break_id)
    if category not in UNEXPLAINED:
        raise UsageError(
            f"a {category} break has no unexplained line: an intent pairs with "
            f"{' or '.join(UNEXPLAINED)}"
        )
    return pair(intent_id, [str(row["line_id"])], note, data=dd, actor=who, break_id=break_id)


def unpair(
    line_id: str,
    note: str,
    *,
    data: Data = None,
    by: str | None = None,
    actor: Actor | None = None,
    now: datetime | None = None,
) -> tuple[ManualMatch, ...]:
    """Undo the manual match of `line_id`, and with it every other line paired by hand with
    the same intent in the same pair (a payment in parts goes whole): the next run matches
    the lines as the passes would. Returns the `unpair` rows written, `line_id`'s first."""
    dd, who = _begin(data, actor, by, "unpair")
    note, line_id = note_text(note), line_id.strip()
    at = _iso(_at(now))
    with audit.locked(dd) as log:
        current = {m.line_id: m for m in load_manual_matches(dd)}
        match = current.get(line_id)
        if match is None:
            raise UsageError(f"statement line {line_id} is not matched by hand: nothing to undo")
        together = [match] + [
            m
            for m in current.values()
            if m.action == "pair" == match.action
            and m.intent_id == match.intent_id
            and m.line_id != line_id
            and m.confirmed_at == match.confirmed_at
        ]
        undo = [
            ManualMatch(m.intent_id, m.line_id, m.break_id, who.name, at, note, "unpair")
            for m in together
        ]
        return tuple(append_match(dd, log, m) for m in undo)


def pairing_of(data: DataDir, line_id: str = "", intent_id: str = "") -> Pairing | None:
    """The pair made by hand in force for a line or an intent (all its lines, what they carry
    against what the intent expects), as the catalog has them now; None if there is none."""
    pairs = [m for m in load_manual_matches(data) if m.action == "pair"]
    first = next(
        (m for m in pairs if (line_id and m.line_id == line_id) or m.intent_id == intent_id),
        None,
    )
    if first is None:
        return None
    group = tuple(
        m for m in pairs if m.intent_id == first.intent_id and m.confirmed_at == first.confirmed_at
    )
    from recon.catalog import connect

    con = connect(data)
    try:
        lines = _line_rows(con, tuple(m.line_id for m in group))
        intent = con.execute(
            "SELECT intent_type, status, amount_cents FROM intents WHERE id = ?", [first.intent_id]
        ).fetchone()
    finally:
        con.close()
    if intent is None or len(lines) != len(group):
        return None  # the catalog no longer has them: the next run leaves the pair out
    refund = next(iter(lines.values()))[0] == REFUND_KIND.get(str(intent[0]))
    expected = _expected(data, first.intent_id, str(intent[0]), int(intent[2]), refund)
    cents = tuple(abs(int(r[2])) for r in lines.values())
    ids = tuple(m.line_id for m in group)
    return Pairing(first.intent_id, ids, expected, sum(cents), group, str(intent[0]), refund, cents)


@dataclass(frozen=True)
class _PairFacts:
    expected: int
    line_cents: tuple[int, ...]
    break_id: str
    intent_type: str
    kind: str
    refund: bool


def _pair_facts(data: DataDir, intent_id: str, lines: tuple[str, ...]) -> _PairFacts:
    """Check the pair against the catalog and the latest run; what it is worth."""
    from recon.catalog import connect, latest_run
    from recon.reconciliation.settings import ReconcileSettings

    run = latest_run(data)
    if run is None:
        raise UsageError("no reconciliation run yet: run `recon reconcile` first")
    accounts = ReconcileSettings.load(data).accounts
    con = connect(data)
    try:
        intent = con.execute(
            "SELECT intent_type, status, amount_cents FROM intents WHERE id = ?", [intent_id]
        ).fetchone()
        if intent is None:
            raise UsageError(f"no intent {intent_id} in the catalog")
        itype, status = str(intent[0]), str(intent[1])
        if itype not in PAYMENT_KIND:
            raise UsageError(f"intent {intent_id} is a {itype}: only onramps and offramps pair")
        rows = _line_rows(con, lines)
        kind = _pair_kind(intent_id, itype, status, rows)
        _check_accounts(rows, accounts)
        for line_id in lines:
            _check_free(con, line_id)
        matched = con.execute(
            "SELECT line_id, rule FROM read_parquet(?) WHERE intent_id = ? AND line_kind = ?",
            [str(run / "matches.parquet"), intent_id, kind],
        ).fetchone()
        if matched is not None:
            what = "its devolução" if kind != PAYMENT_KIND[itype] else "its money"
            raise UsageError(
                f"intent {intent_id} already has {what}: line {matched[0]} matched it "
                f"(rule {matched[1]}) in the latest run"
            )
        found = con.execute(
            "SELECT break_id FROM read_parquet(?) WHERE intent_id = ? OR line_id IN "
            "(SELECT unnest(?)) ORDER BY intent_id IS NULL, break_id LIMIT 1",
            [str(run / "exceptions.parquet"), intent_id, list(lines)],
        ).fetchone()
    finally:
        con.close()
    refund = kind != PAYMENT_KIND[itype]
    expected = _expected(data, intent_id, itype, int(intent[2]), refund)
    cents = tuple(abs(int(r[2])) for r in rows.values())
    return _PairFacts(expected, cents, str(found[0]) if found else "", itype, kind, refund)


def _line_rows(con: Any, lines: tuple[str, ...]) -> dict[str, tuple[Any, ...]]:
    """line_id -> (kind, account, amount_cents) of each line, in the order given; a
    UsageError naming the first line the catalog does not have."""
    found = {
        str(r[0]): tuple(r[1:])
        for r in con.execute(
            "SELECT line_id, kind, account, amount_cents FROM statement_lines "
            "WHERE line_id IN (SELECT unnest(?))",
            [list(lines)],
        ).fetchall()
    }
    for line_id in lines:
        if line_id not in found:
            raise UsageError(f"no statement line {line_id} in the catalog")
    return {line_id: found[line_id] for line_id in lines}


def _pair_kind(intent_id: str, itype: str, status: str, rows: dict[str, tuple[Any, ...]]) -> str:
    """The one kind of the lines, once it is the intent's payment or (a refunded onramp)
    its devolução."""
    payment, refund = PAYMENT_KIND[itype], REFUND_KIND.get(itype)
    for line_id, (kind, _account, _cents) in rows.items():
        if kind not in (payment, refund):
            owed = _KIND_WORDS[payment] + (f" (or {_KIND_WORDS[refund]})" if refund else "")
            raise UsageError(
                f"statement line {line_id} is a {kind}, the wrong way for {itype} "
                f"{intent_id}: its money is {owed}"
            )
    kinds = {r[0] for r in rows.values()}
    if len(kinds) > 1:
        raise UsageError(
            "the lines are a payment and a devolução: pair each with the intent on its own"
        )
    kind = str(kinds.pop())
    if kind == refund and status != "refunded":
        raise UsageError(
            f"{itype} {intent_id} is {status}, not refunded: a devolução pairs only with a "
            "refunded onramp"
        )
    return kind


def _check_accounts(rows: dict[str, tuple[Any, ...]], accounts: tuple[str, ...]) -> None:
    """Every line on one of the service's accounts, and all of them on the same one."""
    for line_id, (_kind, account, _cents) in rows.items():
        if accounts and account not in accounts:
            raise UsageError(
                f"statement line {line_id} is on account {account}, not one of the service's "
                f"accounts ({', '.join(accounts)})"
            )
    used = sorted({str(r[1]) for r in rows.values()})
    if len(used) > 1:
        raise UsageError(
            f"the lines are on different accounts ({', '.join(used)}): an intent's money is "
            "on one account, so pair the lines of one account"
        )


def _check_free(con: Any, line_id: str) -> None:
    """A UsageError when a pass of the latest run matched the line."""
    matched = con.execute(
        "SELECT intent_id, rule FROM recon_matches WHERE line_id = ?", [line_id]
    ).fetchone()
    if matched is not None:
        raise UsageError(
            f"statement line {line_id} is already matched to intent {matched[0]} "
            f"(rule {matched[1]}): unpair or reopen that first"
        )


def _expected(data: DataDir, intent_id: str, itype: str, amount: int, refund: bool) -> int:
    """What the lines should carry: the intent's amount, or for its devolução what its
    payment lines carried in the latest run (the intent's amount when none matched)."""
    if not refund:
        return amount
    import duckdb

    from recon.catalog import latest_run

    run = latest_run(data)
    if run is None:
        return amount
    con = duckdb.connect()
    try:
        [(received,)] = con.execute(
            "SELECT sum(actual_cents) FROM read_parquet(?) WHERE intent_id = ? AND line_kind = ?",
            [str(run / "matches.parquet"), intent_id, PAYMENT_KIND[itype]],
        ).fetchall()
    finally:
        con.close()
    return int(received) if received is not None else amount


def _paired_lines(data: DataDir, intent_id: str, kind: str, in_force: dict[str, str]) -> list[str]:
    """The lines of `kind` already paired by hand with the intent (in force)."""
    taken = [line for line, intent in in_force.items() if intent == intent_id]
    if not taken:
        return []
    from recon.catalog import connect

    con = connect(data)
    try:
        rows = con.execute(
            "SELECT line_id FROM statement_lines WHERE line_id IN (SELECT unnest(?)) AND kind = ?",
            [taken, kind],
        ).fetchall()
    finally:
        con.close()
    return [str(r[0]) for r in rows]
