"""The seeded mutation fuzzer over every parser, and the crashers it found (kept as fixtures).

A few thousand cases in bounded time: every seed file of every format (API Pix JSON, camt,
Open Finance, OFX 1.x and 2.x, CNAB 240, both CSV shapes) through every mutation, with the
format given and sniffed. See tests/statements/fuzzing.py for the contract each case meets.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from .conftest import FIXTURES
from .fuzzing import MUTATIONS, read_case

SEEDS = {
    "pix.json": "pix-json",
    "camt053_v02.xml": "camt",
    "camt053_v08.xml": "camt",
    "camt054.xml": "camt",
    "open_finance_page.json": "open-finance",
    "statement.ofx": "ofx",
    "statement_v2.ofx": "ofx",
    "extrato.cnab240": "cnab240",
    "extrato_psp.csv": "csv",
    "extrato_banco.csv": "csv",
}
CASES_PER_SEED = 300  # x 10 seeds = 3,000 cases
CRASHERS = FIXTURES / "fuzz"


@pytest.mark.parametrize("seed_name", sorted(SEEDS))
def test_mutants_never_crash(tmp_path: Path, seed_name: str) -> None:
    fmt = SEEDS[seed_name]
    original = (FIXTURES / seed_name).read_bytes()
    rng = random.Random(f"recon-fuzz-{seed_name}")
    started = time.monotonic()
    for case in range(CASES_PER_SEED):
        mutation = MUTATIONS[case % len(MUTATIONS)]
        data = mutation(original, rng)
        if rng.random() < 0.3:
            data = MUTATIONS[rng.randrange(len(MUTATIONS))](data, rng)
        path = tmp_path / f"case{case}{Path(seed_name).suffix}"
        path.write_bytes(data)
        given = fmt if case % 2 else "auto"
        try:
            read_case(path, given)
        except Exception as exc:  # a crasher: keep it and say how to reproduce
            CRASHERS.mkdir(exist_ok=True)
            keep = CRASHERS / f"new-{seed_name}-{case}{Path(seed_name).suffix}"
            keep.write_bytes(data)
            raise AssertionError(
                f"{seed_name} case {case} ({mutation.__name__}, format {given}) crashed: "
                f"{type(exc).__name__}: {str(exc)[:300]}; kept as {keep}"
            ) from exc
        path.unlink()
    assert time.monotonic() - started < 60


def _crashers() -> list[Path]:
    return (
        sorted(p for p in CRASHERS.iterdir() if not p.name.startswith("new-"))
        if CRASHERS.is_dir()
        else []
    )


@pytest.mark.parametrize("path", _crashers(), ids=lambda p: p.name)
def test_crashers_found_before(path: Path) -> None:
    """Each file once crashed a parser; now it is read or refused in one line."""
    fmt = path.name.split("--")[0]
    read_case(path, fmt)
    read_case(path, "auto")


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("cnab240--record-cut-inside-the-e2e-id.cnab240", "numero_documento"),
        ("cnab240--amount-of-18-nines.cnab240", None),  # exact, then the sums disagree
        ("ofx--amount-over-2-63-cents.ofx", "TRNAMT"),
        ("ofx--balance-40k-characters.ofx", "BALAMT"),
        ("pix-json--valor-over-2-63-cents.json", "valor"),
        ("pix-json--integer-of-4400-digits.json", None),
        ("pix-json--e2e-with-nul.json", "end_to_end_id"),
        ("pix-json--e2e-of-100k-characters.json", "end_to_end_id"),
        ("pix-json--invalid-utf8-in-horario.json", None),
        ("camt--nul-byte.xml", "XML"),
        ("csv--field-over-128k.csv", None),
    ],
)
def test_crasher_refused_in_one_line(tmp_path: Path, name: str, field: str | None) -> None:
    """The import stops with one line naming the file (and the field, where there is one)."""
    from recon.errors import StatementError, StatementParseError
    from recon.statements import import_statements

    path = CRASHERS / name
    with pytest.raises(StatementError) as err:
        import_statements([path], tmp_path / "data")
    message = str(err.value)
    assert "\n" not in message and len(message) < 1000 and str(path) in message
    if field is not None:
        assert isinstance(err.value, StatementParseError) and err.value.field == field
