"""Every statement format validates against its own rules (BACEN regexes, OFX, CNAB, CSV)."""

from __future__ import annotations

import csv
import io
import json
import random
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.sandbox.bank import FEE, PIX_IN, PIX_OUT, PIX_REFUND_OUT, Bank, Movement, mask_document
from recon.sandbox.exports import STATEMENT_FILES, export_statements, render_statements
from recon.sandbox.exports.cnab240 import render_cnab240
from recon.sandbox.exports.csv import PSP_HEADER
from recon.sandbox.exports.ofx import render_ofx
from recon.sandbox.truth import GroundTruth

E2E = re.compile(r"^E[0-9]{8}[0-9]{12}[a-zA-Z0-9]{11}$")
RTR = re.compile(r"^D[0-9]{8}[0-9]{12}[a-zA-Z0-9]{11}$")
TXID = re.compile(r"^[a-zA-Z0-9]{26,35}$")
VALOR = re.compile(r"^\d{1,10}\.\d{2}$")

START = datetime(2026, 10, 1, 3, 0, tzinfo=UTC)  # 2026-10-01 00:00 in São Paulo
END = datetime(2026, 10, 4, 3, 0, tzinfo=UTC)


def small_bank(seed: int = 1) -> Bank:
    """A few days of every kind of movement, with accents and markup characters in names."""
    rng = random.Random(seed)
    bank = Bank(opening_balance_cents=1_000_00, period_start=START, period_end=END, seed=seed)
    t = START + timedelta(hours=9)
    c1 = bank.receive_pix(
        rng,
        at=t,
        amount_cents=150_00,
        payer_name="João Conceição",
        payer_document="12345678909",
        payer_ispb="18236120",
        txid="3f2c1a9b8d7e4f60a1b2c3d4e5f60718",
        info_pagador="pedido ORD-000001",
    )
    c2 = bank.receive_pix(
        rng,
        at=t + timedelta(minutes=7),
        amount_cents=2_500_37,
        payer_name="Padaria Pão & Cia <ME>",
        payer_document="11222333000181",
        payer_ispb="60701190",
    )
    bank.refund_pix(rng, c2, at=t + timedelta(hours=3), amount_cents=2_500_37)
    bank.send_pix(
        rng,
        at=t + timedelta(days=1, hours=2),
        amount_cents=1_200_00,
        payee_name="Maria Ângela",
        payee_document="98765432100",
        payee_key="maria@example.com",
        payee_ispb="00000000",
        remittance="OFF-000002",
    )
    bank.charge_fee(at=t + timedelta(days=1, hours=14), amount_cents=1_50, description="TARIFA PIX")
    # a day with only a debit large enough to make the balance negative
    bank.send_pix(
        rng,
        at=t + timedelta(days=2),
        amount_cents=5_000_00,
        payee_name="Zé",
        payee_document="52998224725",
        payee_key="52998224725",
        payee_ispb="90400888",
    )
    assert c1.kind == PIX_IN
    truth = GroundTruth()
    truth.plant(
        "credit_no_intent",
        "unmatched_credit",
        intent_id=None,
        end_to_end_id=c2.end_to_end_id,
        actual_cents=c2.amount_cents,
    )
    bank.truth = truth
    return bank


# -- BACEN API Pix JSON ------------------------------------------------------------------------
def test_pix_json_matches_bacen_rules():
    bank = small_bank()
    body = json.loads(render_statements(bank)["pix.json"])
    pag = body["parametros"]["paginacao"]
    assert pag["quantidadeTotalDeItens"] == len(body["pix"]) == 2
    for item in body["pix"]:
        assert E2E.match(item["endToEndId"])
        assert VALOR.match(item["valor"])
        assert item["horario"].endswith("-03:00")
        datetime.fromisoformat(item["horario"])
        if "txid" in item:
            assert TXID.match(item["txid"])
        payer = item["pagador"]
        assert re.fullmatch(r"\*\*\*\.\d{3}\.\d{3}-\*\*", payer.get("cpf", "***.000.000-**"))
        for dev in item["devolucoes"]:
            assert RTR.match(dev["rtrId"])
            assert VALOR.match(dev["valor"])
            assert dev["status"] in {"EM_PROCESSAMENTO", "DEVOLVIDO", "NAO_REALIZADO"}
            assert dev["horario"]["liquidacao"] >= dev["horario"]["solicitacao"]
    with_refund = [i for i in body["pix"] if i["devolucoes"]]
    assert len(with_refund) == 1 and with_refund[0]["pagador"]["cnpj"].startswith("**.")


def test_pix_json_leaves_out_refunds_after_the_period():
    bank = small_bank()
    cut = START + timedelta(hours=10)  # after the credits, before the devolução
    body = json.loads(render_statements(bank, START, cut)["pix.json"])
    assert [i["devolucoes"] for i in body["pix"]] == [[], []]


# -- OFX ---------------------------------------------------------------------------------------
def read_ofx(data: bytes) -> tuple[dict[str, str], list[dict[str, str]], dict[str, str]]:
    """A tolerant OFX 1.x SGML reader: header fields, transactions, ledger balance."""
    text = data.decode("cp1252")
    head, _, body = text.replace("\r\n", "\n").partition("\n\n")
    header = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    txns = []
    for block in re.findall(r"<STMTTRN>(.*?)</STMTTRN>", body, flags=re.S):
        txns.append(dict(re.findall(r"<([A-Z0-9.]+)>([^<\n]*)", block)))
    ledger = dict(
        re.findall(
            r"<([A-Z]+)>([^<\n]*)", re.search(r"<LEDGERBAL>(.*?)</LEDGERBAL>", body, re.S).group(1)
        )
    )
    return header, txns, ledger


def test_ofx_is_sgml_latin1_and_balances():
    bank = small_bank()
    data = render_statements(bank)["statement.ofx"]
    header, txns, ledger = read_ofx(data)
    assert (
        header["DATA"] == "OFXSGML"
        and header["CHARSET"] == "1252"
        and header["ENCODING"] == "USASCII"
    )
    assert "João".encode("cp1252") in data
    assert len(txns) == len(bank.movements)
    assert len({t["FITID"] for t in txns}) == len(txns)
    total = sum(int(Decimal(t["TRNAMT"]) * 100) for t in txns)
    assert int(Decimal(ledger["BALAMT"]) * 100) == bank.opening_balance_cents + total
    memos = [t["MEMO"] for t in txns]
    assert any(m.startswith("PIX RECEBIDO E") for m in memos)
    assert any(m.startswith("PIX ENVIADO E") and m.endswith("OFF-000002") for m in memos)
    refund = next(m for m in bank.movements if m.kind == PIX_REFUND_OUT)
    assert f"DEVOLUCAO PIX {refund.end_to_end_id} REF {refund.refund_of}" in memos
    assert "Padaria Pão &amp; Cia &lt;ME&gt;" in data.decode("cp1252")
    assert {t["TRNTYPE"] for t in txns} == {"CREDIT", "DEBIT", "FEE"}
    for t in txns:
        assert re.fullmatch(r"\d{14}\[-3:BRT\]", t["DTPOSTED"])
        assert len(t.get("NAME", "")) <= 32


# -- CNAB 240 ----------------------------------------------------------------------------------
def check_cnab(data: bytes, bank: Bank, start: datetime, end: datetime) -> None:
    """Structure and arithmetic of a CNAB 240 extrato."""
    lines = data.decode("ascii").split("\r\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert all(len(line) == 240 for line in lines)
    assert lines[0][7] == "0" and lines[-1][7] == "9"
    batches = 0
    details = []
    i = 1
    while i < len(lines) - 1:
        header = lines[i]
        assert header[7] == "1" and header[8] == "E" and header[9:11] == "04"
        batches += 1
        opening = int(header[150:168]) * (1 if header[168] == "C" else -1)
        j = i + 1
        debits = credits = 0
        while lines[j][7] == "3":
            seg = lines[j]
            assert seg[13] == "E" and int(seg[8:13]) == j - i
            assert seg[3:7] == header[3:7]
            value = int(seg[150:168])
            if seg[168] == "C":
                credits += value
            else:
                assert seg[168] == "D"
                debits += value
            details.append(seg)
            j += 1
        trailer = lines[j]
        assert trailer[7] == "5"
        closing = int(trailer[150:168]) * (1 if trailer[168] == "C" else -1)
        assert int(trailer[170:176]) == j - i + 1
        assert int(trailer[176:194]) == debits and int(trailer[194:212]) == credits
        assert opening + credits - debits == closing
        i = j + 1
    trailer = lines[-1]
    assert int(trailer[17:23]) == batches and int(trailer[23:29]) == len(lines)
    moves = bank.select(start, end)
    assert len(details) == len(moves)
    for seg, m in zip(details, moves, strict=True):
        assert seg[201:240].rstrip() == (m.end_to_end_id or m.id)
    if moves:
        first_open = int(lines[1][150:168]) * (1 if lines[1][168] == "C" else -1)
        assert first_open == bank.balance_before(start)


def test_cnab240_lines_and_trailer_sums():
    bank = small_bank()
    data = render_statements(bank)["extrato.cnab240"]
    check_cnab(data, bank, START, END)
    segs = [ln for ln in data.decode("ascii").split("\r\n") if ln[7:8] == "3"]
    assert "PIX ENVIADO OFF-000002" in segs[3][176:201]
    # the balance went negative on the last day: the trailer says so with D
    last_trailer = [ln for ln in data.decode("ascii").split("\r\n") if ln[7:8] == "5"][-1]
    assert last_trailer[168] == "D"


# -- CSV ---------------------------------------------------------------------------------------
def test_psp_csv_round_trips():
    bank = small_bank()
    text = render_statements(bank)["extrato_psp.csv"].decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == PSP_HEADER
    moves = bank.sorted_movements()
    assert len(rows) == len(moves)
    for row, m in zip(rows, moves, strict=True):
        assert int(Decimal(row["valor"]) * 100) == m.amount_cents
        assert datetime.fromisoformat(row["data_hora"]) == m.booked_at
        assert row["id_transacao"] == m.id
        assert (row["end_to_end_id"] or None) == m.end_to_end_id
        if m.kind == PIX_REFUND_OUT:
            assert row["tipo"] == "DEVOLUCAO_ENVIADA"
            assert row["id_devolucao"] == m.end_to_end_id and row["e2e_original"] == m.refund_of
        if m.kind == FEE:
            assert row["tipo"] == "TARIFA" and row["end_to_end_id"] == ""
        if m.kind == PIX_OUT:
            assert row["chave_pix"] == m.counterparty_key


def test_bank_csv_round_trips():
    bank = small_bank()
    data = render_statements(bank)["extrato_banco.csv"]
    text = data.decode("cp1252")
    lines = text.split("\r\n")
    assert lines[0] == bank.account.bank_name
    assert (
        lines[1].startswith("Agência/Conta") and lines[2].startswith("Período") and lines[3] == ""
    )
    rows = list(csv.DictReader(io.StringIO("\r\n".join(lines[4:])), delimiter=";"))
    moves = bank.sorted_movements()
    assert len(rows) == len(moves)
    balance = bank.opening_balance_cents
    for row, m in zip(rows, moves, strict=True):
        cents = int(Decimal(row["Valor"].replace(".", "").replace(",", ".")) * 100)
        assert cents == m.amount_cents
        balance += cents
        assert int(Decimal(row["Saldo"].replace(".", "").replace(",", ".")) * 100) == balance
        assert re.fullmatch(r"\d{2}/\d{2}/\d{4}", row["Data"])
        assert row["Documento"] == (m.end_to_end_id or m.id)


# -- writing -----------------------------------------------------------------------------------
def test_export_writes_every_file_and_is_byte_stable(tmp_path):
    a = export_statements(small_bank(3), tmp_path / "a")
    b = export_statements(small_bank(3), tmp_path / "b")
    assert set(STATEMENT_FILES) <= set(a)
    assert {
        "expected_breaks.csv",
        "expected_matches.csv",
        "planted_faults.csv",
        "README.md",
    } <= set(a)
    for name in a:
        assert a[name].read_bytes() == b[name].read_bytes(), name
    assert not list((tmp_path / "a").glob(".*.tmp"))
    breaks = list(csv.DictReader(io.StringIO(a["expected_breaks.csv"].read_text())))
    assert breaks[0]["category"] == "unmatched_credit" and breaks[0]["intent_id"] == ""


def test_export_rejects_an_empty_period(tmp_path):
    from recon.errors import UsageError

    with pytest.raises(UsageError):
        export_statements(small_bank(), tmp_path, START, START)
    with pytest.raises(UsageError):
        export_statements(Bank(), tmp_path)


def test_bank_rejects_bad_movements():
    bank = small_bank()
    rng = random.Random(0)
    with pytest.raises(ValueError):
        bank.receive_pix(
            rng,
            at=START,
            amount_cents=0,
            payer_name="x",
            payer_document="12345678909",
            payer_ispb="18236120",
        )
    with pytest.raises(ValueError):
        bank.charge_fee(at=datetime(2026, 10, 1), amount_cents=1, description="naive")
    credit = next(m for m in bank.movements if m.kind == PIX_IN)
    with pytest.raises(ValueError):
        bank.refund_pix(rng, credit, at=END, amount_cents=credit.amount_cents + 1)
    with pytest.raises(ValueError):
        mask_document("123")


# -- properties --------------------------------------------------------------------------------
@st.composite
def ledgers(draw):
    rng = random.Random(draw(st.integers(0, 2**32)))
    bank = Bank(opening_balance_cents=draw(st.integers(-(10**8), 10**8)))
    n = draw(st.integers(0, 30))
    for _ in range(n):
        at = START + timedelta(seconds=draw(st.integers(0, 3 * 86_400 - 1)))
        amount = draw(st.integers(1, 10**9))
        kind = draw(st.sampled_from(["in", "out", "fee"]))
        if kind == "in":
            bank.receive_pix(
                rng,
                at=at,
                amount_cents=amount,
                payer_name=draw(st.text(max_size=40)),
                payer_document="12345678909",
                payer_ispb="18236120",
            )
        elif kind == "out":
            bank.send_pix(
                rng,
                at=at,
                amount_cents=amount,
                payee_name="X",
                payee_document="12345678909",
                payee_key="k",
                payee_ispb="00000000",
                remittance=draw(st.text(max_size=30)),
            )
        else:
            bank.charge_fee(at=at, amount_cents=amount, description="TARIFA")
    return bank


@settings(max_examples=40, deadline=None)
@given(ledgers())
def test_cnab_and_ofx_invariants_hold_for_any_ledger(bank: Bank):
    check_cnab(render_cnab240(bank, START, END), bank, START, END)
    _, txns, ledger = read_ofx(render_ofx(bank, START, END))
    assert len(txns) == len(bank.movements)
    total = sum(int(Decimal(t["TRNAMT"]) * 100) for t in txns)
    assert int(Decimal(ledger["BALAMT"]) * 100) == bank.opening_balance_cents + total


def test_movement_direction():
    m = Movement(id="1", kind=FEE, booked_at=START, amount_cents=-1)
    assert m.direction == "debit" and m.document_masked is None


# -- cross-check with the statement importer (engineer D's parsers), when present ---------------
def test_importer_reads_every_format_without_errors(tmp_path):
    from recon.sandbox.compose import build_world
    from recon.statements import importer

    sandbox = build_world(seed=9, days=2, intents_per_day=40)
    written = export_statements(sandbox.bank, tmp_path)
    moves = sandbox.bank.movements
    credits = [m for m in moves if m.kind == PIX_IN]
    refunds = [m for m in moves if m.kind == PIX_REFUND_OUT]
    for name in STATEMENT_FILES:
        fmt, result = importer.parse_path(written[name], "auto")
        assert not result.bad, (name, result.bad[:3])
        # parsers give python rows or (the fast CSV path) an Arrow table
        table = getattr(result, "table", None)
        rows = list(result.rows) + (table.to_pylist() if table is not None else [])
        # API Pix holds the received PIX and, inside them, their devoluções
        expected = len(credits) + len(refunds) if name == "pix.json" else len(moves)
        assert len(rows) == expected, name
        if name in ("extrato_inter.csv", "extrato_nubank.csv"):
            continue  # these banks' CSVs carry no PIX ids (the importer pairs their lines)
        text = repr(rows)
        for m in credits + refunds:
            assert m.end_to_end_id in text, (name, fmt)


def test_a_period_cut_at_midnight_states_no_balance_on_the_day_after(tmp_path):
    """END is exclusive (a local midnight): every closing balance a file states is dated on or
    before the last day covered, and equals the bank's balance there."""
    from datetime import date

    from recon.statements import importer

    bank = small_bank()
    written = export_statements(bank, tmp_path)
    last_day = date(2026, 10, 3)
    seen = 0
    for name in STATEMENT_FILES:
        _fmt, result = importer.parse_path(written[name], "auto")
        for balance in result.balances:
            assert balance.day <= last_day, (name, balance)
            if balance.side == "closing" and balance.day == last_day:
                assert balance.cents == bank.balance_before(END), (name, balance)
                seen += 1
    assert seen >= 3  # camt, CNAB 240, OFX, the bank CSV state the period's closing
