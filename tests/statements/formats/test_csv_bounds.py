"""CSV inputs that crashed or ballooned: bounded, one clear error, never a wrong amount."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.cli import main
from recon.errors import StatementParseError
from recon.statements import import_statements
from recon.statements.formats.csv import MAX_LINE_BYTES, parse_file, resolve_profile

HEAD = "Data;Histórico;Documento;Valor;Saldo\n"


def _csv(tmp_path: Path, body: str, name: str = "x.csv") -> Path:
    path = tmp_path / name
    path.write_bytes((HEAD + body).encode("cp1252"))
    return path


def test_field_over_128_kib_is_one_clear_error(tmp_path, capsys) -> None:
    path = _csv(tmp_path, f'01/11/2026;"{"A" * 200_000}";1;10,00;10,00\n')
    with pytest.raises(StatementParseError) as info:
        parse_file(path, resolve_profile(None, path))
    assert info.value.line == 2 and "field" in str(info.value)
    code = main(["statements", "import", str(path), "--data", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "x.csv:2" in err


def test_a_line_longer_than_the_bound_stops_before_decoding(tmp_path) -> None:
    path = _csv(tmp_path, "01/11/2026;A;1;10,00;10,00\n" + "9" * (MAX_LINE_BYTES + 10) + "\n")
    with pytest.raises(StatementParseError, match="at most 1,048,576") as info:
        parse_file(path, resolve_profile(None, path))
    assert info.value.line == 3


def test_psp_fast_path_bounded_too(tmp_path) -> None:
    head = (
        "data_hora,tipo,valor,end_to_end_id,txid,id_devolucao,e2e_original,nome_contraparte,"
        "documento_contraparte,chave_pix,descricao,id_transacao\n"
    )
    path = tmp_path / "psp.csv"
    path.write_text(head + "x" * (MAX_LINE_BYTES + 1) + "\n", encoding="utf-8")
    with pytest.raises(StatementParseError, match="line of"):
        import_statements([path], data=tmp_path / "d")


@pytest.mark.parametrize(
    "amount",
    ["92.233.720.368.547.758,08", "-92233720368547758,08", "9" * 30 + ",00", "1" * 4300],
)
def test_amounts_beyond_int64_are_refused_not_wrapped(tmp_path, amount) -> None:
    path = _csv(tmp_path, f"01/11/2026;A;1;{amount};\n")
    result = parse_file(path, resolve_profile(None, path))
    assert result.all_rows() == []
    (bad,) = result.bad
    assert bad.field == "Valor" and bad.source_line == 2
    report = import_statements([path], data=tmp_path / "d", quarantine=True)
    assert (report.imported, report.quarantined) == (0, 1)


def test_huge_balance_is_a_clear_line_error(tmp_path) -> None:
    path = _csv(tmp_path, "01/11/2026;A;1;10,00;" + "9" * 5000 + ",00\n")
    with pytest.raises(StatementParseError) as info:
        import_statements([path], data=tmp_path / "d")
    assert info.value.line == 2 and info.value.field == "Saldo"


def test_largest_int64_amount_is_exact(tmp_path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "data_hora,tipo,valor,end_to_end_id,txid,id_devolucao,e2e_original,nome_contraparte,"
        "documento_contraparte,chave_pix,descricao,id_transacao\n"
        "2026-11-01T10:00:00-03:00,TARIFA,-92233720368547758.07,,,,,,,,,T1\n",
        encoding="utf-8",
    )
    (row,) = parse_file(path, resolve_profile(None, path)).all_rows()
    assert row[2] == -(2**63 - 1)
