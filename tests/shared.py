"""Helpers several test packages share: a served sandbox world, and `recon` as a process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest


def served_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A small sandbox world (seed 3, 2 days x 30 intents) served on loopback, with its
    statements exported: url, key, files, end (the world's clock at the end), world."""
    from recon.sandbox.compose import build_world
    from recon.sandbox.exports import STATEMENT_FILES, export_statements

    sandbox = build_world(seed=3, days=2, intents_per_day=30)
    exports = tmp_path_factory.mktemp("exports")
    export_statements(sandbox.bank, exports)
    with sandbox.running() as url:
        yield {
            "url": url,
            "key": sandbox.api_key,
            "files": [exports / name for name in STATEMENT_FILES],
            "end": sandbox.emulator.clock.now(),
            "world": sandbox.world,
        }


def run_recon(*argv: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m recon ARGV` in a child process: its exit code, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "recon", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def open_finance_fee_pages(folder: Path, pages: int = 2) -> list[Path]:
    """One Open Finance transactions request saved one page per file (page-size 1, a R$ 3,50
    fee on each), as a bank's portal delivers a request of `pages` pages: the files, in order."""
    import json

    url = (
        "https://api.banco.com.br/open-banking/accounts/v2/accounts/acc-1/transactions"
        "?fromBookingDate=2026-11-01&toBookingDate=2026-11-02&page={}&page-size=1"
    )
    fee = {
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": "DEBITO",
        "transactionName": "TARIFA PIX",
        "type": "TARIFA_SERVICOS_AVULSOS",
        "transactionAmount": {"amount": "3.5000", "currency": "BRL"},
        "transactionDateTime": "2026-11-01T15:00:00.000Z",
    }
    paths = []
    for number in range(1, pages + 1):
        page = {
            "data": [{**fee, "transactionId": f"TRF{number}"}],
            "links": {"self": url.format(number), "first": url.format(1)},
            "meta": {"totalRecords": pages, "totalPages": pages},
        }
        paths.append(folder / f"page-{number}.json")
        paths[-1].write_text(json.dumps(page))
    return paths


def payee_with_a_cpf_key(world: Any) -> tuple[str, str]:
    """(CPF, name) of a person a sandbox world pays by PIX to a key that is their CPF."""
    import re

    keys = {re.sub(r"[^0-9]", "", m.counterparty_key or "") for m in world.bank.movements}
    for party in world.parties:
        digits = re.sub(r"[^0-9]", "", party.doc)
        if len(digits) == 11 and digits in keys:
            return digits, str(party.name)
    raise AssertionError("the world pays no one to a CPF key")


def ofx_day(folder: Path, day: date, amounts: list[int], closing: int) -> Path:
    """The bank's OFX for one day: its lines (TED credits, PIX fee debits) and LEDGERBAL."""
    stamp = day.strftime("%Y%m%d")
    blocks = "".join(
        f"<STMTTRN><TRNTYPE>{'CREDIT' if cents > 0 else 'FEE'}<DTPOSTED>{stamp}1{k}0000[-3:BRT]"
        f"<TRNAMT>{cents / 100:.2f}<FITID>{stamp}{k}"
        f"<MEMO>{'TED RECEBIDA' if cents > 0 else 'TARIFA PIX'}</STMTTRN>\n"
        for k, cents in enumerate(amounts)
    )
    text = (
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>"
        "<CURDEF>BRL<BANKACCTFROM><BANKID>0341<BRANCHID>0001<ACCTID>12345-6</BANKACCTFROM>"
        f"<BANKTRANLIST><DTSTART>{stamp}<DTEND>{stamp}\n{blocks}</BANKTRANLIST>"
        f"<LEDGERBAL><BALAMT>{closing / 100:.2f}<DTASOF>{stamp}</LEDGERBAL>"
        "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    )
    path = folder / f"extrato-{stamp}.ofx"
    path.write_text(text, encoding="utf-8")
    return path


def daily_ofx(folder: Path) -> None:
    """An account's daily OFX files for 2-9 Nov 2026, as its bank sent them: the 3rd's lacks
    a R$ 50,00 fee, the 4th's never came (R$ 200,00 came in that day), the weekend has none
    (nothing moved)."""

    def nov(day: int) -> date:
        return date(2026, 11, day)

    ofx_day(folder, nov(2), [50_000, -10_000], 1_040_000)  # opens at R$ 10.000,00
    ofx_day(folder, nov(3), [30_000], 1_065_000)  # the bank's day also had the fee
    ofx_day(folder, nov(5), [-10_000], 1_075_000)
    ofx_day(folder, nov(6), [10_000], 1_085_000)
    ofx_day(folder, nov(9), [10_000], 1_095_000)
