"""Benchmark: import N statement lines per format (default 1,000,000).

    .venv/bin/python bench/statements.py [--lines 1000000]
        [--formats csv,csv-inter,csv-nubank,pix-json,ofx,cnab240,camt,open-finance]

Files are generated here (fast, deterministic, realistic shapes: PIX credits with API Pix
detail, payouts, devoluções, fees) into a temp folder; generation is not timed. Each format
is imported into a fresh data directory and timed end to end (parse, line ids, dedupe,
Parquet write); "cpu s" is the process CPU time of that import (all threads); then the same
files are imported again to time the all-duplicates path. CNAB 240 is two files of 500,000
lines (its trailer counts have 6 digits). Targets on 2 cores: CSV, API Pix JSON and Open
Finance JSON < 15 s, OFX, CNAB 240 and camt.053 XML < 60 s.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from recon.config import DataDir
from recon.statements import import_statements

START = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
NAMES = ["MARIA DA SILVA", "JOAO SOUZA", "ANA PAULA LIMA", "EMPRESA X LTDA", "PEDRO ALVES"]


def _id(prefix: str, n: int, at: datetime) -> str:
    tail = "".join(ALPHABET[(n // 62**i) % 62] for i in range(6)).rjust(11, "0")
    return f"{prefix}18236120{at:%Y%m%d%H%M}{tail}"


def _movements(n: int, seed: int = 1) -> list[tuple[datetime, int, str, str, str]]:
    """(time, signed cents, kind, id, name): 70% received, 20% payouts, 5% refunds, 5% fees."""
    rng = random.Random(seed)
    out = []
    at = START
    for i in range(n):
        at += timedelta(seconds=rng.randint(1, 40))
        roll = rng.random()
        cents = rng.randint(100, 500_000)
        name = NAMES[i % len(NAMES)]
        if roll < 0.70:
            out.append((at, cents, "in", _id("E", i, at), name))
        elif roll < 0.90:
            out.append((at, -cents, "out", _id("E", i, at), name))
        elif roll < 0.95:
            out.append((at, -cents, "refund", _id("D", i, at), name))
        else:
            out.append((at, -rng.randint(10, 900), "fee", f"{i:012d}", ""))
    return out


def write_csv(moves: list, path: Path) -> int:
    tipo = {
        "in": "PIX_RECEBIDO",
        "out": "PIX_ENVIADO",
        "refund": "DEVOLUCAO_ENVIADA",
        "fee": "TARIFA",
    }
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(
            "data_hora,tipo,valor,end_to_end_id,txid,id_devolucao,e2e_original,nome_contraparte,"
            "documento_contraparte,chave_pix,descricao,id_transacao\n"
        )
        for i, (at, cents, kind, ident, name) in enumerate(moves):
            sign = "-" if cents < 0 else ""
            value = f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"
            e2e = ident if kind != "fee" else ""
            original = _id("E", i + 7, at) if kind == "refund" else ""
            fh.write(
                f"{(at - timedelta(hours=3)):%Y-%m-%dT%H:%M:%S}-03:00,{tipo[kind]},{value},{e2e},,"
                f",{original},{name},***.456.789-**,,{kind} {i},T{i:010d}\n"
            )
    return len(moves)


def _brl(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100:,}".replace(",", ".") + f",{abs(cents) % 100:02d}"


def write_csv_inter(moves: list, path: Path) -> int:
    """Inter's account export: BOM, preamble, `;`, dd/mm/yyyy, "1.234,56", running Saldo."""
    first, last = moves[0][0] - timedelta(hours=3), moves[-1][0] - timedelta(hours=3)
    balance = 10_000_000
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        fh.write(
            f"Extrato Conta Corrente \nConta ;72385499\n"
            f"Período ;{first:%d/%m/%Y} a {last:%d/%m/%Y}\nSaldo ;{_brl(balance)}\n\n"
            "Data Lançamento;Histórico;Descrição;Valor;Saldo\n"
        )
        for at, cents, kind, _ident, name in moves:
            balance += cents
            what = {"in": "Pix recebido", "out": "Pix enviado", "refund": "Pix devolvido"}
            history = what.get(kind, "Tarifa")
            text = f'"Cp :18236120-{name}"' if kind != "fee" else "Tarifa Pix"
            fh.write(
                f"{at - timedelta(hours=3):%d/%m/%Y};{history};{text};{_brl(cents)};"
                f"{_brl(balance)}\n"
            )
    return len(moves)


def write_csv_nubank(moves: list, path: Path) -> int:
    """Nubank's account export: `Data,Valor,Identificador,Descrição`, dot decimals."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("Data,Valor,Identificador,Descrição\n")
        for i, (at, cents, kind, _ident, name) in enumerate(moves):
            sign = "-" if cents < 0 else ""
            value = f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"
            verb = {"in": "recebida", "out": "enviada"}.get(kind)
            if verb:
                text = (
                    f"Transferência {verb} pelo Pix - {name} - •••.456.789-•• - "
                    "NU PAGAMENTOS - IP (0260) Agência: 1 Conta: 1234567-8"
                )
            elif kind == "refund":
                text = f"Reembolso enviado pelo Pix - {name}"
            else:
                text = "Tarifa"
            fh.write(
                f"{at - timedelta(hours=3):%d/%m/%Y},{value},{i:08x}-0000-4000-8000-{i:012x},{text}\n"
            )
    return len(moves)


def write_pix_json(moves: list, path: Path, page: int = 1000) -> int:
    """Saved GET /pix pages, one body per line; received PIX and their devoluções."""
    items = []
    lines = 0
    for i, (at, cents, kind, ident, name) in enumerate(moves):
        if kind in ("out", "fee"):
            continue
        local = f"{(at - timedelta(hours=3)):%Y-%m-%dT%H:%M:%S}-03:00"
        item = {
            "endToEndId": ident if kind == "in" else _id("E", i, at),
            "valor": f"{abs(cents) // 100}.{abs(cents) % 100:02d}",
            "chave": "11222333000181",
            "horario": local,
            "infoPagador": f"pedido {i}",
            "pagador": {"nome": name, "cpf": "***.456.789-**"},
            "devolucoes": [],
        }
        lines += 1
        if kind == "refund":
            item["devolucoes"] = [
                {
                    "id": f"DEV{i}",
                    "rtrId": ident,
                    "valor": item["valor"],
                    "horario": {"solicitacao": local, "liquidacao": local},
                    "status": "DEVOLVIDO",
                }
            ]
            lines += 1
        items.append(item)
    with path.open("w", encoding="utf-8") as fh:
        for start in range(0, len(items), page):
            chunk = items[start : start + page]
            body = {
                "parametros": {"paginacao": {"paginaAtual": start // page, "itensPorPagina": page}},
                "pix": chunk,
            }
            fh.write(json.dumps(body, ensure_ascii=False) + "\n")
    return lines


def write_ofx(moves: list, path: Path) -> int:
    memo = {"in": "PIX RECEBIDO", "out": "PIX ENVIADO", "refund": "DEVOLUCAO PIX", "fee": "TARIFA"}
    with path.open("w", encoding="cp1252", newline="") as fh:
        fh.write(
            "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nENCODING:USASCII\r\nCHARSET:1252\r\n"
            "\r\n<OFX>\r\n<BANKMSGSRSV1>\r\n<STMTTRNRS>\r\n<STMTRS>\r\n<CURDEF>BRL\r\n"
            "<BANKTRANLIST>\r\n"
        )
        for i, (at, cents, kind, ident, name) in enumerate(moves):
            sign = "-" if cents < 0 else ""
            value = f"{sign}{abs(cents) // 100},{abs(cents) % 100:02d}"  # comma decimals
            text = f"{memo[kind]} {ident} {name}" if kind != "fee" else "TARIFA PIX"
            fh.write(
                f"<STMTTRN>\r\n<TRNTYPE>{'CREDIT' if cents > 0 else 'DEBIT'}\r\n"
                f"<DTPOSTED>{(at - timedelta(hours=3)):%Y%m%d%H%M%S}[-3:GMT]\r\n"
                f"<TRNAMT>{value}\r\n<FITID>{i:012d}\r\n<MEMO>{text}\r\n</STMTTRN>\r\n"
            )
        fh.write(
            "</BANKTRANLIST>\r\n<LEDGERBAL>\r\n<BALAMT>\r\n</LEDGERBAL>\r\n</STMTRS>\r\n"
            "</STMTTRNRS>\r\n</BANKMSGSRSV1>\r\n</OFX>\r\n"
        )
    return len(moves)


def write_camt(moves: list, path: Path) -> int:
    """One camt.053.001.08 statement: opening/closing balances, one booked Ntry per line with
    its TxDtls (EndToEndId, the counterparty, the remittance text)."""
    memo = {"in": "PIX RECEBIDO", "out": "PIX ENVIADO", "refund": "DEVOLUCAO PIX", "fee": "TARIFA"}
    total = sum(c for _, c, *_ in moves)
    opening = 10**12
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:'
            'tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>B1</MsgId>'
            "<CreDtTm>2026-12-31T00:00:00-03:00</CreDtTm></GrpHdr><Stmt><Id>S1</Id>"
            "<Acct><Id><Othr><Id>0001/1234567-8</Id></Othr></Id><Ccy>BRL</Ccy></Acct>"
            f'<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="BRL">{opening // 100}.00'
            "</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-01</Dt></Dt></Bal>"
            '<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="BRL">'
            f"{(opening + total) // 100}.{(opening + total) % 100:02d}</Amt>"
            "<CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-31</Dt></Dt></Bal>\n"
        )
        for i, (at, cents, kind, ident, name) in enumerate(moves):
            side, role = ("CRDT", "Dbtr") if cents > 0 else ("DBIT", "Cdtr")
            value = f"{abs(cents) // 100}.{abs(cents) % 100:02d}"
            local = (at - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S-03:00")
            details = (
                f"<NtryDtls><TxDtls><Refs><EndToEndId>{ident}</EndToEndId></Refs>"
                f"<RltdPties><{role}><Pty><Nm>{name}</Nm></Pty></{role}></RltdPties>"
                f"<RmtInf><Ustrd>{kind} {i}</Ustrd></RmtInf></TxDtls></NtryDtls>"
                if kind != "fee"
                else ""
            )
            text = f"{memo[kind]} {ident} {name}" if kind != "fee" else "TARIFA PIX"
            fh.write(
                f'<Ntry><Amt Ccy="BRL">{value}</Amt><CdtDbtInd>{side}</CdtDbtInd>'
                f"<Sts><Cd>BOOK</Cd></Sts><BookgDt><DtTm>{local}</DtTm></BookgDt>"
                f"<ValDt><Dt>{local[:10]}</Dt></ValDt><AcctSvcrRef>{i:012d}</AcctSvcrRef>"
                f"{details}<AddtlNtryInf>{text}</AddtlNtryInf></Ntry>\n"
            )
        fh.write("</Stmt></BkToCstmrStmt></Document>\n")
    return len(moves)


def write_open_finance(moves: list, path: Path, page: int = 1000) -> int:
    """Open Finance Brasil transaction pages of 1,000 items, one page per line."""
    memo = {"in": "PIX RECEBIDO", "out": "PIX ENVIADO", "refund": "DEVOLUCAO PIX", "fee": "TARIFA"}
    pages = (len(moves) + page - 1) // page
    base = "https://bank.example/open-banking/accounts/v2/accounts/acc-1/transactions"
    with path.open("w", encoding="utf-8") as fh:
        for p in range(pages):
            items = []
            for i in range(p * page, min(len(moves), (p + 1) * page)):
                at, cents, kind, ident, name = moves[i]
                items.append(
                    {
                        "transactionId": ident,
                        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
                        "creditDebitType": "CREDITO" if cents > 0 else "DEBITO",
                        "transactionName": f"{memo[kind]} {name}".strip(),
                        "type": "TARIFA_SERVICOS_AVULSOS" if kind == "fee" else "PIX",
                        "transactionAmount": {
                            "amount": f"{abs(cents) // 100}.{abs(cents) % 100:02d}00",
                            "currency": "BRL",
                        },
                        "transactionDateTime": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                        "partieCnpjCpf": "43908445778",
                        "partiePersonType": "PESSOA_NATURAL",
                    }
                )
            query = f"fromBookingDate=2026-01-01&toBookingDate=2026-12-31&page={p + 1}"
            body = {
                "data": items,
                "links": {"self": f"{base}?{query}"},
                "meta": {"totalRecords": len(moves), "totalPages": pages},
            }
            fh.write(json.dumps(body, separators=(",", ":")) + "\n")
    return len(moves)


def _rec(*parts: str) -> str:
    line = "".join(parts)
    assert len(line) == 240, len(line)
    return line


def write_cnab(moves: list, path: Path) -> int:
    """CNAB 240 files of at most 500,000 details (the trailer counts have 6 digits, so one
    file holds < 1M records): path, path.2, ...; one batch per local day."""
    total = 0
    for part, start in enumerate(range(0, len(moves), 500_000)):
        target = path if part == 0 else path.with_name(f"{path.name}.{part + 1}")
        total += _write_cnab_file(moves[start : start + 500_000], target)
    return total


def _write_cnab_file(moves: list, path: Path) -> int:
    """One CNAB 240 file; balances and trailers consistent."""
    hist = {
        "in": "PIX RECEBIDO",
        "out": "PIX ENVIADO",
        "refund": "DEVOLUCAO PIX",
        "fee": "TARIFA PIX",
    }
    company = (
        "2"
        + "11222333000181"
        + " " * 20
        + "00001"
        + " "
        + "000000123456"
        + "7"
        + " "
        + "RECON BENCH LTDA".ljust(30)
    )
    records = 0
    batches = 0
    balance = 10**12
    with path.open("w", encoding="ascii", newline="") as fh:
        fh.write(
            _rec(
                "3410000",
                "0",
                " " * 9,
                company,
                " " * 40,
                "2",
                "01012026",
                "000000",
                "000001",
                "089",
                "01600",
                " " * 69,
            )
            + "\r\n"
        )
        records += 1
        by_day: dict[str, list] = {}
        for m in moves:
            by_day.setdefault(f"{(m[0] - timedelta(hours=3)):%d%m%Y}", []).append(m)
        for day, day_moves in by_day.items():
            batches += 1
            lot = f"{batches:04d}"
            sign = "C"
            fh.write(
                _rec(
                    "341",
                    lot,
                    "1",
                    "E",
                    "04",
                    "40",
                    "033",
                    " ",
                    company,
                    " " * 40,
                    day,
                    f"{balance:018d}",
                    sign,
                    "F",
                    "BRL",
                    "00001",
                    " " * 62,
                )
                + "\r\n"
            )
            debits = credits = 0
            for seq, (_, cents, kind, ident, _) in enumerate(day_moves, start=1):
                if cents < 0:
                    debits -= cents
                else:
                    credits += cents
                fh.write(
                    _rec(
                        "341",
                        lot,
                        "3",
                        f"{seq:05d}",
                        "E",
                        "   ",
                        company,
                        " " * 6,
                        "DPV",
                        "00",
                        " " * 20,
                        "S",
                        day,
                        day,
                        f"{abs(cents):018d}",
                        "C" if cents > 0 else "D",
                        "105" if kind == "fee" else "213",
                        "0001",
                        hist[kind].ljust(25),
                        ident.ljust(39),
                    )
                    + "\r\n"
                )
            balance += credits - debits
            fh.write(
                _rec(
                    "341",
                    lot,
                    "5",
                    " " * 9,
                    company[:55],
                    " " * 16,
                    "0" * 54,
                    day,
                    f"{balance:018d}",
                    "C",
                    "F",
                    f"{len(day_moves) + 2:06d}",
                    f"{debits:018d}",
                    f"{credits:018d}",
                    " " * 28,
                )
                + "\r\n"
            )
            records += len(day_moves) + 2
        records += 1
        fh.write(
            _rec(
                "341", "9999", "9", " " * 9, f"{batches:06d}", f"{records:06d}", "000001", " " * 205
            )
            + "\r\n"
        )
    return len(moves)


WRITERS = {
    "csv": write_csv,
    "csv-inter": write_csv_inter,
    "csv-nubank": write_csv_nubank,
    "pix-json": write_pix_json,
    "ofx": write_ofx,
    "cnab240": write_cnab,
    "camt": write_camt,
    "open-finance": write_open_finance,
}
SUFFIX = {
    "csv": "extrato_psp.csv",
    "csv-inter": "extrato_inter.csv",
    "csv-nubank": "extrato_nubank.csv",
    "pix-json": "pix.json",
    "ofx": "statement.ofx",
    "cnab240": "extrato.cnab240",
    "camt": "camt053.xml",
    "open-finance": "open_finance.json",
}
TARGET = {
    "csv": 15.0,
    "csv-inter": 15.0,
    "csv-nubank": 15.0,
    "pix-json": 15.0,
    "ofx": 60.0,
    "cnab240": 60.0,
    "camt": 60.0,
    "open-finance": 15.0,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument(
        "--formats", default="csv,csv-inter,csv-nubank,pix-json,ofx,cnab240,camt,open-finance"
    )
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="recon-bench-statements-"))
    work.mkdir(parents=True, exist_ok=True)
    moves = _movements(args.lines)
    # pix-json holds only received PIX and devoluções: give it enough movements for N lines
    print(
        f"{'format':<10}{'lines':>10}{'MB':>8}{'import s':>10}{'cpu s':>8}{'lines/s':>12}"
        f"{'again s':>9}  target"
    )
    try:
        for fmt in args.formats.split(","):
            source = moves
            if fmt == "pix-json":  # holds received PIX and devoluções only (75% of movements)
                source = _movements(int(args.lines / 0.75) + 10, seed=2)
            path = work / SUFFIX[fmt]
            lines = WRITERS[fmt](source, path)
            files = sorted(work.glob(SUFFIX[fmt] + "*"))
            data = DataDir(work / f"data-{fmt}").ensure()
            t0, c0 = time.perf_counter(), time.process_time()
            fmt_in = "csv" if fmt.startswith("csv") else fmt  # bank shapes: sniffed
            report = import_statements(files, data, format=fmt_in)
            took, cpu = time.perf_counter() - t0, time.process_time() - c0
            assert report.read == lines == report.imported, (report, lines)
            t1 = time.perf_counter()
            again = import_statements(files, data, format=fmt_in)
            took_again = time.perf_counter() - t1
            assert again.imported == 0 and again.duplicate == lines
            size = sum(f.stat().st_size for f in files) / 1e6
            verdict = "ok" if took < TARGET[fmt] else "SLOW"
            print(
                f"{fmt:<10}{lines:>10}{size:>8.0f}{took:>10.1f}{cpu:>8.1f}{lines / took:>12,.0f}"
                f"{took_again:>9.1f}  < {TARGET[fmt]:.0f} s {verdict}",
                flush=True,
            )
            for f in files:
                f.unlink()
            shutil.rmtree(data.root)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
