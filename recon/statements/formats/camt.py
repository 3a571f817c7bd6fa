"""ISO 20022 bank-to-customer statements: camt.053 (statement), camt.054 (debit/credit
notification) and camt.052 (account report), versions 001.02 to 001.13.

Structure read (names as the standard writes them): `Document/BkToCstmrStmt/Stmt`
(`BkToCstmrDbtCdtNtfctn/Ntfctn`, `BkToCstmrAcctRpt/Rpt`) with `Acct/Id` (IBAN or Othr/Id)
and `Acct/Ccy`, `FrToDt/FrDtTm`-`ToDtTm`, `Bal` (Tp/CdOrPrtry/Cd, Amt@Ccy, CdtDbtInd,
Dt/Dt|DtTm) and `Ntry`:

- `Amt@Ccy` (unsigned decimal), `CdtDbtInd` CRDT | DBIT: the sign; `RvslInd` true marks a
  reversal (the money still moves as CdtDbtInd says): a reversal of a PIX (a BACEN-shaped
  EndToEndId or return id, PIX in its texts or its bank transaction code, an E… id it names)
  is a devolução, `pix_refund_in/out`; any other reversal (a card, a direct debit, a wire
  returned) keeps its kind, with ESTORNO before its description;
- `Sts` (`BOOK`, or `<Sts><Cd>BOOK</Cd></Sts>` from 001.08): only booked entries are money;
  PDNG (pending), INFO and FUTR are counted in the checks, never lines; an entry without a
  status is an error (booked or not cannot be guessed);
- `BookgDt` (`Dt` or `DtTm`; `ValDt` when the bank leaves it out): a date is the start of
  that day in America/Sao_Paulo, a time without an offset is Sao Paulo time (as for OFX);
- `NtryDtls/TxDtls` (several NtryDtls each with TxDtls, or several TxDtls in one): one line
  per transaction of a batch entry when every TxDtls carries its amount (`Amt`, or
  `AmtDtls/TxAmt/Amt`), each in the account's currency (the entry's when the account states
  none), and they add up to the entry's (else an error naming the currencies and both sums as
  the file writes them); without amounts the batch stays one line (a warning);
- per transaction: `Refs/EndToEndId` is the PIX end-to-end id (or a devolução's rtrId) when
  it has BACEN's shape, `Refs/AcctSvcrRef` (else the entry's `AcctSvcrRef`, else `NtryRef`,
  else a non-PIX EndToEndId) the bank_reference, `RmtInf/Strd/CdtrRefInf/Ref` the txid,
  `RltdPties` the counterparty (the debtor of a credit, the creditor of a debit; `Nm` or
  `Pty/Nm`, document from `Id/PrvtId|OrgId/Othr/Id`), `CdtrAcct/Prxy/Id` the PIX key paid,
  `RmtInf/Ustrd`, `AddtlTxInf` and `AddtlNtryInf` the description; `BkTxCd` family or
  sub-family CHRG/FEES/COMM makes a fee, INTR interest, DVCA (a cash dividend) a yield.

Checks: opening booked balance (OPBD, else PRCD) + booked entries = closing booked balance
(CLBD) for each statement that states both; a mismatch is an error naming the file, the
line of the closing balance and the field (a warning when lines were quarantined). The
dated OPBD, PRCD and CLBD are also kept for the balance walk (`_WALKED`). Every
amount of an account must be in the account's currency; a currency other than BRL is read
as it is and reported as a warning.

XML from outside is parsed by lxml with entity resolution, DTD loading and network access
off, and a document that declares a DTD at all is refused: no entity can be expanded.
`source_line` is the line of the entry's `<Ntry>` tag.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from lxml import etree

from recon.errors import StatementError, StatementParseError
from recon.money import AmountError, format_cents, parse_plain_cents
from recon.statements.lines import (
    BUSINESS_TZ,
    E2E_FULL,
    Bad,
    Balance,
    Coverage,
    LineError,
    ParseResult,
    business_day,
    classify,
    clean,
    currency_warning,
    days_coverage,
    iso_to_us,
)

_NAMESPACE = re.compile(r"urn:iso:std:iso:20022:tech:xsd:camt\.05([234])\.001\.(\d{2})")
CONTAINERS = frozenset({"Stmt", "Ntfctn", "Rpt"})
BOOKED = "BOOK"
NOT_MONEY = frozenset({"PDNG", "INFO", "FUTR"})
# ISO 20022 bank transaction codes (family or sub-family) that say a line is the bank's own:
# charges, fees, commission; interest; a cash dividend
_CODE_KINDS = {"CHRG": "fee", "FEES": "fee", "COMM": "fee", "INTR": "interest", "DVCA": "yield"}
_NO_REF = frozenset({"NOTPROVIDED", "NONREF", "NONE", "N/A"})


_LOCAL: dict[Any, str] = {}


def _local(tag: Any) -> str:
    """The local name of a tag ("{ns}Amt" -> "Amt"); "" for comments and PIs."""
    name = _LOCAL.get(tag)
    if name is None:
        name = tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
        if len(_LOCAL) < 10_000:
            _LOCAL[tag] = name
    return name


def _children(el: Any) -> dict[str, Any]:
    """Direct children by local name (the first of each name)."""
    out: dict[str, Any] = {}
    local = _LOCAL
    for child in el:
        tag = child.tag
        name = local.get(tag) or _local(tag)
        if name and name not in out:
            out[name] = child
    return out


def _all(el: Any, name: str) -> list[Any]:
    return [c for c in el if _local(c.tag) == name]


def _text(el: Any) -> str | None:
    if el is None:
        return None
    text = el.text
    if text is None:
        return None
    if text.isalnum():  # the usual code or id: nothing to clean
        return text
    return clean(text)


def _path(el: Any, *names: str) -> Any:
    for name in names:
        if el is None:
            return None
        el = next((c for c in el if _local(c.tag) == name), None)
    return el


def _amount(el: Any, field: str) -> tuple[int, str | None]:
    """(cents >= 0, currency) of an `Amt Ccy="..."` element."""
    text = _text(el)
    if text is None:
        raise LineError(field, "missing")
    try:
        cents = parse_plain_cents(text)
    except AmountError as exc:
        raise LineError(field, str(exc)) from exc
    if cents < 0:
        raise LineError(field, f"ISO 20022 amounts are unsigned, got {text[:40]!r}")
    return cents, el.get("Ccy")


def _sign(el: Any, field: str = "CdtDbtInd") -> int:
    if el is None:
        raise LineError(field, "missing: credit or debit cannot be told")
    text = _text(el)
    if text == "CRDT":
        return 1
    if text == "DBIT":
        return -1
    if text is None:
        raise LineError(field, "empty: must be CRDT or DBIT")
    raise LineError(field, f"must be CRDT or DBIT, got {text[:20]!r}")


def _when(el: Any, field: str) -> str | None:
    """`Dt` (a day: its start in Sao Paulo) or `DtTm` of a date choice, as ISO text."""
    if el is None:
        return None
    parts = _children(el)
    if "DtTm" in parts:
        text = _text(parts["DtTm"]) or ""
        try:
            aware = datetime.fromisoformat(text).tzinfo is not None
        except ValueError as exc:
            raise LineError(f"{field}/DtTm", f"not an ISO 8601 time: {text[:40]!r}") from exc
        return text if aware else _with_local_offset(text)
    if "Dt" in parts:
        text = _text(parts["Dt"]) or ""
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text[:10]):
            raise LineError(f"{field}/Dt", f"not a date: {text[:40]!r}")
        return _with_local_offset(text[:10] + "T00:00:00")
    raise LineError(field, "neither Dt nor DtTm")


def _with_local_offset(naive: str) -> str:
    try:
        dt = datetime.fromisoformat(naive).replace(tzinfo=BUSINESS_TZ)
    except ValueError as exc:
        raise LineError("Dt", f"not a date: {naive[:40]!r}") from exc
    return dt.isoformat()


def _status(entry: dict[str, Any]) -> str:
    sts = entry.get("Sts")
    if sts is None:
        raise LineError("Sts", "missing: booked or pending cannot be told")
    code = _text(_path(sts, "Cd")) or _text(_path(sts, "Prtry")) or _text(sts)
    if not code:
        raise LineError("Sts", "empty")
    return code.upper()


def _party(details: dict[str, Any], role: str) -> tuple[str | None, str | None]:
    """(name, document) of RltdPties/<role> (Dbtr or Cdtr), 001.02-07 and 001.08+ shapes."""
    party = _path(details.get("RltdPties"), role)
    if party is None:
        return None, None
    inner = _path(party, "Pty")
    if inner is not None:
        party = inner
    name = _text(_path(party, "Nm"))
    ident = _path(party, "Id")
    doc = None
    if ident is not None:
        for kind in ("PrvtId", "OrgId"):
            doc = doc or _text(_path(ident, kind, "Othr", "Id"))
    return name, doc


def _tx_amount(tx: dict[str, Any]) -> tuple[int, str | None] | None:
    el = tx.get("Amt")
    if el is None:
        el = _path(tx.get("AmtDtls"), "TxAmt", "Amt")
    if el is None:
        return None
    return _amount(el, "TxDtls/Amt")


class _Entry:
    """What one Ntry says, read once."""

    __slots__ = (
        "booked",
        "cents",
        "code_kind",
        "currency",
        "info",
        "line",
        "pix",
        "ref",
        "reversal",
        "sign",
    )

    def __init__(self, el: Any):
        parts = _children(el)
        self.line: int = el.sourceline or 0
        self.cents, self.currency = _amount(parts.get("Amt"), "Amt")
        self.sign = _sign(parts.get("CdtDbtInd"))
        self.reversal = (_text(parts.get("RvslInd")) or "").lower() in ("true", "1")
        self.booked = _when(parts.get("BookgDt"), "BookgDt") or _when(parts.get("ValDt"), "ValDt")
        if self.booked is None:
            raise LineError("BookgDt", "missing (and no ValDt)")
        self.ref = _reference(_text(parts.get("AcctSvcrRef"))) or _reference(
            _text(parts.get("NtryRef"))
        )
        self.info = _text(parts.get("AddtlNtryInf"))
        codes = parts.get("BkTxCd")
        said = (
            _CODE_KINDS.get((_text(c) or "").upper())
            for c in (codes.iter() if codes is not None else ())
            if _local(c.tag) != "Prtry"
        )
        self.code_kind: str | None = next((k for k in said if k is not None), None)
        # a bank transaction code that says PIX (a Brazilian bank's proprietary code)
        self.pix = codes is not None and any(
            "PIX" in (_text(c) or "").upper() for c in codes.iter()
        )


def _reference(text: str | None) -> str | None:
    return None if text is None or text.upper() in _NO_REF else text


def _line(entry: _Entry, tx: dict[str, Any] | None, cents: int) -> tuple[Any, ...]:
    """One statement line for a transaction (or for a whole entry when `tx` is None)."""
    amount = entry.sign * cents
    direction = "credit" if amount > 0 or (amount == 0 and entry.sign > 0) else "debit"
    tx = tx or {}
    refs = _children(tx["Refs"]) if "Refs" in tx else {}
    raw_e2e = _reference(_text(refs.get("EndToEndId")))
    pix_id = raw_e2e if raw_e2e and E2E_FULL.fullmatch(raw_e2e) else None
    reference = _reference(_text(refs.get("AcctSvcrRef"))) or entry.ref
    if reference is None and raw_e2e and pix_id is None:
        reference = raw_e2e
    remittance = tx.get("RmtInf")
    words = [_text(u) for u in _all(remittance, "Ustrd")] if remittance is not None else []
    words += [_text(tx.get("AddtlTxInf")), entry.info]
    text = clean(" ".join(w for w in words if w))
    txid = None
    if remittance is not None:
        for strd in _all(remittance, "Strd"):
            txid = txid or _reference(_text(_path(strd, "CdtrRefInf", "Ref")))
    name, doc = _party(tx, "Dbtr" if direction == "credit" else "Cdtr")
    key = _text(_path(tx.get("RltdPties"), "CdtrAcct", "Prxy", "Id"))
    kind, e2e, refund_of = classify(direction, text, pix_id, code_kind=entry.code_kind)
    if entry.reversal and not kind.startswith("pix_refund"):
        # A reversal gives back what an earlier entry moved. Of a PIX (its e2e id, PIX in its
        # texts or its bank transaction code): a devolução of it. Of anything else (a card
        # payment, a direct debit, a wire returned): the same kind, noted as a reversal.
        if kind in ("pix_in", "pix_out") or entry.pix:
            kind = "pix_refund_in" if direction == "credit" else "pix_refund_out"
            refund_of, e2e = e2e, None
        text = clean(f"ESTORNO {text or ''}")
    if reference in (e2e, refund_of):
        reference = None
    return (
        entry.line,
        entry.booked,
        amount,
        direction,
        kind,
        e2e,
        txid,
        refund_of,
        name,
        doc,
        key,
        text,
        reference,
    )


def _entry_lines(
    el: Any, result: ParseResult, account_ccy: str | None
) -> tuple[_Entry, list[tuple[Any, ...]]]:
    entry = _Entry(el)
    if entry.currency and account_ccy and entry.currency != account_ccy:
        raise LineError("Amt@Ccy", f"{entry.currency} in an account kept in {account_ccy}")
    details = [_children(tx) for dtls in _all(el, "NtryDtls") for tx in _all(dtls, "TxDtls")]
    if len(details) <= 1:
        return entry, [_line(entry, details[0] if details else None, entry.cents)]
    amounts = [_tx_amount(tx) for tx in details]
    if any(a is None for a in amounts):
        result.warnings.append(
            f"line {entry.line}: a batch entry of {len(details)} transactions without their "
            "amounts is one line"
        )
        return entry, [_line(entry, None, entry.cents)]
    own = entry.currency or account_ccy  # the currency every amount of the entry is in
    signed: list[int] = []
    totals: dict[str | None, int] = {}  # per currency, in the entry's direction
    for tx, amount in zip(details, amounts, strict=True):
        assert amount is not None
        cents, ccy = amount
        ccy = ccy or own
        if account_ccy and ccy != account_ccy:
            raise LineError("TxDtls/Amt@Ccy", f"{ccy} in an account kept in {account_ccy}")
        ind = tx.get("CdtDbtInd")
        factor = _sign(ind, "TxDtls/CdtDbtInd") * entry.sign if ind is not None else 1
        signed.append(cents * factor)
        totals[ccy] = totals.get(ccy, 0) + cents * factor
    foreign = sorted(c for c in totals if c is not None and c != own) if own else []
    if foreign or sum(totals.values()) != entry.cents:
        order = sorted(totals, key=lambda c: (c != own, c or ""))  # the entry's currency first
        sums = " and ".join(_as_written(totals[c], c, entry.sign) for c in order)
        says = f"the entry says {_as_written(entry.cents, own, entry.sign)}"
        if foreign:  # the account states no Ccy: the entry's stands for it
            raise LineError(
                "TxDtls/Amt@Ccy",
                f"{', '.join(foreign)} in an account kept in {own} (the entry's currency; the "
                f"account states none): transactions add up to {sums}, {says}",
            )
        raise LineError("NtryDtls", f"transactions add up to {sums}, {says}")
    return entry, [_line(entry, tx, cents) for tx, cents in zip(details, signed, strict=True)]


def _as_written(net: int, ccy: str | None, entry_sign: int) -> str:
    """An amount as camt writes it: unsigned, its currency, CRDT or DBIT (`net` counts in
    the direction of an entry of sign `entry_sign`)."""
    sign = entry_sign if net >= 0 else -entry_sign
    return " ".join(t for t in (format_cents(abs(net)), ccy, "CRDT" if sign > 0 else "DBIT") if t)


class _Container:
    """One Stmt / Ntfctn / Rpt: its account, period, balances and what its entries add to."""

    __slots__ = ("account", "bad", "balances", "currency", "end", "line", "net", "start")

    def __init__(self) -> None:
        self.account: str | None = None
        self.currency: str | None = None
        self.start: str | None = None
        self.end: str | None = None
        self.balances: dict[str, tuple[int, int]] = {}  # code -> (signed cents, line)
        self.net = 0
        self.bad = 0
        self.line = 0


def _account(el: Any, box: _Container) -> None:
    ident = _path(el, "Id")
    box.account = _text(_path(ident, "IBAN")) or _text(_path(ident, "Othr", "Id"))
    box.currency = _text(_path(el, "Ccy"))


# The balance walk's balances (ParseResult.balances): an opening booked balance is the opening
# of its date; a closing booked balance, and the previous statement's (PRCD), the closing of
# theirs. Other types (available, interim, forward) are never what the lines add to.
_WALKED = {"OPBD": "opening", "CLBD": "closing", "PRCD": "closing"}


def _balance(el: Any, box: _Container, result: ParseResult) -> None:
    parts = _children(el)
    code = _text(_path(parts.get("Tp"), "CdOrPrtry", "Cd")) or _text(
        _path(parts.get("Tp"), "CdOrPrtry", "Prtry")
    )
    if code is None:
        return
    cents, _ = _amount(parts.get("Amt"), "Bal/Amt")
    sign = _sign(parts.get("CdtDbtInd"), "Bal/CdtDbtInd")
    line = el.sourceline or 0
    code = code.upper()
    box.balances.setdefault(code, (sign * cents, line))
    side = _WALKED.get(code)
    dated = _balance_date(parts.get("Dt")) if side else None
    if side and dated is not None:
        day, at = dated
        result.balances.append(Balance(day, side, sign * cents, f"camt {code}", line, at))


def _balance_date(el: Any) -> tuple[date, int | None] | None:
    """A balance's `Dt/Dt` (the day) or `Dt/DtTm` (the instant and its business day); None
    when it has neither readable."""
    parts = _children(el) if el is not None else {}
    text = _text(parts.get("Dt"))
    if text is not None:
        try:
            return date.fromisoformat(text[:10]), None
        except ValueError:
            return None
    text = _text(parts.get("DtTm"))
    try:
        at = iso_to_us(text, naive_tz=BUSINESS_TZ) if text is not None else None
    except LineError:
        return None
    return (business_day(at), at) if at is not None else None


def _close(box: _Container, result: ParseResult, source: str, quarantined: bool) -> None:
    opening = box.balances.get("OPBD") or box.balances.get("PRCD")
    closing = box.balances.get("CLBD")
    if opening is not None and closing is not None:
        want = opening[0] + box.net
        if want != closing[0]:
            message = (
                f"opening balance {opening[0]} + booked entries {box.net} = {want} cents, "
                f"closing balance (CLBD) says {closing[0]}"
            )
            if quarantined or box.bad:
                result.warnings.append(f"line {closing[1]}: {message} (lines were quarantined)")
            else:
                raise StatementParseError(message, file=source, line=closing[1], field="Bal")
        else:
            result.checks.append(
                f"statement at line {box.line}: opening {opening[0]} + {box.net} = closing "
                f"{closing[0]} cents"
            )
    if box.start and box.end:
        period = _covered(box.start, box.end)
        if period is None:
            result.warnings.append("FrToDt is reversed or unreadable: no statement period")
            return
        result.coverage = [*(result.coverage or []), period]


def _covered(start: str, end: str) -> Coverage | None:
    """[start, end) of FrToDt: days are whole business days; ToDtTm is the last instant
    covered (inclusive), so the exclusive end is one microsecond after it."""
    try:
        if len(start) == 10 and len(end) == 10:
            first, last = date.fromisoformat(start), date.fromisoformat(end)
            return days_coverage(first, last, "camt FrToDt") if last >= first else None
        lo = iso_to_us(start if len(start) > 10 else start + "T00:00:00", naive_tz=BUSINESS_TZ)
        hi = iso_to_us(end if len(end) > 10 else end + "T23:59:59.999999", naive_tz=BUSINESS_TZ)
    except (LineError, ValueError):
        return None
    return Coverage(lo, hi + 1, "camt FrToDt") if hi >= lo else None


def _period(el: Any, box: _Container) -> None:
    parts = _children(el)
    for name, attr in (("FrDtTm", "start"), ("ToDtTm", "end")):
        text = _text(parts.get(name))
        if text is None:
            continue
        try:
            iso_to_us(text, naive_tz=BUSINESS_TZ)
        except LineError:
            continue
        setattr(box, attr, text)
    for name, attr in (("FrDt", "start"), ("ToDt", "end")):
        text = _text(parts.get(name))
        if text and getattr(box, attr) is None:
            setattr(box, attr, text[:10])


_TAGS = ("{*}Ntry", "{*}Acct", "{*}Bal", "{*}FrToDt", "{*}Stmt", "{*}Ntfctn", "{*}Rpt")


def _check_root(el: Any, source: str) -> None:
    tree = el.getroottree()
    info = tree.docinfo
    if info.doctype or info.internalDTD is not None or info.externalDTD is not None:
        raise StatementError(f"{source}: XML with a DTD is refused (entity expansion is off)")
    root = tree.getroot()
    ns = root.tag[1:].split("}", 1)[0] if root.tag.startswith("{") else ""
    if _local(root.tag) != "Document" or _NAMESPACE.fullmatch(ns) is None:
        raise StatementError(
            f"{source}: not an ISO 20022 camt.052/053/054 document (root {root.tag[:120]!r})"
        )


def parse_file(path: Path) -> ParseResult:
    """Parse a camt.052/053/054 XML file."""
    with path.open("rb") as fh:
        return parse_stream(fh, str(path))


def parse_bytes(data: bytes, source: str) -> ParseResult:
    import io

    return parse_stream(io.BytesIO(data), source)


def parse_stream(stream: Any, source: str) -> ParseResult:
    result = ParseResult()
    box: _Container | None = None
    first = True
    not_money: dict[str, int] = {}
    currencies: set[str] = set()  # of the entries
    accounts: set[str] = set()  # the accounts' Ccy
    named: dict[str, None] = {}  # the accounts' Id (IBAN or Othr/Id), for `inspect`
    notifications_only = [True]
    try:
        for event, el in _events(stream):
            if first:
                _check_root(el, source)
                first = False
            name = _local(el.tag)
            if name in CONTAINERS:
                if event == "start":
                    notifications_only[0] = notifications_only[0] and name == "Ntfctn"
                    box = _Container()
                    box.line = el.sourceline or 0
                else:
                    if box is not None:
                        _close(box, result, source, bool(result.bad))
                        if box.currency:
                            accounts.add(box.currency)
                        if box.account:
                            named[box.account[:60]] = None
                    box = None
                    el.clear()
                continue
            if event == "start" or box is None:
                continue
            if name == "Ntry":
                _entry(el, box, result, not_money, currencies)
                el.clear()
                while el.getprevious() is not None:  # read already: free the memory
                    del el.getparent()[0]
                continue
            parent = _local(el.getparent().tag) if el.getparent() is not None else ""
            if parent not in CONTAINERS:
                continue
            if name == "Acct":
                _account(el, box)
            elif name == "Bal":
                try:
                    _balance(el, box, result)
                except LineError as exc:
                    raise StatementParseError(
                        exc.reason, file=source, line=el.sourceline, field=exc.field
                    ) from exc
            elif name == "FrToDt":
                _period(el, box)
    except etree.XMLSyntaxError as exc:
        line = exc.position[0] if exc.position else None
        reason = " ".join(str(exc.msg).split()).split(", line ")[0]
        raise StatementParseError(
            f"not well-formed XML: {reason[:300]}", file=source, line=line, field="XML"
        ) from exc
    if first:
        raise StatementError(f"{source}: not an ISO 20022 camt document (no statement found)")
    if result.coverage is None and notifications_only[0]:
        result.coverage = []  # camt.054: single notifications, no statement period
    _summarize(result, not_money, currencies | accounts, currencies, named)
    return result


def _events(stream: Any) -> Any:
    """The start and end events of the tags read, parsed with no entity, DTD or network."""
    return etree.iterparse(
        stream,
        events=("start", "end"),
        tag=_TAGS,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def _summarize(
    result: ParseResult,
    not_money: dict[str, int],
    shown: set[str],
    currencies: set[str],
    named: dict[str, None],
) -> None:
    """What the checks, warnings and `inspect` say of the document once it is read: entries
    not booked, the entries' currencies (and the accounts'), the accounts named."""
    if not_money:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(not_money.items()))
        result.checks.append(f"{sum(not_money.values())} entries not booked, not lines ({counts})")
    warning = currency_warning(currencies)
    if warning:
        result.warnings.append(warning)
    if shown:  # inspect shows the amounts in it
        result.info["currencies"] = sorted(shown)
    if named:  # what `inspect` shows beside the account label
        result.info["declared_account"] = ", ".join(named)


def _entry(
    el: Any, box: _Container, result: ParseResult, not_money: dict[str, int], currencies: set[str]
) -> None:
    line = el.sourceline or 0
    try:
        status = _status(_children(el))
        if status in NOT_MONEY:
            not_money[status] = not_money.get(status, 0) + 1
            return
        if status != BOOKED:
            raise LineError("Sts", f"unknown entry status {status[:20]!r}")
        entry, rows = _entry_lines(el, result, box.currency)
        if entry.currency:
            currencies.add(entry.currency)
    except LineError as exc:
        box.bad += 1
        raw = etree.tostring(el, encoding="unicode")[:2000]
        result.bad.append(Bad(line, exc.field, exc.reason, raw))
        return
    box.net += entry.sign * entry.cents
    result.rows.extend(rows)
