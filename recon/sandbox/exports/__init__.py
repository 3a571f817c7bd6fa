"""Statements of the sandbox bank in the formats Brazilian banks and PSPs deliver.

`export_statements(bank, out_dir)` writes, for a period (default: the whole world):

| file | format |
|---|---|
| ``pix.json`` | BACEN API Pix ``GET /pix`` body (received PIX + devoluções) |
| ``camt053.xml`` | ISO 20022 camt.053.001.08 statement (every movement) |
| ``open_finance.json`` | Open Finance Brasil accounts API transaction pages (every movement) |
| ``statement.ofx`` | OFX 1.02 SGML, Windows-1252 |
| ``extrato.cnab240`` | FEBRABAN CNAB 240 extrato, segment E |
| ``extrato_psp.csv`` | PSP CSV: UTF-8, comma, dot decimal |
| ``extrato_banco.csv`` | bank-portal CSV: cp1252, ``;``, ``1.200,00``, preamble |
| ``extrato_inter.csv`` | Banco Inter's account CSV: BOM, preamble, ``;``, no PIX ids |
| ``extrato_nubank.csv`` | Nubank's account CSV: ``Data,Valor,Identificador,Descrição`` |
| ``conta_tarifas/extrato-YYYYMMDD.ofx`` | the service's second account, one OFX per day (recon.sandbox.exports.daily) |
| ``expected_breaks.csv`` / ``expected_matches.csv`` / ``planted_faults.csv`` | ground truth |
| ``README.md`` | what each file is |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from pathlib import Path

from recon.errors import UsageError
from recon.pii import mask_key
from recon.sandbox.bank import KINDS, Bank
from recon.sandbox.exports import daily
from recon.sandbox.exports._common import local, to_bound
from recon.sandbox.exports.camt import render_camt053
from recon.sandbox.exports.cnab240 import render_cnab240
from recon.sandbox.exports.csv import (
    render_bank_csv,
    render_inter_csv,
    render_nubank_csv,
    render_psp_csv,
)
from recon.sandbox.exports.ofx import render_ofx
from recon.sandbox.exports.open_finance import render_open_finance
from recon.sandbox.exports.pix_json import render_pix_json

__all__ = ["STATEMENT_FILES", "export_statements", "render_statements"]

STATEMENT_FILES = (
    "pix.json",
    "camt053.xml",
    "open_finance.json",
    "statement.ofx",
    "extrato.cnab240",
    "extrato_psp.csv",
    "extrato_banco.csv",
    "extrato_inter.csv",
    "extrato_nubank.csv",
)


def _period(
    bank: Bank, start: date | datetime | None, end: date | datetime | None
) -> tuple[datetime, datetime]:
    lo = to_bound(start) or bank.period_start
    hi = to_bound(end) or bank.period_end
    moves = bank.sorted_movements()
    if lo is None:
        lo = moves[0].booked_at if moves else None
    if hi is None:
        hi = moves[-1].booked_at.replace(microsecond=0) if moves else None
        if hi is not None:
            hi += timedelta(seconds=1)
    if lo is None or hi is None:
        raise UsageError("the bank has no movements and no period: give start and end")
    if hi <= lo:
        raise UsageError(f"empty period: {lo.isoformat()} .. {hi.isoformat()}")
    return lo, hi


def render_statements(
    bank: Bank, start: date | datetime | None = None, end: date | datetime | None = None
) -> dict[str, bytes]:
    """Every statement format of ``[start, end)`` as bytes, by file name."""
    lo, hi = _period(bank, start, end)
    return {
        "pix.json": render_pix_json(bank, lo, hi),
        "camt053.xml": render_camt053(bank, lo, hi),
        "open_finance.json": render_open_finance(bank, lo, hi),
        "statement.ofx": render_ofx(bank, lo, hi),
        "extrato.cnab240": render_cnab240(bank, lo, hi),
        "extrato_psp.csv": render_psp_csv(bank, lo, hi),
        "extrato_banco.csv": render_bank_csv(bank, lo, hi),
        "extrato_inter.csv": render_inter_csv(bank, lo, hi),
        "extrato_nubank.csv": render_nubank_csv(bank, lo, hi),
    }


def _readme(bank: Bank, lo: datetime, hi: datetime, files: Mapping[str, bytes]) -> bytes:
    moves = bank.select(lo, hi)
    per_kind = {k: sum(1 for m in moves if m.kind == k) for k in KINDS}
    truth = bank.truth
    lines = [
        "# Sandbox statements and ground truth",
        "",
        f"World seed: {bank.seed if bank.seed is not None else 'n/a'}. "
        f"Account {bank.account.bank_name} ({bank.account.bank_code}), "
        f"agência/conta {bank.account.label}, PIX key {mask_key(bank.account.pix_key)}.",
        f"Period: {local(lo).isoformat()} to {local(hi).isoformat()} (end exclusive).",
        f"Movements: {len(moves)} (" + ", ".join(f"{k} {n}" for k, n in per_kind.items()) + ").",
        "",
        "| file | what |",
        "|---|---|",
        "| `pix.json` | BACEN API Pix `GET /pix` response: received PIX with `devolucoes` |",
        "| `camt053.xml` | ISO 20022 camt.053.001.08 statement, whole account, balances |",
        "| `open_finance.json` | Open Finance Brasil transaction pages (a JSON list of pages) |",
        "| `statement.ofx` | OFX 1.02 SGML, CHARSET 1252, whole account |",
        "| `extrato.cnab240` | FEBRABAN CNAB 240 extrato (service 04, segment E), one batch per day |",
        "| `extrato_psp.csv` | PSP export: UTF-8, comma, signed dot-decimal `valor` |",
        "| `extrato_banco.csv` | bank portal export: cp1252, `;`, `1.200,00`, preamble |",
        "| `extrato_inter.csv` | Banco Inter account export: BOM, preamble, `;`, no PIX ids |",
        "| `extrato_nubank.csv` | Nubank account export: `Data,Valor,Identificador,Descrição` |",
        "| `expected_breaks.csv` | breaks reconciliation must report: "
        "category,intent_id,end_to_end_id,expected_cents,actual_cents |",
        "| `expected_matches.csv` | matches only a heuristic pass can make: intent_id,end_to_end_id,rule |",
        "| `planted_faults.csv` | the planted fault behind each expected break |",
        "",
        "Every PIX movement carries its end-to-end id in every format (the rtrId for a",
        "devolução, whose original e2e is given beside it). The ground truth covers the whole",
        "world, as of its end (after the late events), with the default grace periods.",
    ]
    if truth is not None:
        lines += ["", "## Expected breaks", "", "| category | rows |", "|---|---|"]
        lines += [f"| {c} | {n} |" for c, n in truth.counts().items()]
        lines += ["", "## Planted faults", "", "| fault | rows |", "|---|---|"]
        lines += [f"| {c} | {n} |" for c, n in truth.fault_counts().items()]
    if bank.daily is not None:
        lines += [
            "",
            f"`{daily.FOLDER}/` holds the service's second account ({bank.daily.bank.account.label}),",
            "one OFX file per day: import the folder under its own account label,",
            f"`recon statements import {daily.FOLDER} --account {daily.ACCOUNT_LABEL}`. One day's",
            "file leaves out a fee its LEDGERBAL counts, one day's file never came: the balance",
            "walk's two `statement_balance_gap` breaks.",
        ]
    lines += ["", "Files:", ""] + [f"- `{name}`: {len(data)} bytes" for name, data in files.items()]
    return ("\n".join(lines) + "\n").encode("utf-8")


def export_statements(
    bank: Bank,
    out_dir: str | os.PathLike[str],
    start: date | datetime | None = None,
    end: date | datetime | None = None,
) -> dict[str, Path]:
    """Write every statement format of ``[start, end)`` plus the ground truth into `out_dir`.

    Returns the written paths by file name. Each file is written to a temporary name and
    renamed, so a reader never sees half a file.
    """
    lo, hi = _period(bank, start, end)
    files = render_statements(bank, lo, hi)
    if bank.truth is not None:
        files["expected_breaks.csv"] = bank.truth.breaks_csv()
        files["expected_matches.csv"] = bank.truth.matches_csv()
        files["planted_faults.csv"] = bank.truth.faults_csv()
    if bank.daily is not None:
        files |= {f"{daily.FOLDER}/{n}": data for n, data in bank.daily.files().items()}
    files["README.md"] = _readme(bank, lo, hi, files)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, data in files.items():
        target = out / name
        target.parent.mkdir(exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        written[name] = target
    return written
