"""Personal data stays out of every file recon writes (LGPD; docs/security.md).

The demo serves a sandbox world, extracts it, imports the bank's files in every format,
reconciles and renders the report; then every file under its data dir (Parquet values,
XLSX cells, HTML, CSV, JSON, logs, the kept inbox files) is searched for the documents and
phones of the world's people, written the ways banks and the API write them.
"""

from __future__ import annotations

import re
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from recon import pii
from recon.ops.demo import run_demo
from recon.sandbox.compose import build_world
from tests.shared import payee_with_a_cpf_key

SEED, DAYS, PER_DAY = 7, 3, 60


def _spellings(digits: str) -> set[str]:
    """A document or phone as banks, PSPs and the API write it."""
    out = {digits}
    if len(digits) == 11:
        out.add(f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}")
    if len(digits) == 14:
        out.add(f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}/{digits[8:12]}-{digits[12:]}")
    return out


def people_numbers(world: Any = None) -> set[str]:
    """Every spelling of every document and phone of a world's people (the demo's)."""
    world = world or build_world(seed=SEED, days=DAYS, intents_per_day=PER_DAY).world
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
    # masked already (Nubank writes bullets): kept, every mask character written as '*'
    assert pii.mask_document("•••.876.933-••") == "***.876.933-**"
    assert pii.mask_document("***.876.933-**") == "***.876.933-**"
    assert pii.mask_document("XXX.876.933-XX") == "***.876.933-**"
    assert pii.mask_key("+55 11 98765-4321") == "+55 11 *****-4321"
    assert pii.mask_key("ana.souza@example.com") == "ana.souza@example.com"
    assert pii.key_digest("+55 11 98765-4321") == pii.key_digest("(11) 98765-4321")
    assert pii.key_digest("739.961.068-15") == pii.key_digest("73996106815")
    assert pii.key_digest("***.961.068-**") is None
    assert pii.redact_text("OFX <DTPOSTED>20261018130953 CPF 73996106815") == (
        "OFX <DTPOSTED>20261018130953 CPF ***961068**"
    )
    # Banco do Brasil's 14-digit form of a CPF (000 and the CPF) is a CPF
    assert (
        pii.redact_text("Pix - Recebido 00073996106815 JOAO")
        == "Pix - Recebido 000***961068** JOAO"
    )


def test_logs_and_errors_mask_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from recon.cli import main

    record = logging.LogRecord(
        "recon", logging.INFO, __file__, 1, "payout to %s", ("73996106815",), None
    )
    assert pii.PersonalDataFilter().filter(record)
    assert record.getMessage() == "payout to ***961068**"
    bad = tmp_path / "pix.json"
    bad.write_text('{"pix": [{"valor": "1.00", "pagador": {"cpf": "739.961.068-15"}}')
    code = main(["statements", "import", str(bad), "--data", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("recon: error:")
    assert "739.961.068-15" not in err


def _column_values(root: Path, glob: str, column: str) -> list[object]:
    return [v for f in root.glob(glob) for v in pq.read_table(f).column(column).to_pylist()]


def test_erase_removes_a_person_and_keeps_the_money_trail(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from recon.cli import main

    data = tmp_path / "data"
    shutil.copytree(demo_root / f"demo-{SEED}", data)
    cpf, name = payee_with_a_cpf_key(
        build_world(seed=SEED, days=DAYS, intents_per_day=PER_DAY).world
    )
    digest = pii.digest(cpf)
    assert digest in _column_values(data, "snapshots/**/*.parquet", "destination_address_hash")
    lines_before = len(_column_values(data, "statements/source=*/*.parquet", "line_id"))
    names_before = _column_values(data, "statements/source=*/*.parquet", "counterparty_name")
    started = time.time_ns()

    assert (
        main(
            [
                "erase",
                "--document",
                f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}",
                "--data",
                str(data),
            ]
        )
        == 0
    )
    assert "erased:" in capsys.readouterr().out

    assert digest not in _column_values(data, "snapshots/**/*.parquet", "destination_address_hash")
    assert digest not in _column_values(
        data, "statements/source=*/*.parquet", "counterparty_key_hash"
    )
    # a rewritten snapshot part keeps extract's layout: no dictionary for the raw JSON
    rewritten = [p for p in data.glob("snapshots/**/*.parquet") if p.stat().st_mtime_ns > started]
    assert rewritten
    for part in rewritten:
        group = pq.ParquetFile(part).metadata.row_group(0)
        raw = next(
            group.column(i)
            for i in range(group.num_columns)
            if group.column(i).path_in_schema == "raw"
        )
        assert group.num_rows <= 8_192 and "RLE_DICTIONARY" not in raw.encodings, part
    # the money trail stays: every line is still there, only the person's fields emptied
    assert len(_column_values(data, "statements/source=*/*.parquet", "line_id")) == lines_before
    names_after = _column_values(data, "statements/source=*/*.parquet", "counterparty_name")
    assert 0 < names_after.count(None) - names_before.count(None) < len(names_before) // 2
    masked = pii.mask_document(cpf)
    assert leaks(data / "runs", {masked}) == [] and leaks(data / "reports", {masked}) == []
    stored = [
        t for p in (data / "runs").rglob("*") if p.is_file() for t in file_texts(p) if name in t
    ]
    assert stored == []
    # the data dir still reconciles
    assert main(["reconcile", "--data", str(data)]) in (0, 1)


def test_erase_refuses_what_is_not_a_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recon.cli import main

    assert main(["erase", "--document", "12345", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recon: error:") and "CPF" in err and len(err.splitlines()) == 1


def test_an_import_stores_documents_masked_and_hashed(tmp_path: Path) -> None:
    import json

    from recon.catalog import connect
    from recon.config import DataDir
    from recon.statements import import_statements

    payload = {
        "parametros": {"inicio": "2026-11-01T00:00:00-03:00", "fim": "2026-11-02T00:00:00-03:00"},
        "pix": [
            {
                "endToEndId": "E18236120202611011000s0123456789",
                "valor": "110.00",
                "chave": "+55 11 98765-4321",
                "horario": "2026-11-01T10:00:00-03:00",
                "infoPagador": "CPF 739.961.068-15 pagando",
                "pagador": {"nome": "Maria da Silva", "cpf": "73996106815"},
            }
        ],
    }
    source = tmp_path / "pix.json"
    source.write_text(json.dumps(payload))
    data = DataDir(tmp_path / "data").ensure()
    import_statements([source], data)
    row = connect(data).sql("select * from statement_lines").to_arrow_table().to_pylist()[0]
    assert row["counterparty_document"] == "***961068**"
    assert row["counterparty_document_hash"] == pii.digest("73996106815")
    assert row["counterparty_key"] == "+55 11 *****-4321"
    assert row["counterparty_key_hash"] == pii.key_digest("11987654321")
    assert leaks(data.root, {"73996106815", "739.961.068-15", "11987654321"}) == []


def _cpf(base: int) -> str:
    d = [int(c) for c in f"{base:09d}"]
    for n in (9, 10):
        d.append(sum(v * (n + 1 - i) for i, v in enumerate(d[:n])) * 10 % 11 % 10)
    return "".join(map(str, d))


@settings(max_examples=300, deadline=None)
@given(
    base=st.integers(min_value=1_000_000, max_value=999_999_998),
    formatted=st.booleans(),
    before=st.text(alphabet=st.characters(blacklist_categories=("Nd",)), max_size=20),
    after=st.text(alphabet=st.characters(blacklist_categories=("Nd",)), max_size=20),
)
def test_redact_text_never_leaves_a_cpf_whole(
    base: int, formatted: bool, before: str, after: str
) -> None:
    cpf = _cpf(base)
    assume(len(set(cpf)) > 1)  # 111.111.111-11 and the like are not CPFs
    shown = f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}" if formatted else cpf
    text = before + shown + after
    out = pii.redact_text(text)
    assert shown not in out and len(out) == len(text)
    assert out == before + pii.mask_document(shown) + after


@settings(max_examples=300, deadline=None)
@example(base=7_313_565)  # 00000731356586: 000 + a CPF that is also a valid CNPJ
@given(base=st.integers(min_value=1_000_000, max_value=999_999_998))
def test_banco_do_brasil_s_14_digit_cpf_is_read_as_the_cpf(base: int) -> None:
    """Banco do Brasil writes a payer's CPF as 000 and the CPF. About one in a hundred of
    those 14 digits also pass a CNPJ's check: read as a CNPJ, the CPF was stored whole and
    contradicted the intent's masked CPF (11 digits against 14)."""
    cpf = _cpf(base)
    assume(len(set(cpf)) > 1)
    assert pii.bare_document("000" + cpf) == cpf
    assert pii.redact_text("000" + cpf) == "000" + pii.mask_document(cpf)


def test_redact_text_reads_json_s_escaped_solidus_in_a_cnpj() -> None:
    # a log line or error message quoting a JSON body whose encoder escaped '/'
    text = '{"chave":"11.222.333\\/0001-81"}'
    assert pii.redact_text(text) == '{"chave":"**.222.333\\/0001-**"}'
