"""BACEN "API Pix" JSON: `GET /pix` responses and webhook `{"pix": [...]}` bodies.

A file may hold one body, a JSON list of bodies (saved pages), or one body per line
(NDJSON). `source_line` is the 1-based position of the pix item in the file (its
devoluções share it), since JSON has no meaningful line per item.

Each received PIX is a `pix_in` credit: endToEndId, txid, valor (decimal text, "123.45"),
chave (the key that was paid: ours, kept as counterparty_key, which is what an onramp's
pixInfo.keyValue names), horario (RFC 3339 with offset, stored UTC), infoPagador
(description) and the PSP extension `pagador` {nome, cpf|cnpj} (often masked). Efí states
the fee it took from a PIX received in `gnExtras.tarifa` (decimal text; its webhook carries it
when the key's `webhook.notificacao.tarifa` is set): `valor` is what the payer sent, the
account is credited `valor` - `tarifa`, so the line's amount_cents is that net and its
fee_cents the tarifa (the pair is matched on the gross, their sum).

Each `devolucoes[]` item is its own line: kind pix_refund_out, a debit, end_to_end_id = its
rtrId, refund_of = the original endToEndId, bank_reference = the devolução id. Its status
changes after the fact, so a later import of the same devolução is stored as a new version
(the description carries the status) and the newest wins in the view:
  EM_PROCESSAMENTO  the PSP has taken the money out of the account: a debit at solicitacao;
  DEVOLVIDO         settled: a debit at liquidacao (solicitacao if absent);
  NAO_REALIZADO     never happened: stored as a void version (0 cents) so that a devolução
                    first seen EM_PROCESSAMENTO disappears from statement_lines; the view
                    hides refund lines whose winning version is void.

A PIX *sent* (PSP extensions; see `_direction`) is a `pix_out` debit. Efí's
`GET /v2/gn/pix/enviados/:e2eid` body is one such item on its own: a top-level `idEnvio`
(the id we gave the PSP when asking it to send), `status`, `horario {solicitacao,
liquidacao}` (booked at liquidacao, else solicitacao), `favorecido` (the payee: `chave`, and
`identificacao` or `contaBanco` {nome, cpf|cnpj, codigoBanco, agencia, conta}); its top-level
`chave` is the key we sent from (the request's `pagador.chave`), not the key paid. Nor is the
`chave` of a sent PIX's webhook item: a PSP's webhook is registered on one of our keys and
names it there (Efí's examples of a received and a sent PIX carry the same key). The key paid
is `favorecido.chave`, else unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from recon.errors import StatementError
from recon.money import AmountError, parse_plain_cents
from recon.statements.lines import (
    PARSED_SCHEMA,
    Bad,
    Coverage,
    LineError,
    ParseResult,
    clean,
    iso_to_us,
    json_documents,
    json_shape,
    vclean,
)

REFUND_STATUSES = ("EM_PROCESSAMENTO", "DEVOLVIDO", "NAO_REALIZADO")


def _items(docs: Iterable[Any], source: str) -> Iterator[Any]:
    for doc in docs:
        if isinstance(doc, dict) and "pix" in doc:
            pix = doc["pix"]
            if isinstance(pix, dict):
                yield pix  # one item where a list was expected (some webhooks)
            elif isinstance(pix, list):
                yield from pix
            else:
                raise StatementError(f"{source}: 'pix' must be a list")
        elif isinstance(doc, dict) and "endToEndId" in doc:
            yield doc  # a bare pix item (one per NDJSON line)
        else:
            raise StatementError(
                f"{source}: not an API Pix body (expected an object with a 'pix' list, or PIX "
                f"items with an 'endToEndId'; seen: {json_shape(doc)})"
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
        shown = repr(value) if not isinstance(value, (int, Decimal)) else f"the number {value}"
        raise LineError(key, f"must be decimal text like '10.00', got {shown[:60]}")
    try:
        cents = parse_plain_cents(value.strip())
    except AmountError as exc:
        raise LineError(key, str(exc)) from exc
    if cents <= 0:
        raise LineError(key, f"must be positive, got {value[:40]!r}")
    return cents


def _person(payer: Any, where: str) -> tuple[str | None, str | None]:
    """(name, document) of a `pagador`/`favorecido` object: {nome, cpf|cnpj}."""
    if payer is None:
        return None, None
    if not isinstance(payer, dict):
        raise LineError(where, "must be an object")
    name = payer.get("nome")
    doc = payer.get("cpf") or payer.get("cnpj")
    if name is not None and not isinstance(name, str):
        raise LineError(f"{where}.nome", "must be text")
    if doc is not None and not isinstance(doc, str):
        raise LineError(f"{where}.cpf", "must be text")
    return clean(name), clean(doc)


def _payee(payee: Any) -> tuple[str | None, str | None, str | None, list[str]]:
    """(name, document, PIX key, account words) of a sent PIX's `favorecido`: {nome,
    cpf|cnpj} as such, or (Efí's `GET /v2/gn/pix/enviados`) {chave, identificacao {nome,
    cpf|cnpj}} for a PIX to a key, {contaBanco {nome, cpf|cnpj, codigoBanco, agencia, conta,
    tipoConta}} for one to bank details; the account joins the description."""
    if payee is None:
        return None, None, None, []
    if not isinstance(payee, dict):
        raise LineError("favorecido", "must be an object")
    name, doc = _person(payee, "favorecido")
    words: list[str] = []
    for part in ("identificacao", "contaBanco"):
        inner = payee.get(part)
        if inner is None:
            continue
        where = f"favorecido.{part}"
        inner_name, inner_doc = _person(inner, where)
        name, doc = name or inner_name, doc or inner_doc
        assert isinstance(inner, dict)
        for label, name_ in (("banco", "codigoBanco"), ("ag", "agencia"), ("conta", "conta")):
            value = inner.get(name_)
            if value is not None and not isinstance(value, str):
                raise LineError(f"{where}.{name_}", "must be text")
            if shown := clean(value):
                words.append(f"{label} {shown}")
    key = payee.get("chave")
    if key is not None and not isinstance(key, str):
        raise LineError("favorecido.chave", "must be text")
    return name, doc, clean(key), words


def _booked(item: dict[str, Any], *, sent: bool) -> str:
    """`horario`: RFC 3339 text; for a sent PIX also Efí's {solicitacao, liquidacao}
    (the money left at liquidacao; solicitacao when it is not there yet)."""
    value = item.get("horario")
    if sent and isinstance(value, dict):
        times = {}
        for key in ("liquidacao", "solicitacao"):
            try:
                times[key] = _text(value, key)
            except LineError as exc:
                raise LineError(f"horario.{key}", exc.reason) from exc
        booked = times["liquidacao"] or times["solicitacao"]
        if booked is None:
            raise LineError("horario.liquidacao", "missing (and no horario.solicitacao)")
        return booked
    horario = _text(item, "horario", required=True)
    assert horario is not None
    return horario


def _extras(item: dict[str, Any]) -> dict[str, Any]:
    extras = item.get("gnExtras")
    if extras is None:
        return {}
    if not isinstance(extras, dict):
        raise LineError("gnExtras", "must be an object")
    return extras


def _tarifa(extras: dict[str, Any], cents: int) -> int | None:
    """Efí's `gnExtras.tarifa` (decimal text, "0.01"): the fee it took from a PIX received,
    whose `valor` is what the payer sent; the account is credited `valor` - `tarifa`."""
    if extras.get("tarifa") is None:
        return None
    value = extras["tarifa"]
    if not isinstance(value, str):
        raise LineError("gnExtras.tarifa", f"must be decimal text like '0.99', got {value!r:.60}")
    try:
        fee = parse_plain_cents(value.strip())
    except AmountError as exc:
        raise LineError("gnExtras.tarifa", str(exc)) from exc
    if not 0 <= fee < cents:
        raise LineError(
            "gnExtras.tarifa", f"must be at least 0 and less than valor, got {value!r:.40}"
        )
    return fee


# Direction of an item that says what it is (PSP extensions of API Pix, e.g. Efí's webhook:
# a PIX we sent has `tipo: "SOLICITACAO"`, `status` and `gnExtras.idEnvio`). BACEN's own
# `GET /pix` and webhook items carry none of these: they are received PIX by definition.
RECEIVED_TYPES = frozenset({"RECEBIMENTO", "RECEBIDO", "PIX_RECEBIDO"})
SENT_TYPES = frozenset({"SOLICITACAO", "ENVIO", "ENVIADO", "PIX_ENVIADO"})
# Item status: money moved / not yet / never.
DONE_STATUSES = frozenset({"REALIZADO", "CONCLUIDO", "LIQUIDADO", "EFETIVADO"})
PENDING_STATUSES = frozenset({"EM_PROCESSAMENTO", "PENDENTE", "AGENDADO", "ATIVA"})
FAILED_STATUSES = frozenset(
    {"NAO_REALIZADO", "REJEITADO", "CANCELADO", "FALHA", "ERRO", "DEVOLVIDO_PELO_PSP", "EXPIRADO"}
)


class NotMoney(Exception):
    """An item that is not a money movement (a PIX rejected, failed or not yet carried out)."""

    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


def _direction(item: dict[str, Any], extras: dict[str, Any]) -> str:
    """ "received" | "sent" from the item's own fields; NotMoney for a PIX that moved no money;
    LineError when the item says something about itself that cannot be read as either."""
    tipo = _text(item, "tipo")
    status = _text(item, "status")
    if status is not None:
        status = status.strip().upper()
        if status in FAILED_STATUSES or status in PENDING_STATUSES:
            raise NotMoney(status)
        if status not in DONE_STATUSES:
            raise LineError("status", f"unknown PIX status {status[:40]!r}")
    if tipo is not None:
        tipo = tipo.strip().upper()
        if tipo in SENT_TYPES:
            return "sent"
        if tipo in RECEIVED_TYPES:
            return "received"
        raise LineError("tipo", f"unknown PIX tipo {tipo[:40]!r}: cannot tell sent from received")
    if extras.get("idEnvio") is not None or item.get("idEnvio") is not None:
        # Efí's id of a PIX we asked it to send: in its webhook's gnExtras, or at the top
        # of its `GET /v2/gn/pix/enviados/:e2eid` body
        return "sent"
    if status is not None:
        raise LineError("tipo", "an item with a status but no tipo: cannot tell sent from received")
    return "received"


def _item_rows(number: int, item: Any) -> list[tuple[Any, ...]]:
    if not isinstance(item, dict):
        raise LineError("pix", "item must be an object")
    extras = _extras(item)
    direction = _direction(item, extras)
    e2e = _text(item, "endToEndId", required=True)
    cents = _valor(item)
    horario = _booked(item, sent=direction == "sent")
    txid = _text(item, "txid")
    chave = _text(item, "chave")
    info = _text(item, "infoPagador")
    if direction == "sent":
        name, doc, key, words = _payee(item.get("favorecido") or extras.get("favorecido"))
        own_body = item.get("idEnvio") is not None  # Efí's GET /v2/gn/pix/enviados body
        reference = item.get("idEnvio") if own_body else extras.get("idEnvio")
        if reference is not None and not isinstance(reference, str):
            raise LineError("idEnvio" if own_body else "gnExtras.idEnvio", "must be text")
        # The key paid is the payee's own `chave`, else unknown: the item's `chave` is ours
        # (the key a PSP's webhook is registered on; the enviados body's is the key we sent
        # from), and as the key paid it would contradict every payout's destination
        description = clean(" ".join([info or "", *words]))
        row = (number, horario, -cents, "debit", "pix_out", e2e, txid, None, name, doc, key)
        rows: list[tuple[Any, ...]] = [(*row, description, clean(reference))]
    else:
        name, doc = _person(item.get("pagador") or extras.get("pagador"), "pagador")
        fee = _tarifa(extras, cents)
        net = cents - (fee or 0)
        row = (number, horario, net, "credit", "pix_in", e2e, txid, None, name, doc, chave)
        rows = [(*row, clean(info), None, fee)]
    refunds = item.get("devolucoes") or []
    if isinstance(refunds, dict):
        refunds = [refunds]  # BACEN's own webhook example has one devolução as an object
    if not isinstance(refunds, list):
        raise LineError("devolucoes", "must be a list")
    for i, dev in enumerate(refunds):
        where = f"devolucoes[{i}]"
        if not isinstance(dev, dict):
            raise LineError(where, "must be an object")
        try:
            rows.append(_refund_row(number, dev, e2e, name, doc, received=direction == "sent"))
        except LineError as exc:
            raise LineError(f"{where}.{exc.field}", exc.reason) from exc
    return rows


def _refund_row(
    number: int,
    dev: dict[str, Any],
    e2e: str | None,
    name: str | None,
    doc: str | None,
    *,
    received: bool = False,
) -> tuple[Any, ...]:
    """A devolução line: of a PIX we received, money out (pix_refund_out); of a PIX we sent,
    money back in (pix_refund_in)."""
    dev_id = _text(dev, "id", required=True)
    rtr = _text(dev, "rtrId", required=True)
    cents = _valor(dev)
    status = _text(dev, "status", required=True)
    if status not in REFUND_STATUSES:
        raise LineError("status", f"unknown devolução status {str(status)[:40]!r}")
    times = dev.get("horario") or {}
    if not isinstance(times, dict):
        raise LineError("horario", "must be an object {solicitacao, liquidacao}")
    requested = _text(times, "solicitacao")
    settled = _text(times, "liquidacao")
    booked = (settled or requested) if status == "DEVOLVIDO" else (requested or settled)
    if booked is None:
        raise LineError("horario.solicitacao", "missing")
    amount = 0 if status == "NAO_REALIZADO" else (cents if received else -cents)
    words = [f"DEVOLUCAO PIX {status}"]
    for key in ("natureza", "motivo"):
        value = dev.get(key)
        if isinstance(value, str) and value.strip():
            words.append(value.strip())
    return (
        number,
        booked,
        amount,
        "credit" if received else "debit",
        "pix_refund_in" if received else "pix_refund_out",
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


def _blank_to_null(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    return pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.string()), array)


def _assemble(
    e2e: Any, valor: Any, horario: Any, txid: Any, chave: Any, info: Any, names: Any, docs: Any
) -> ParseResult | None:
    """The pix_in lines from whole columns, after the item path's checks; None on any doubt."""
    for column in (e2e, horario):
        if column.null_count or (len(column) and pc.min(pc.utf8_length(column)).as_py() == 0):
            return None
    if valor.null_count or (
        len(valor) and not pc.all(pc.match_substring_regex(valor, _FAST_VALOR)).as_py()
    ):
        return None
    cents = pc.cast(
        pc.multiply(pc.cast(valor, pa.decimal128(20, 2)), pa.scalar(100, pa.decimal128(3, 0))),
        pa.int64(),
    )
    if len(cents) and pc.min(cents).as_py() <= 0:
        return None
    n = len(e2e)
    result = ParseResult()
    result.table = pa.table(
        [
            pa.array(np.arange(1, n + 1, dtype=np.int64)),
            horario,
            cents,
            pa.repeat(pa.scalar("credit"), n),
            pa.repeat(pa.scalar("pix_in"), n),
            e2e,
            _blank_to_null(txid),
            pa.nulls(n, pa.string()),
            vclean(names),
            vclean(docs),
            _blank_to_null(chave),
            vclean(info),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.int64()),
        ],
        schema=PARSED_SCHEMA,
    )
    return result


def _add_refunds(
    result: ParseResult, parents: list[int], refunds: list[Any], e2e: Any
) -> ParseResult | None:
    """Devolução lines (item path code) for (item index, devolução dict) pairs."""
    table = result.table
    assert table is not None
    if not parents:
        return result
    at = pa.array(parents, pa.int64())
    originals = pc.take(e2e, at).to_pylist()
    names = pc.take(table.column("counterparty_name"), at).to_pylist()
    docs = pc.take(table.column("counterparty_document"), at).to_pylist()
    rows = result.rows
    for index, dev, original, name, doc in zip(
        parents, refunds, originals, names, docs, strict=True
    ):
        if not isinstance(dev, dict):
            return None
        try:
            rows.append(_refund_row(index + 1, dev, original, name, doc))
        except LineError:
            return None
    return result


def _fast(items: list[Any]) -> ParseResult | None:
    """Vectorized read of decoded items that are all well formed; None = item-by-item path.

    Every check of the item path is made here on whole columns (types, required fields,
    valor's shape and sign); devoluções go through the item path's own code. On any doubt
    the caller falls back to the item path, which names the offending item and field.
    """
    try:
        e2e = pa.array([it["endToEndId"] for it in items], pa.string())
        valor = pa.array([it["valor"] for it in items], pa.string())
        horario = pa.array([it["horario"] for it in items], pa.string())
        txid = pa.array([it.get("txid") for it in items], pa.string())
        chave = pa.array([it.get("chave") for it in items], pa.string())
        info = pa.array([it.get("infoPagador") for it in items], pa.string())
        payers = [it.get("pagador") or {} for it in items]
        names = pa.array([p.get("nome") for p in payers], pa.string())
        docs = pa.array([p.get("cpf") or p.get("cnpj") for p in payers], pa.string())
        refunds = [it.get("devolucoes") for it in items]
    except (KeyError, TypeError, AttributeError, pa.ArrowTypeError, pa.ArrowInvalid):
        return None
    if any(isinstance(it, dict) and any(k in it for k in _ITEM_PATH_KEYS) for it in items):
        return None
    result = _assemble(e2e, valor, horario, txid, chave, info, names, docs)
    if result is None:
        return None
    parents: list[int] = []
    flat: list[Any] = []
    for index, dev_list in enumerate(refunds):
        if not dev_list:
            continue
        if not isinstance(dev_list, list):
            return None
        parents.extend([index] * len(dev_list))
        flat.extend(dev_list)
    return _add_refunds(result, parents, flat, e2e)


_S = pa.string()
_DEVOLUCAO = pa.struct(
    [
        ("id", _S),
        ("rtrId", _S),
        ("valor", _S),
        ("horario", pa.struct([("solicitacao", _S), ("liquidacao", _S)])),
        ("status", _S),
        ("natureza", _S),
        ("motivo", _S),
    ]
)
_ITEM = pa.struct(
    [
        ("endToEndId", _S),
        ("txid", _S),
        ("valor", _S),
        ("chave", _S),
        ("horario", _S),
        ("infoPagador", _S),
        ("pagador", pa.struct([("nome", _S), ("cpf", _S), ("cnpj", _S)])),
        ("devolucoes", pa.list_(_DEVOLUCAO)),
        # present only on items that say what they are: the item path reads those
        ("tipo", _S),
        ("status", _S),
        ("gnExtras", pa.struct([("idEnvio", _S)])),
        ("idEnvio", _S),
    ]
)
_BODY = pa.schema(
    [("parametros", pa.struct([("inicio", _S), ("fim", _S)])), ("pix", pa.list_(_ITEM))]
)
# Fields only the item path reads (direction, PSP extensions): their presence means "slow path".
_ITEM_PATH_KEYS = ("tipo", "status", "gnExtras", "favorecido", "idEnvio")


def _periods(params: Iterable[Any], result: ParseResult) -> list[Coverage]:
    """The periods `parametros.inicio` .. `fim` of the bodies (a `GET /pix` response; the
    pages of one query share theirs). A body without them (a webhook) covers nothing: [].
    """
    out: list[Coverage] = []
    for p in params:
        if not isinstance(p, dict) or not p.get("inicio") or not p.get("fim"):
            continue
        try:
            start, end = iso_to_us(str(p["inicio"])), iso_to_us(str(p["fim"]))
        except LineError as exc:
            result.warnings.append(f"parametros inicio/fim unreadable ({exc.reason}): no period")
            continue
        period = Coverage(start, end, "pix-json parametros.inicio/fim", "received")
        if end >= start and period not in out:
            out.append(period)
    return out


def _arrow_file(path: Path) -> ParseResult | None:
    """Bodies one per line (saved pages, minified responses) read by pyarrow's JSON reader,
    with the API Pix types enforced; None = use the Python reader (pretty-printed files,
    bare items, a JSON number for valor, anything unexpected)."""
    try:
        table = pajson.read_json(
            path,
            read_options=pajson.ReadOptions(block_size=16 << 20),
            parse_options=pajson.ParseOptions(
                explicit_schema=_BODY, unexpected_field_behavior="ignore"
            ),
        )
        table.validate(full=True)  # invalid UTF-8 in a string: the Python path names it
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError):
        return None
    pix = table.column("pix")
    if pix.null_count:
        return None
    items = pc.list_flatten(pix)
    items = items.combine_chunks() if isinstance(items, pa.ChunkedArray) else items
    if items.null_count:
        return None
    params = table.column("parametros").to_pylist()

    def field(name: str) -> Any:
        return pc.struct_field(items, name)

    if any(field(k).null_count < len(items) for k in ("tipo", "status", "gnExtras", "idEnvio")):
        return None
    payer = field("pagador")
    names = pc.struct_field(payer, "nome")
    docs = pc.coalesce(
        _blank_to_null(pc.struct_field(payer, "cpf")), pc.struct_field(payer, "cnpj")
    )
    e2e = field("endToEndId")
    result = _assemble(
        e2e,
        field("valor"),
        field("horario"),
        field("txid"),
        field("chave"),
        field("infoPagador"),
        names,
        docs,
    )
    if result is None:
        return None
    result.coverage = _periods(params, result)
    devolucoes = field("devolucoes")
    parents = pc.list_parent_indices(devolucoes).to_pylist()
    if parents:
        return _add_refunds(result, parents, pc.list_flatten(devolucoes).to_pylist(), e2e)
    return result


def parse_documents(docs: Iterable[Any], source: str) -> ParseResult:
    """Lines from already-decoded API Pix bodies (used by `recon statements pull`)."""
    docs = list(docs)
    items = list(_items(docs, source))
    params = [d.get("parametros") for d in docs if isinstance(d, dict)]
    result = _fast(items) or _item_path(items)
    result.coverage = _periods(params, result)
    sent = sum(1 for row in result.rows if row[4] == "pix_out")
    if result.coverage and sent:
        # `parametros` of a list of PIX *sent* (Efí's GET /v2/gn/pix/enviados): its period
        # does not say "these are all the PIX received", which is what a period claims here
        result.coverage = []
        result.warnings.append(
            f"{sent} PIX sent in a body with parametros inicio/fim: a list of PIX sent "
            "covers no period (only a list of PIX received, GET /pix, does); no period recorded"
        )
    return result


def _item_path(items: list[Any]) -> ParseResult:
    """Item by item: every check, naming the item and field of a bad one."""
    result = ParseResult()
    rows = result.rows
    not_money: dict[str, int] = {}
    for number, item in enumerate(items, start=1):
        try:
            rows.extend(_item_rows(number, item))
        except NotMoney as skip:
            not_money[skip.status] = not_money.get(skip.status, 0) + 1
        except LineError as exc:
            result.bad.append(Bad(number, exc.field, exc.reason, _raw(item)))
    if not_money:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(not_money.items()))
        result.checks.append(
            f"{sum(not_money.values())} PIX items moved no money and are not lines ({counts})"
        )
    return result


def _raw(item: Any) -> str:
    try:
        return json.dumps(item, ensure_ascii=False, sort_keys=True)[:2000]
    except (TypeError, ValueError):
        return repr(item)[:2000]


def parse_file(path: Path) -> ParseResult:
    """Parse an API Pix JSON file (UTF-8, BOM tolerated)."""
    fast = _arrow_file(path)
    if fast is not None:
        return fast
    text = path.read_bytes().decode("utf-8-sig")
    return parse_documents(json_documents(text, str(path)), str(path))
