"""Helpers several test packages share: a served sandbox world, and `recon` as a process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
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
