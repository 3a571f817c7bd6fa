"""Direction from the data (issue 14 item 3): items that say what they are are read as such.

The bodies are modeled on a large PSP's documented webhook (Efí: `tipo`, `status`,
`gnExtras`) and on BACEN's own webhook example (`devolucoes` as one object).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from recon.config import DataDir
from recon.errors import StatementParseError
from recon.statements import import_statements
from recon.statements.formats.pix_json import parse_documents

from .conftest import by_e2e

E_IN = "E18236120202611011000s0123456789"
E_OUT = "E13140088202611011200p0000000042"
E_SHORT = "E090893562021030PIf25a7868"  # 26 characters, as in the PSP's own documentation
D1 = "D13140088202611021200r0000000001"


def _sent(status: str, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "endToEndId": E_OUT,
        "chave": "2c3c7441-b91e-4982-3c25-6105581e18ae",
        "tipo": "SOLICITACAO",
        "status": status,
        "valor": "25.10",
        "horario": "2026-11-01T15:00:00.000Z" if status == "REALIZADO" else None,
        "gnExtras": {"idEnvio": "ENVIO123"},
    }
    item.update(extra)
    return item


def _rows(*items: Any) -> list[tuple[Any, ...]]:
    return parse_documents([{"pix": list(items)}], "body.json").all_rows()


def test_sent_pix_is_a_debit() -> None:
    (row,) = _rows(_sent("REALIZADO"))
    assert row[2:6] == (-2510, "debit", "pix_out", E_OUT)
    assert row[12] == "ENVIO123"


def test_a_sent_pix_webhook_s_own_chave_is_never_the_key_paid() -> None:
    """Efí's webhook is registered on one of OUR keys and names it in `chave` (its examples
    of a received and a sent PIX carry the same key): stored as the key paid, it contradicted
    every payout's destination and kept the attributes pass from confirming it. The key paid
    is the payee's (`favorecido.chave`), else unknown."""
    (row,) = _rows(_sent("REALIZADO"))
    assert row[10] is None
    payee = _sent("REALIZADO", favorecido={"chave": "ana@example.com", "nome": "ANA"})
    (row,) = _rows(payee)
    assert (row[8], row[10]) == ("ANA", "ana@example.com")


def test_sent_pix_known_by_id_envio_alone() -> None:
    item = _sent("REALIZADO")
    del item["tipo"]
    (row,) = _rows(item)
    assert row[3:5] == ("debit", "pix_out")


@pytest.mark.parametrize("status", ["NAO_REALIZADO", "EM_PROCESSAMENTO", "REJEITADO"])
def test_rejected_or_pending_pix_is_no_money(status: str) -> None:
    item = _sent(status, gnExtras={"idEnvio": "X", "erro": {"codigo": "AC03"}})
    item["horario"] = None  # as the PSP sends a rejected PIX
    result = parse_documents([{"pix": [item]}], "body.json")
    assert result.all_rows() == [] and result.bad == []
    assert any(status in c for c in result.checks)


def test_rejected_pix_with_a_time_is_still_no_money() -> None:
    # Refused because of its status, not by accident of a null horario.
    result = parse_documents(
        [{"pix": [_sent("NAO_REALIZADO", horario="2026-11-01T15:00:00Z")]}], "b"
    )
    assert result.all_rows() == []


def test_received_with_tipo_and_psp_payer() -> None:
    item = {
        "endToEndId": E_SHORT,
        "txid": "fc9a43k6ff384ryP5f41719",
        "valor": "0.01",
        "horario": "2020-12-21T13:40:34.000Z",
        "gnExtras": {"pagador": {"nome": "Consultoria", "cnpj": "09089356000118"}},
    }
    (row,) = _rows(item)
    assert row[2:6] == (1, "credit", "pix_in", E_SHORT)
    assert row[8:10] == ("Consultoria", "09089356000118")
    (row,) = _rows({**item, "tipo": "RECEBIMENTO", "status": "CONCLUIDO"})
    assert row[3] == "credit"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tipo": "ESTORNO_QUALQUER"}, "tipo"),
        ({"tipo": None, "gnExtras": None}, "tipo"),  # a status and nothing saying which way
        ({"status": "TALVEZ"}, "status"),
    ],
)
def test_unknown_direction_is_an_error_not_a_credit(
    tmp_path: Path, data_dir: DataDir, change: dict[str, Any], field: str
) -> None:
    path = tmp_path / "webhook.json"
    path.write_text(json.dumps({"pix": [{**_sent("REALIZADO"), **change}]}), encoding="utf-8")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == field and err.value.line == 1
    report = import_statements([path], data_dir, quarantine=True)
    assert report.quarantined == 1 and report.imported == 0


def test_devolucoes_as_one_object(tmp_path: Path, data_dir: DataDir) -> None:
    item = {
        "endToEndId": E_IN,
        "valor": "110.00",
        "horario": "2026-11-01T10:00:00-03:00",
        "devolucoes": {
            "id": "123ABC",
            "rtrId": D1,
            "valor": "110.00",
            "horario": {"solicitacao": "2026-11-01T11:00:00-03:00"},
            "status": "DEVOLVIDO",
        },
    }
    path = tmp_path / "bacen_webhook.json"
    path.write_text(json.dumps({"pix": [item]}), encoding="utf-8")
    report = import_statements([path], data_dir)
    assert report.imported == 2
    lines = by_e2e(data_dir)
    assert lines[D1]["amount_cents"] == -11000 and lines[D1]["refund_of"] == E_IN


def test_devolucao_of_a_sent_pix_is_money_back() -> None:
    dev = {
        "id": "R1",
        "rtrId": D1,
        "valor": "5.00",
        "horario": {"solicitacao": "2026-11-02T10:00:00Z"},
        "status": "DEVOLVIDO",
    }
    rows = _rows(_sent("REALIZADO", devolucoes=[dev]))
    assert [(r[2], r[4], r[5], r[7]) for r in rows] == [
        (-2510, "pix_out", E_OUT, None),
        (500, "pix_refund_in", D1, E_OUT),
    ]


def test_sent_and_received_in_one_file_keep_their_signs(tmp_path: Path, data_dir: DataDir) -> None:
    received = {"endToEndId": E_IN, "valor": "10.00", "horario": "2026-11-01T10:00:00-03:00"}
    path = tmp_path / "mixed.json"
    body = {"pix": [received, _sent("REALIZADO"), _sent("NAO_REALIZADO", endToEndId=E_SHORT)]}
    path.write_text(json.dumps(body), encoding="utf-8")
    report = import_statements([path], data_dir)
    assert report.read == report.imported == 2
    lines = by_e2e(data_dir)
    assert lines[E_IN]["amount_cents"] == 1000 and lines[E_OUT]["amount_cents"] == -2510
    assert E_SHORT not in lines


# Efí's `GET /v2/gn/pix/enviados/:e2eid` body (its API documentation's two examples, with our
# own ids): one sent PIX on its own, a top-level `idEnvio`, `horario` as an object, and the
# payee under `favorecido` (a key and `identificacao`, or bank details in `contaBanco`).
def _enviado(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "endToEndId": E_OUT,
        "idEnvio": "pagamento0042",
        "valor": "12.34",
        "chave": "19974764017",  # the key we sent from (the request's pagador.chave)
        "status": "REALIZADO",
        "infoPagador": "pedido 42",
        "horario": {
            "solicitacao": "2026-11-01T12:00:05.000Z",
            "liquidacao": "2026-11-01T12:00:07.000Z",
        },
        "favorecido": {
            "chave": "fulano@example.com",
            "identificacao": {"nome": "Fulano de Tal", "cpf": "***.456.789-**"},
        },
    }
    body.update(extra)
    return body


def test_efi_sent_pix_body_is_one_payout(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "enviado.json"
    path.write_text(json.dumps(_enviado(), indent=2), encoding="utf-8")
    report = import_statements([path], data_dir)
    assert (report.read, report.imported) == (1, 1)
    line = by_e2e(data_dir)[E_OUT]
    assert (line["amount_cents"], line["direction"], line["kind"]) == (-1234, "debit", "pix_out")
    assert line["booked_at"] == datetime(2026, 11, 1, 12, 0, 7, tzinfo=UTC)  # liquidacao
    assert line["bank_reference"] == "pagamento0042"
    assert line["counterparty_name"] == "Fulano de Tal"
    assert line["counterparty_document"] == "***.456.789-**"
    assert line["counterparty_key"] == "fulano@example.com"  # the key paid, never ours
    assert line["description"] == "pedido 42"


def test_efi_sent_pix_to_bank_details() -> None:
    body = _enviado(
        favorecido={
            "contaBanco": {
                "nome": "Fulano de Tal",
                "cnpj": "**.345.678/0001-**",
                "codigoBanco": "09089356",
                "agencia": "1",
                "conta": "12345678",
                "tipoConta": "corrente",
            }
        },
        horario={"solicitacao": "2026-11-01T12:00:05.000Z"},  # not settled yet: requested
    )
    (row,) = parse_documents([body], "enviado.json").all_rows()
    assert row[1:5] == ("2026-11-01T12:00:05.000Z", -1234, "debit", "pix_out")
    assert row[8:13] == (
        "Fulano de Tal",
        "**.345.678/0001-**",
        None,  # no payee key; the top-level chave is ours
        "pedido 42 banco 09089356 ag 1 conta 12345678",
        "pagamento0042",
    )


@pytest.mark.parametrize("status", ["NAO_REALIZADO", "EM_PROCESSAMENTO"])
def test_efi_sent_pix_body_not_carried_out_is_no_money(status: str) -> None:
    result = parse_documents([_enviado(status=status)], "enviado.json")
    assert result.all_rows() == [] and result.bad == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"idEnvio": 42}, "idEnvio"),
        ({"horario": {}}, "horario.liquidacao"),
        ({"horario": {"liquidacao": 1}}, "horario.liquidacao"),
        ({"favorecido": "Fulano"}, "favorecido"),
        ({"favorecido": {"contaBanco": {"nome": "F", "conta": 12}}}, "favorecido.contaBanco.conta"),
    ],
)
def test_efi_sent_pix_body_malformed(change: dict[str, Any], field: str) -> None:
    result = parse_documents([_enviado(**change)], "enviado.json")
    assert [(b.source_line, b.field) for b in result.bad] == [(1, field)]


def test_top_level_id_envio_never_read_as_received_by_the_fast_paths(tmp_path: Path) -> None:
    import recon.statements.formats.pix_json as pix_json

    item = {"endToEndId": E_OUT, "idEnvio": "X1", "valor": "1.00", "horario": "2026-11-01T12:00Z"}
    path = tmp_path / "one_line.json"
    path.write_text(json.dumps({"pix": [item]}), encoding="utf-8")  # pyarrow's reader takes it
    assert pix_json._arrow_file(path) is None
    assert pix_json._fast([item]) is None
    (row,) = pix_json.parse_file(path).all_rows()
    assert row[3:5] == ("debit", "pix_out") and row[12] == "X1"


def test_a_list_of_pix_sent_covers_no_period() -> None:
    """`parametros` on a body of PIX *sent* (as Efí's `GET /v2/gn/pix/enviados` list would
    carry them): recorded as a period, it claimed "no other PIX was received in it", and every
    onramp paid then would have become a false missing payment. Only a list of PIX received
    covers its period."""
    params = {"inicio": "2026-11-01T00:00:00-03:00", "fim": "2026-11-02T00:00:00-03:00"}
    received = {"endToEndId": E_IN, "valor": "10.00", "horario": "2026-11-01T10:00:00-03:00"}
    kept = parse_documents([{"parametros": params, "pix": [received]}], "recebidos.json")
    assert len(kept.coverage) == 1 and kept.coverage[0].scope == "received"
    for items in ([_sent("REALIZADO")], [_enviado()], [received, _sent("REALIZADO")]):
        result = parse_documents([{"parametros": params, "pix": items}], "enviados.json")
        assert result.coverage == []
        assert any("covers no period" in w for w in result.warnings)
