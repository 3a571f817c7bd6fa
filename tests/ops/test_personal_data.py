"""Personal data stays out of every file recon writes (issue: LGPD; README "Security").

The demo serves a sandbox world, extracts it, imports the bank's files in every format,
reconciles and renders the report; then every file under its data dir (Parquet values,
XLSX cells, HTML, CSV, JSON, logs, the kept inbox files) is searched for the documents and
phones of the world's people, written the ways banks and the API write them.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from recon import pii
from recon.ops.demo import run_demo
from recon.sandbox.compose import build_world

SEED, DAYS, PER_DAY = 7, 3, 60


def _spellings(digits: str) -> set[str]:
    """A document or phone as banks, PSPs and the API write it."""
    out = {digits}
    if len(digits) == 11:
        out.add(f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}")
    if len(digits) == 14:
        out.add(f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}/{digits[8:12]}-{digits[12:]}")
    return out


def people_numbers() -> set[str]:
    """Every spelling of every document and phone of the demo world's people."""
    world = build_world(seed=SEED, days=DAYS, intents_per_day=PER_DAY).world
    found: set[str] = set()
    for party in world.parties:
        found |= _spellings(re.sub(r"[^0-9]", "", party.doc))
        phone = re.sub(r"[^0-9]", "", party.phone)
        found |= {phone, phone[2:], party.phone}
    for m in world.bank.movements:
        for value in (m.counterparty_document, m.counterparty_key):
            digits = re.sub(r"[^0-9]", "", value or "")
            if len(digits) in (11, 14) and "@" not in (value or ""):
                found |= _spellings(digits)
    return {s for s in found if len(re.sub(r"[^0-9]", "", s)) >= 10}


def file_texts(path: Path) -> Iterator[str]:
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        for column in table.columns:
            yield from (str(v) for v in column.to_pylist() if v is not None)
    elif path.suffix == ".xlsx":
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                yield z.read(name).decode("utf-8", "replace")
    else:
        yield path.read_bytes().decode("latin-1")


def leaks(root: Path, numbers: set[str]) -> list[tuple[str, str]]:
    pattern = re.compile("|".join(re.escape(n) for n in sorted(numbers, key=len, reverse=True)))
    bounded = re.compile(rf"(?<![0-9])(?:{pattern.pattern})(?![0-9])")
    return [
        (str(p.relative_to(root)), m.group(0))
        for p in sorted(root.rglob("*"))
        if p.is_file()
        for text in file_texts(p)
        for m in [bounded.search(text)]
        if m
    ]


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pii") / "data"
    run_demo(root, seed=SEED, days=DAYS, intents_per_day=PER_DAY, keep_data=True, quiet=True)
    return root


def test_the_world_has_people_with_documents_and_phones() -> None:
    numbers = people_numbers()
    assert sum(len(re.sub(r"[^0-9]", "", n)) == 11 for n in numbers) > 20
    assert any(n.startswith("+55") for n in numbers)


def test_no_file_the_demo_writes_holds_a_full_document_or_phone(demo_root: Path) -> None:
    numbers = people_numbers()
    assert leaks(demo_root, numbers) == []


def test_the_scan_would_see_a_leak(demo_root: Path, tmp_path: Path) -> None:
    numbers = people_numbers()
    cpf = next(n for n in sorted(numbers) if re.fullmatch(r"[0-9]{11}", n))
    (tmp_path / "leak.json").write_text(f'{{"key": "{cpf}"}}')
    assert leaks(tmp_path, numbers) == [("leak.json", cpf)]


def test_what_is_kept_is_masked_and_hashed(demo_root: Path) -> None:
    # the PSP export names each payout's PIX key whole (often a CPF or a phone)
    pairs = [
        (key, digest)
        for f in demo_root.rglob("statements/source=*/*.parquet")
        for key, digest in zip(
            pq.read_table(f).column("counterparty_key").to_pylist(),
            pq.read_table(f).column("counterparty_key_hash").to_pylist(),
            strict=True,
        )
        if digest is not None
    ]
    assert len(pairs) > 20
    assert all("*" in key and re.fullmatch(r"[0-9a-f]{32}", h) for key, h in pairs)
    intents = pq.read_table(next(demo_root.rglob("snapshots/**/*.parquet")))
    hashes = intents.column("destination_address_hash").to_pylist()
    assert any(h for h in hashes)
    assert {h for h in hashes if h} <= {h for _, h in pairs} | {None}


def test_masks_keep_what_the_rules_compare() -> None:
    assert pii.mask_document("123.456.789-09") == "***.456.789-**"
    assert pii.mask_document("12345678909") == "***456789**"
    assert pii.mask_document("11.222.333/0001-81") == "**.222.333/0001-**"
    assert pii.mask_key("+55 11 98765-4321") == "+55 11 *****-4321"
    assert pii.mask_key("ana.souza@example.com") == "ana.souza@example.com"
    assert pii.key_digest("+55 11 98765-4321") == pii.key_digest("(11) 98765-4321")
    assert pii.key_digest("739.961.068-15") == pii.key_digest("73996106815")
    assert pii.key_digest("***.961.068-**") is None
    assert pii.redact_text("OFX <DTPOSTED>20261018130953 CPF 73996106815") == (
        "OFX <DTPOSTED>20261018130953 CPF ***961068**"
    )
