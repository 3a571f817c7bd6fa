"""BACEN API Pix JSON: GET /pix bodies, webhook bodies, devoluções and their status changes."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from recon.config import DataDir
from recon.errors import StatementError, StatementParseError
from recon.statements import import_statements
from recon.statements.formats.pix_json import parse_file

from ..conftest import FIXTURES, by_e2e, view_rows

E1 = "E18236120202611011000s0123456789"
E2 = "E00000000202611011230a1b2c3d4e5f"
D1 = "D18236120202611021200r0000000001"


def _write(path: Path, body: Any) -> Path:
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def _pix(e2e: str = E1, **extra: Any) -> dict[str, Any]:
    item = {"endToEndId": e2e, "valor": "10.00", "horario": "2026-11-01T10:00:00-03:00"}
    item.update(extra)
    return item


def _refund(status: str, **extra: Any) -> dict[str, Any]:
    dev = {
        "id": "DEV1",
        "rtrId": D1,
        "valor": "4.00",
        "horario": {"solicitacao": "2026-11-02T09:00:00-03:00"},
        "status": status,
    }
    dev.update(extra)
    return dev


def test_fixture_fields() -> None:
    rows = sorted(parse_file(FIXTURES / "pix.json").all_rows(), key=lambda r: (r[0], r[4]))
    assert len(rows) == 4
    first = rows[0]
    assert first[:8] == (
        1,
        "2026-11-01T10:00:00.358-03:00",
        11000,
        "credit",
        "pix_in",
        E1,
        "7978c0c97ea847e78e8849634473c1f1",
        None,
    )
    assert first[8:12] == (
        "Maria da Silva",
        "***.456.789-**",
        "12.345.678/0001-90",
        "pedido ABC-123",
    )
    refund = rows[2]
    assert refund[2:8] == (-123456, "debit", "pix_refund_out", D1, None, E2)
    assert refund[1] == "2026-11-02T09:00:05-03:00"  # DEVOLVIDO: booked at liquidacao
    assert refund[12] == "DEV0001"
    assert refund[9] == "**.345.678/0001-**"  # pagador cnpj


def test_import_converts_to_utc(data_dir: DataDir) -> None:
    import_statements([FIXTURES / "pix.json"], data_dir)
    lines = by_e2e(data_dir)
    assert lines[E1]["booked_at"] == datetime(2026, 11, 1, 13, 0, 0, 358000, tzinfo=UTC)
    assert lines[E2]["booked_at"] == datetime(2026, 11, 1, 15, 30, tzinfo=UTC)  # "Z"
    assert lines["E60746948202611021205XYZ12345678"]["booked_at"] == datetime(
        2026, 11, 2, 14, 5, tzinfo=UTC
    )  # -02:00
    assert sum(r["amount_cents"] for r in lines.values()) == 11000 + 123456 - 123456 + 1


def test_webhook_body_and_ndjson(tmp_path: Path, data_dir: DataDir) -> None:
    webhook = _write(tmp_path / "hook.json", {"pix": [_pix()]})
    ndjson = tmp_path / "pages.json"
    ndjson.write_text(
        json.dumps({"pix": [_pix(E2)]}) + "\n" + json.dumps({"pix": [_pix(E1)]}) + "\n",
        encoding="utf-8",
    )
    report = import_statements([webhook, ndjson], data_dir)
    assert (report.read, report.imported, report.duplicate) == (3, 2, 1)


def test_list_of_pages(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.json", [{"pix": [_pix(E1)]}, {"pix": [_pix(E2)]}])
    assert [r[5] for r in parse_file(path).all_rows()] == [E1, E2]


def test_devolucao_status_upsert(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "pix.json"
    _write(path, {"pix": [_pix(devolucoes=[_refund("EM_PROCESSAMENTO")])]})
    import_statements([path], data_dir)
    refund = by_e2e(data_dir)[D1]
    assert refund["amount_cents"] == -400
    assert refund["refund_of"] == E1
    assert refund["kind"] == "pix_refund_out"
    assert "EM_PROCESSAMENTO" in refund["description"]

    settled = _refund(
        "DEVOLVIDO",
        horario={
            "solicitacao": "2026-11-02T09:00:00-03:00",
            "liquidacao": "2026-11-02T09:00:07-03:00",
        },
    )
    _write(path, {"pix": [_pix(devolucoes=[settled])]})
    report = import_statements([path], data_dir)
    assert (report.imported, report.duplicate, report.new_versions) == (0, 2, 1)
    refund = by_e2e(data_dir)[D1]
    assert "DEVOLVIDO" in refund["description"]
    assert refund["booked_at"] == datetime(2026, 11, 2, 12, 0, 7, tzinfo=UTC)
    assert len(view_rows(data_dir)) == 2

    # An old file with the earlier status is a known version: it adds nothing.
    _write(path, {"pix": [_pix(devolucoes=[_refund("EM_PROCESSAMENTO")])]})
    report = import_statements([path], data_dir)
    assert report.new_versions == 0
    assert "DEVOLVIDO" in by_e2e(data_dir)[D1]["description"]

    _write(path, {"pix": [_pix(devolucoes=[_refund("NAO_REALIZADO")])]})
    import_statements([path], data_dir)
    assert D1 not in by_e2e(data_dir)  # never happened: not a money movement
    assert len(view_rows(data_dir)) == 1


def test_nao_realizado_alone_is_no_line(tmp_path: Path, data_dir: DataDir) -> None:
    path = _write(tmp_path / "p.json", {"pix": [_pix(devolucoes=[_refund("NAO_REALIZADO")])]})
    report = import_statements([path], data_dir)
    assert report.read == report.imported + report.duplicate + report.quarantined == 2
    assert list(by_e2e(data_dir)) == [E1]


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"valor": "10.00", "horario": "2026-11-01T10:00:00Z"}, "endToEndId"),
        (_pix(valor=10.0), "valor"),
        (_pix(valor="10.001"), "valor"),
        (_pix(valor="-10.00"), "valor"),
        (_pix(valor="dez"), "valor"),
        ({"endToEndId": E1, "valor": "1.00"}, "horario"),
        (_pix(txid=123), "txid"),
        (_pix(pagador="Maria"), "pagador"),
        (_pix(devolucoes="x"), "devolucoes"),
        (_pix(devolucoes={"id": "x"}), "devolucoes[0].rtrId"),
        (_pix(devolucoes=[_refund("QUALQUER")]), "devolucoes[0].status"),
        (_pix(devolucoes=[{**_refund("DEVOLVIDO"), "rtrId": None}]), "devolucoes[0].rtrId"),
        (
            _pix(devolucoes=[{**_refund("DEVOLVIDO"), "horario": {}}]),
            "devolucoes[0].horario.solicitacao",
        ),
        ("not an object", "pix"),
    ],
)
def test_malformed_items(tmp_path: Path, data_dir: DataDir, item: Any, field: str) -> None:
    path = _write(tmp_path / "bad.json", {"pix": [_pix(E2), item]})
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.line == 2
    assert err.value.field == field
    assert str(path) in str(err.value)
    assert view_rows(data_dir) == []  # nothing written


def test_naive_time_is_an_error(tmp_path: Path, data_dir: DataDir) -> None:
    path = _write(tmp_path / "bad.json", {"pix": [_pix(horario="2026-11-01T10:00:00")]})
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "booked_at"
    assert err.value.line == 1


def test_long_fraction_of_seconds_is_read(tmp_path: Path, data_dir: DataDir) -> None:
    path = _write(tmp_path / "p.json", {"pix": [_pix(horario="2026-11-01T10:00:00.1234567Z")]})
    import_statements([path], data_dir)
    assert by_e2e(data_dir)[E1]["booked_at"] == datetime(2026, 11, 1, 10, 0, 0, 123456, tzinfo=UTC)


def test_quarantine_keeps_good_items(tmp_path: Path, data_dir: DataDir) -> None:
    path = _write(tmp_path / "bad.json", {"pix": [_pix(E1), _pix(E2, valor="x")]})
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.read, report.imported, report.quarantined) == (2, 1, 1)
    q = view_rows(data_dir, "statement_quarantine")
    assert [(r["source_line"], r["field"]) for r in q] == [(2, "valor")]
    assert '"valor": "x"' in q[0]["raw"]
    # the same bad file again: counted again, stored once
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.read, report.duplicate, report.quarantined) == (2, 1, 1)
    assert len(view_rows(data_dir, "statement_quarantine")) == 1


@pytest.mark.parametrize(
    "text",
    ['{"pix": {"a": 1}}', '{"foo": []}', "{not json", '{"pix": []}\n{oops'],
)
def test_not_api_pix(tmp_path: Path, data_dir: DataDir, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StatementError):
        import_statements([path], data_dir, format="pix-json")


def test_fast_path_equals_item_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The vectorized read gives exactly what the item-by-item read gives."""
    import recon.statements.formats.pix_json as pix_json

    body = json.loads((FIXTURES / "pix.json").read_text())
    body["pix"].append(
        _pix("E60746948202611021205XYZ00000001", txid="", infoPagador="  a \u00a0 b ")
    )
    body["pix"].append(_pix("E60746948202611021205XYZ00000002", pagador={"nome": "X", "cnpj": "1"}))
    body["pix"].append(_pix("E60746948202611021205XYZ00000003", pagador={"cpf": "", "cnpj": "2"}))
    path = _write(tmp_path / "p.json", body)  # one line: pyarrow's JSON reader takes it
    arrow = parse_file(path)
    assert arrow.table is not None
    monkeypatch.setattr(pix_json, "_arrow_file", lambda path: None)
    fast = parse_file(path)  # decoded by Python, checked on columns
    assert fast.table is not None
    monkeypatch.setattr(pix_json, "_fast", lambda items: None)
    slow = parse_file(path)  # item by item
    assert slow.table is None
    rows = sorted(slow.all_rows(), key=repr)
    assert sorted(fast.all_rows(), key=repr) == rows
    assert sorted(arrow.all_rows(), key=repr) == rows
    assert any(r[11] == "a b" and r[6] is None for r in rows)
    assert any(r[9] == "2" for r in rows)


def test_pretty_printed_file_same_by_every_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import recon.statements.formats.pix_json as pix_json

    arrow = pix_json._arrow_file(FIXTURES / "pix.json")
    assert arrow is not None
    monkeypatch.setattr(pix_json, "_arrow_file", lambda path: None)
    monkeypatch.setattr(pix_json, "_fast", lambda items: None)
    slow = pix_json.parse_file(FIXTURES / "pix.json")
    assert sorted(arrow.all_rows(), key=repr) == sorted(slow.all_rows(), key=repr)


def test_a_json_number_never_takes_the_fast_paths(tmp_path: Path) -> None:
    import recon.statements.formats.pix_json as pix_json

    path = _write(tmp_path / "n.json", {"pix": [_pix(valor=10.5)]})
    assert pix_json._arrow_file(path) is None
    assert pix_json._fast([_pix(valor=10.5)]) is None


def test_efi_tarifa_is_the_fee_of_a_net_credit(tmp_path: Path, data_dir: DataDir) -> None:
    """Efí's webhook "Pix recebido com tarifa informada": valor is what the payer sent, the
    account gets valor - tarifa; the line keeps both (amount_cents net, fee_cents)."""
    body = {"pix": [_pix(E1, valor="100.00", gnExtras={"tarifa": "0.99"}), _pix(E2)]}
    import_statements([_write(tmp_path / "hook.json", body)], data_dir)
    lines = by_e2e(data_dir)
    assert (lines[E1]["amount_cents"], lines[E1]["fee_cents"]) == (9901, 99)
    assert (lines[E2]["amount_cents"], lines[E2]["fee_cents"]) == (1000, None)


def test_a_line_without_a_fee_keeps_its_fingerprint(tmp_path: Path, data_dir: DataDir) -> None:
    # the fingerprint a line without a fee is stored under is the one data directories were
    # keyed on before fee_cents existed (the content columns joined by U+001F, NULL as U+0000,
    # md5), so importing an older directory's file again adds nothing
    path = _write(tmp_path / "hook.json", {"pix": [_pix(E2)]})
    import_statements([path], data_dir)
    (stored,) = pq.read_table(next(data_dir.statements.glob("source=*/*.parquet"))).to_pylist()
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    fields = [
        stored["source_format"],
        stored["account"],
        str((stored["booked_at"] - epoch) // timedelta(microseconds=1)),
        str(stored["amount_cents"]),
        stored["direction"],
        stored["kind"],
        *(
            stored[k] or "\x00"
            for k in (
                "end_to_end_id",
                "txid",
                "refund_of",
                "counterparty_name",
                "counterparty_document",
                "counterparty_key",
                "description",
                "bank_reference",
            )
        ),
    ]
    assert stored["fee_cents"] is None
    assert stored["fingerprint"] == hashlib.md5("\x1f".join(fields).encode()).hexdigest()
    report = import_statements([path], data_dir)
    assert (report.imported, report.duplicate) == (0, 1)


@pytest.mark.parametrize(
    ("tarifa", "says"),
    [(0.99, "must be decimal text"), ("10.00", "less than valor"), ("x", "")],
)
def test_a_bad_tarifa_names_its_field(
    tmp_path: Path, data_dir: DataDir, tarifa: Any, says: str
) -> None:
    path = _write(tmp_path / "bad.json", {"pix": [_pix(E1, gnExtras={"tarifa": tarifa})]})
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "gnExtras.tarifa" and says in str(err.value)
