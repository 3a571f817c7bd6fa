"""Sniffing JSON: an Open Finance page is known by its envelope too (an empty page has no item
to name it), and JSON that is neither format says what it is instead of being refused as a
damaged API Pix body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recon.cli import main
from recon.config import DataDir
from recon.errors import StatementError
from recon.statements import import_statements
from recon.statements.sniff import sniff_bytes, sniff_format

from .conftest import FIXTURES

SELF = "https://api.banco.com.br/open-banking/accounts/v2/accounts/acc-1/transactions"
EMPTY_PAGE: dict[str, Any] = {
    "data": [],
    "links": {"self": f"{SELF}?fromBookingDate=2026-11-01&toBookingDate=2026-11-01"},
    "meta": {"totalRecords": 0, "totalPages": 1, "requestDateTime": "2026-11-02T09:00:00Z"},
}
# A bank's own statement body (the shape of a cooperative bank's SDK fixture): JSON, but
# neither API Pix nor Open Finance.
OTHER_JSON: dict[str, Any] = {
    "mensagens": [],
    "resultado": {
        "saldoAtual": "4302.49",
        "transacoes": [{"tipo": "DEBITO", "valor": "250.00", "data": "2023-12-01T00:00:00"}],
    },
}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(EMPTY_PAGE, indent=2),
        json.dumps([EMPTY_PAGE, EMPTY_PAGE]),
        json.dumps(EMPTY_PAGE) + "\n" + json.dumps(EMPTY_PAGE) + "\n",
    ],
)
def test_an_empty_open_finance_page_is_sniffed_by_its_envelope(
    tmp_path: Path, data_dir: DataDir, text: str
) -> None:
    path = tmp_path / "page.json"
    path.write_text(text, encoding="utf-8")
    assert sniff_format(path) == "open-finance"
    report = import_statements([path], data_dir)
    assert report.read == 0
    (per_file,) = report.per_file
    assert per_file.format == "open-finance" and per_file.coverage  # the day it asked for


def test_a_head_cut_inside_the_document_is_sniffed_by_the_keys_it_names() -> None:
    # (an Open Finance file this large names its items' keys; here only the envelope does)
    page = {
        "links": EMPTY_PAGE["links"],
        "meta": EMPTY_PAGE["meta"],
        "data": [{"n": "x" * 99}] * 999,
    }
    head = json.dumps(page).encode()[: 1 << 16]
    assert sniff_bytes(head) == "open-finance"
    body = {"parametros": {"inicio": "a", "fim": "b"}, "pix": [{"x": "y" * 100}] * 1000}
    assert sniff_bytes(json.dumps(body).encode()[: 1 << 16]) == "pix-json"
    assert sniff_bytes(json.dumps([OTHER_JSON] * 1000).encode()[: 1 << 16]) is None


@pytest.mark.parametrize(
    ("name", "fmt"), [("pix.json", "pix-json"), ("open_finance_page.json", "open-finance")]
)
def test_the_formats_own_files_are_sniffed_as_before(name: str, fmt: str) -> None:
    assert sniff_format(FIXTURES / name) == fmt


def test_json_that_is_neither_says_what_it_is(
    tmp_path: Path, data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "extrato.json"
    path.write_text(json.dumps(OTHER_JSON, indent=2), encoding="utf-8")
    with pytest.raises(StatementError) as err:
        import_statements([path], data_dir)
    message = str(err.value)
    assert "not an API Pix body" not in message
    assert str(path) in message
    assert "seen: an object with keys 'mensagens', 'resultado'" in message
    assert "API Pix JSON" in message and "Open Finance Brasil transaction pages" in message
    code = main(["statements", "import", str(path), "--data", str(data_dir.root)])
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err_lines) == 1 and err_lines[0].startswith("recon: error: ")


def test_json_that_is_neither_is_skipped_in_a_folder(tmp_path: Path, data_dir: DataDir) -> None:
    (tmp_path / "pix.json").write_text((FIXTURES / "pix.json").read_text(), encoding="utf-8")
    (tmp_path / "extrato.json").write_text(json.dumps(OTHER_JSON), encoding="utf-8")
    report = import_statements([tmp_path], data_dir)
    assert report.imported == 4
    assert [Path(p).name for p in report.skipped_files] == ["extrato.json"]


def test_a_format_given_names_what_was_seen(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "extrato.json"
    path.write_text(json.dumps(OTHER_JSON), encoding="utf-8")
    with pytest.raises(StatementError, match=r"not an API Pix body .*seen: an object with keys"):
        import_statements([path], data_dir, format="pix-json")
    with pytest.raises(StatementError, match=r"not an Open Finance .*seen: an object with keys"):
        import_statements([path], data_dir, format="open-finance")
