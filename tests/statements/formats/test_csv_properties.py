"""Generated bank CSVs of every shape round-trip to the exact cents; mutants never crash."""

from __future__ import annotations

import csv
import io
import random
from datetime import date, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.errors import StatementError, UsageError
from recon.money import format_cents
from recon.statements.formats.csv import parse_file, resolve_profile

# header, how money is written: signed | split | indicator | card (positive = purchase)
SHAPES = [
    (("Data", "Valor", "Identificador", "Descrição"), "signed"),
    (("Data Lançamento", "Histórico", "Descrição", "Valor", "Saldo"), "signed"),
    (("Data", "Histórico", "Docto.", "Crédito (R$)", "Débito (R$)", "Saldo (R$)"), "split"),
    (("Conta", "Data_Mov", "Nr_Doc", "Historico", "Valor", "Deb_Cred"), "indicator"),
    (
        (
            "RELEASE_DATE",
            "TRANSACTION_TYPE",
            "REFERENCE_ID",
            "TRANSACTION_NET_AMOUNT",
            "PARTIAL_BALANCE",
        ),
        "signed",
    ),
    (("date", "title", "amount"), "card"),
    (("Date", "Description", "Amount", "Balance"), "signed"),
]
DATE_STYLES = ["%d/%m/%Y", "%Y-%m-%d", "%d/%m/%y", "%d-%m-%Y", "%Y%m%d", "%d/%m/%Y %H:%M:%S"]
TEXTS = ["PIX RECEBIDO - MARIA", "Pix enviado: JOÃO AÇAÍ", "TARIFA", "Compra no débito", "TED"]
PREAMBLES = ["Extrato Conta Corrente", "Conta ;72385499", "Período: 01/11/2026 a 30/11/2026", ""]


def _render(
    shape: int,
    cents: list[int],
    days: list[date],
    delimiter: str,
    mark: str,
    grouped: bool,
    date_style: str,
    preamble: list[str],
    seed: int,
) -> str:
    header, how = SHAPES[shape]
    rng = random.Random(seed)
    out = io.StringIO()
    for line in preamble:
        out.write(line + "\n")
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    thousands = ("." if mark == "," else ",") if grouped else ""

    def money(c: int) -> str:
        return format_cents(c, decimal_mark=mark, thousands=thousands)

    balance = 0
    for i, (c, day) in enumerate(zip(cents, days, strict=True)):
        balance += c
        when = day.strftime(date_style)
        text = rng.choice(TEXTS)
        row: dict[str, str] = {}
        for name in header:
            n = name.lower()
            if n in ("data", "data lançamento", "data_mov", "release_date", "date"):
                row[name] = when
            elif n in ("valor", "transaction_net_amount", "amount"):
                if how == "indicator":
                    row[name] = money(abs(c))
                elif how == "card":
                    row[name] = money(-c)
                else:
                    row[name] = money(c)
            elif n.startswith("crédito"):
                row[name] = money(c) if c > 0 else ""
            elif n.startswith("débito"):
                row[name] = money(c) if c < 0 else ""
            elif n.startswith(("saldo", "partial_balance", "balance")):
                row[name] = money(balance)
            elif n == "deb_cred":
                row[name] = "D" if c < 0 else "C"
            elif n in ("identificador", "docto.", "nr_doc", "reference_id"):
                row[name] = f"ID{i:06d}"
            elif n == "conta":
                row[name] = "0001"
            else:
                row[name] = text
        writer.writerow([row[h] for h in header])
    return out.getvalue()


money_st = st.integers(min_value=-(10**13), max_value=10**13).filter(lambda c: c != 0)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.integers(0, len(SHAPES) - 1),
    cents=st.lists(money_st, min_size=1, max_size=25),
    start=st.dates(date(2001, 1, 1), date(2040, 12, 1)),
    delimiter=st.sampled_from([";", ",", "\t", "|"]),
    mark=st.sampled_from([",", "."]),
    grouped=st.booleans(),
    date_style=st.sampled_from(DATE_STYLES),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "latin-1"]),
    preamble=st.lists(st.sampled_from(PREAMBLES), max_size=4),
    seed=st.integers(0, 1000),
)
def test_generated_bank_csv_round_trips(
    tmp_path: Path,
    shape,
    cents,
    start,
    delimiter,
    mark,
    grouped,
    date_style,
    encoding,
    preamble,
    seed,
) -> None:
    days = [start + timedelta(days=i // 3) for i in range(len(cents))]
    text = _render(shape, cents, days, delimiter, mark, grouped, date_style, preamble, seed)
    path = tmp_path / "gen.csv"
    path.write_bytes(text.encode(encoding))
    try:
        result = parse_file(path, resolve_profile(None, path))
    except StatementError as exc:
        # a file of no named layout whose amounts carry no sign while a text says debit is
        # refused (the direction is not guessed); never when some amount is signed
        assert "the amounts carry no sign" in str(exc)
        assert SHAPES[shape][1] == "signed" and all(c > 0 for c in cents)
        return
    assert result.bad == []
    rows = result.all_rows()
    assert [r[2] for r in rows] == cents
    assert [r[1][:10] for r in rows] == [d.isoformat() for d in days]
    assert [r[3] for r in rows] == ["debit" if c < 0 else "credit" for c in cents]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    pos = rng.randrange(len(data)) if data else 0
    how = rng.randrange(6)
    if how == 0:
        return data[:pos]  # truncated
    if how == 1:
        return data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :]  # a byte flipped
    if how == 2:
        return data[:pos] + b"\x00" + data[pos:]  # a NUL
    if how == 3:
        return data[:pos] + b"\xff\xfe" + data[pos:]  # bytes that are not UTF-8
    if how == 4:
        return data[:pos] + b"9" * rng.randrange(1, 40) + data[pos:]  # digits inserted
    return data[:pos] + data[pos:].replace(b"\n", b"\n\n", 1)  # a blank line


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.integers(0, len(SHAPES) - 1),
    cents=st.lists(money_st, min_size=1, max_size=10),
    seed=st.integers(0, 10**6),
)
def test_mutated_bank_csv_exact_or_one_clear_error(tmp_path: Path, shape, cents, seed) -> None:
    rng = random.Random(seed)
    days = [date(2026, 11, 1) + timedelta(days=i) for i in range(len(cents))]
    text = _render(shape, cents, days, ";", ",", True, "%d/%m/%Y", ["Extrato"], seed)
    data = _mutate(text.encode("utf-8"), rng)
    path = tmp_path / "mut.csv"
    path.write_bytes(data)
    try:
        result = parse_file(path, resolve_profile(None, path))
    except (StatementError, UsageError) as exc:
        assert "\n" not in str(exc)
        return
    for row in result.all_rows():
        assert isinstance(row[2], int) and -(2**63) < row[2] < 2**63
        assert row[3] == ("debit" if row[2] < 0 else "credit")
    # a line read from an unchanged row is read exactly: every amount is one of the originals
    # (a mutated row can only change its own amount, never the others)
    originals = set(cents) | {-c for c in cents}
    unchanged = [r for r in result.all_rows() if r[2] in originals]
    assert len(unchanged) >= len(result.all_rows()) - 1
