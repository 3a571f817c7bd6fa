"""BACEN "API Pix" JSON: `GET /pix` responses and webhook `{"pix": [...]}` bodies.

A file may hold one body, a JSON list of bodies (saved pages), or one body per line
(NDJSON). `source_line` is the 1-based position of the pix item in the file (its
devoluções share it), since JSON has no meaningful line per item.

Each received PIX is a `pix_in` credit: endToEndId, txid, valor (decimal text, "123.45"),
chave (the key that was paid: ours, kept as counterparty_key, which is what an onramp's
pixInfo.keyValue names), horario (RFC 3339 with offset, stored UTC), infoPagador
(description) and the PSP extension `pagador` {nome, cpf|cnpj} (often masked).

Each `devolucoes[]` item is its own line: kind pix_refund_out, a debit, end_to_end_id = its
rtrId, refund_of = the original endToEndId, bank_reference = the devolução id. Its status
changes after the fact, so a later import of the same devolução is stored as a new version
(the description carries the status) and the newest wins in the view:
  EM_PROCESSAMENTO  the PSP has taken the money out of the account: a debit at solicitacao;
  DEVOLVIDO         settled: a debit at liquidacao (solicitacao if absent);
  NAO_REALIZADO     never happened: stored as a void version (0 cents) so that a devolução
                    first seen EM_PROCESSAMENTO disappears from statement_lines; the view
                    hides refund lines whose winning version is void.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from recon.errors import StatementError
from recon.money import AmountError, parse_plain_cents
from recon.statements.lines import PARSED_SCHEMA, Bad, LineError, ParseResult, clean, vclean

REFUND_STATUSES = ("EM_PROCESSAMENTO", "DEVOLVIDO", "NAO_REALIZADO")


def _documents(text: str, source: str) -> list[Any]:
    """The JSON bodies in a file: one document, a list of them, or NDJSON."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as first:
        docs = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append(json.loads(line))
            except json.JSONDecodeError as exc:
                where = f"line {first.lineno}" if number == 1 else f"line {number}"
                raise StatementError(f"{source}: not valid JSON ({where}): {exc.msg}") from exc
        return docs
    return doc if isinstance(doc, list) else [doc]


def _items(docs: Iterable[Any], source: str) -> Iterator[Any]:
    for doc in docs:
        if isinstance(doc, dict) and "pix" in doc:
            pix = doc["pix"]
            if not isinstance(pix, list):
                raise StatementError(f"{source}: 'pix' must be a list")
            yield from pix
        elif isinstance(doc, dict) and "endToEndId" in doc:
            yield doc  # a bare pix item (one per NDJSON line)
        else:
            raise StatementError(
                f"{source}: not an API Pix body (expected an object with a 'pix' list)"
            )


def _text(item: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = item.get(key)
    if value is None or value == "":
        if required:
            raise LineError(key, "missing")
        return None
    if not isinstance(value, str):
        raise LineError(key, f"must be text, got {type(value).__name__}")
    return value


def _valor(item: dict[str, Any], key: str = "valor") -> int:
    value = item.get(key)
    if not isinstance(value, str):
        # The API writes valor as a string; a JSON number would already have gone through a
        # float in most producers, so it is refused rather than trusted.
        raise LineError(key, f"must be decimal text like '10.00', got {value!r}")
    try:
        cents = parse_plain_cents(value.strip())
    except AmountError as exc:
        raise LineError(key, str(exc)) from exc
    if cents <= 0:
        raise LineError(key, f"must be positive, got {value!r}")
    return cents


def _pagador(item: dict[str, Any]) -> tuple[str | None, str | None]:
    payer = item.get("pagador")
    if payer is None:
        return None, None
    if not isinstance(payer, dict):
        raise LineError("pagador", "must be an object")
    name = payer.get("nome")
    doc = payer.get("cpf") or payer.get("cnpj")
    if name is not None and not isinstance(name, str):
        raise LineError("pagador.nome", "must be text")
    if doc is not None and not isinstance(doc, str):
        raise LineError("pagador.cpf", "must be text")
    return clean(name), clean(doc)


def _item_rows(number: int, item: Any) -> list[tuple[Any, ...]]:
    if not isinstance(item, dict):
        raise LineError("pix", "item must be an object")
    e2e = _text(item, "endToEndId", required=True)
    cents = _valor(item)
    horario = _text(item, "horario", required=True)
    txid = _text(item, "txid")
    chave = _text(item, "chave")
    info = _text(item, "infoPagador")
    name, doc = _pagador(item)
    rows: list[tuple[Any, ...]] = [
        (
            number,
            horario,
            cents,
            "credit",
            "pix_in",
            e2e,
            txid,
            None,
            name,
            doc,
            chave,
            clean(info),
            None,
        )
    ]
    refunds = item.get("devolucoes") or []
    if not isinstance(refunds, list):
        raise LineError("devolucoes", "must be a list")
    for i, dev in enumerate(refunds):
        where = f"devolucoes[{i}]"
        if not isinstance(dev, dict):
            raise LineError(where, "must be an object")
        try:
            rows.append(_refund_row(number, dev, e2e, name, doc))
        except LineError as exc:
            raise LineError(f"{where}.{exc.field}", exc.reason) from exc
    return rows


def _refund_row(
    number: int, dev: dict[str, Any], e2e: str | None, name: str | None, doc: str | None
) -> tuple[Any, ...]:
    dev_id = _text(dev, "id", required=True)
    rtr = _text(dev, "rtrId", required=True)
    cents = _valor(dev)
    status = _text(dev, "status", required=True)
    if status not in REFUND_STATUSES:
        raise LineError("status", f"unknown devolução status {status!r}")
    times = dev.get("horario") or {}
    if not isinstance(times, dict):
        raise LineError("horario", "must be an object {solicitacao, liquidacao}")
    requested = _text(times, "solicitacao")
    settled = _text(times, "liquidacao")
    booked = (settled or requested) if status == "DEVOLVIDO" else (requested or settled)
    if booked is None:
        raise LineError("horario.solicitacao", "missing")
    amount = 0 if status == "NAO_REALIZADO" else -cents
    words = [f"DEVOLUCAO PIX {status}"]
    for key in ("natureza", "motivo"):
        value = dev.get(key)
        if isinstance(value, str) and value.strip():
            words.append(value.strip())
    return (
        number,
        booked,
        amount,
        "debit",
        "pix_refund_out",
        rtr,
        None,
        e2e,
        name,
        doc,
        None,
        clean(" ".join(words)),
        dev_id,
    )


_FAST_VALOR = r"^[0-9]{1,15}\.[0-9]{2}$"


def _nonempty(values: list[Any]) -> pa.Array:
    array = pa.array(values, pa.string())
    return pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.string()), array)


def _fast(items: list[Any]) -> ParseResult | None:
    """Vectorized read of items that are all well formed; None = use the item-by-item path.

    Every check of the item path is made here on whole columns (types, required fields,
    valor's shape and sign); devoluções go through the item path's own code. On any doubt
    the caller falls back to the item path, which names the offending item and field.
    """
    try:
        e2e = pa.array([it["endToEndId"] for it in items], pa.string())
        valor = pa.array([it["valor"] for it in items], pa.string())
        horario = pa.array([it["horario"] for it in items], pa.string())
        txid = _nonempty([it.get("txid") for it in items])
        chave = _nonempty([it.get("chave") for it in items])
        info = vclean(pa.array([it.get("infoPagador") for it in items], pa.string()))
        payers = [it.get("pagador") or {} for it in items]
        names = vclean(pa.array([p.get("nome") for p in payers], pa.string()))
        docs = vclean(pa.array([p.get("cpf") or p.get("cnpj") for p in payers], pa.string()))
        refunds = [it.get("devolucoes") for it in items]
    except (KeyError, TypeError, AttributeError, pa.ArrowTypeError, pa.ArrowInvalid):
        return None
    for column in (e2e, horario):
        if column.null_count or (len(column) and pc.min(pc.utf8_length(column)).as_py() == 0):
            return None
    if len(valor) and not pc.all(pc.match_substring_regex(valor, _FAST_VALOR)).as_py():
        return None
    cents = pc.cast(
        pc.multiply(pc.cast(valor, pa.decimal128(20, 2)), pa.scalar(100, pa.decimal128(3, 0))),
        pa.int64(),
    )
    if len(cents) and pc.min(cents).as_py() <= 0:
        return None
    result = ParseResult()
    n = len(items)
    result.table = pa.table(
        [
            pa.array(range(1, n + 1), pa.int64()),
            horario,
            cents,
            pa.repeat(pa.scalar("credit"), n),
            pa.repeat(pa.scalar("pix_in"), n),
            e2e,
            txid,
            pa.nulls(n, pa.string()),
            names,
            docs,
            chave,
            info,
            pa.nulls(n, pa.string()),
        ],
        schema=PARSED_SCHEMA,
    )
    for number, dev_list in enumerate(refunds, start=1):
        if not dev_list:
            continue
        if not isinstance(dev_list, list):
            return None
        item = items[number - 1]
        name, doc = names[number - 1].as_py(), docs[number - 1].as_py()
        for dev in dev_list:
            if not isinstance(dev, dict):
                return None
            try:
                result.rows.append(_refund_row(number, dev, item["endToEndId"], name, doc))
            except LineError:
                return None
    return result


def parse_documents(docs: Iterable[Any], source: str) -> ParseResult:
    """Lines from already-decoded API Pix bodies (used by `recon statements pull`)."""
    items = list(_items(docs, source))
    fast = _fast(items)
    if fast is not None:
        return fast
    result = ParseResult()
    rows = result.rows
    for number, item in enumerate(items, start=1):
        try:
            rows.extend(_item_rows(number, item))
        except LineError as exc:
            result.bad.append(Bad(number, exc.field, exc.reason, _raw(item)))
    return result


def _raw(item: Any) -> str:
    try:
        return json.dumps(item, ensure_ascii=False, sort_keys=True)[:2000]
    except (TypeError, ValueError):
        return repr(item)[:2000]


def parse_file(path: Path) -> ParseResult:
    """Parse an API Pix JSON file (UTF-8, BOM tolerated)."""
    text = path.read_bytes().decode("utf-8-sig")
    return parse_documents(_documents(text, str(path)), str(path))
