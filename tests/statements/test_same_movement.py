"""A CSV line without a PIX id is the same movement as the line other formats read."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.catalog import connect
from recon.config import DataDir
from recon.statements import import_statements


def _count(data: DataDir) -> int:
    con = connect(data)
    try:
        return con.execute("SELECT count(*) FROM statement_lines").fetchall()[0][0]
    finally:
        con.close()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    from recon.sandbox import build_world
    from recon.sandbox.exports import export_statements

    sandbox = build_world(seed=5, days=2, intents_per_day=40)
    out = tmp_path_factory.mktemp("sandbox")
    export_statements(sandbox.bank, out)
    return out, len(sandbox.bank.movements)


def test_every_format_in_any_order_is_one_line_per_movement(exported, tmp_path) -> None:
    from recon.sandbox.exports import STATEMENT_FILES

    folder, movements = exported
    data = DataDir(tmp_path / "data").ensure()
    files = [folder / name for name in reversed(STATEMENT_FILES)]  # bank CSVs first
    report = import_statements(files, data=data)
    assert report.imported == movements
    assert [Path(f.path).name for f in report.per_file] == list(reversed(STATEMENT_FILES))
    assert _count(data) == movements
    for name in ("extrato_inter.csv", "extrato_nubank.csv"):
        again = import_statements([folder / name], data=data)
        assert (again.imported, again.new_versions) == (0, 0), name
    assert _count(data) == movements


def test_folder_import_is_one_line_per_movement(exported, tmp_path) -> None:
    folder, movements = exported
    data = DataDir(tmp_path / "data").ensure()
    report = import_statements([folder], data=data)
    assert report.imported == movements
    assert _count(data) == movements


PSP = (
    "data_hora,tipo,valor,end_to_end_id,txid,id_devolucao,e2e_original,nome_contraparte,"
    "documento_contraparte,chave_pix,descricao,id_transacao\n"
    "2026-11-01T10:00:00-03:00,PIX_RECEBIDO,100.00,E18236120202611011000s0000000001,,,,A,,,,T1\n"
    "2026-11-01T15:00:00-03:00,PIX_RECEBIDO,100.00,E18236120202611011500s0000000002,,,,B,,,,T2\n"
)
INTER = (
    "Data Lançamento;Histórico;Descrição;Valor;Saldo\n"
    '01/11/2026;Pix recebido;"Cp :18236120-A";100,00;100,00\n'
    '01/11/2026;Pix recebido;"Cp :18236120-B";100,00;200,00\n'
    '01/11/2026;Pix recebido;"Cp :18236120-C";100,00;300,00\n'
)


def test_lines_of_one_key_pair_in_order_and_extra_ones_stay(tmp_path) -> None:
    (tmp_path / "psp.csv").write_text(PSP, encoding="utf-8")
    (tmp_path / "inter.csv").write_text(INTER, encoding="utf-8")
    data = DataDir(tmp_path / "data").ensure()
    import_statements([tmp_path / "psp.csv"], data=data)
    report = import_statements([tmp_path / "inter.csv"], data=data)
    # two R$ 100 PIX of that day are known: two lines pair, the third is a movement of its own
    assert (report.duplicate, report.imported) == (2, 1)
    assert _count(data) == 3
    again = import_statements([tmp_path / "inter.csv"], data=data)
    assert (again.imported, again.new_versions, again.duplicate) == (0, 0, 3)


def test_another_account_is_never_paired(tmp_path) -> None:
    (tmp_path / "psp.csv").write_text(PSP, encoding="utf-8")
    (tmp_path / "inter.csv").write_text(INTER, encoding="utf-8")
    data = DataDir(tmp_path / "data").ensure()
    import_statements([tmp_path / "psp.csv"], data=data, account="a")
    report = import_statements([tmp_path / "inter.csv"], data=data, account="b")
    assert report.imported == 3


def test_same_bank_reference_pairs_the_nubank_line(tmp_path) -> None:
    nubank = (
        "Data,Valor,Identificador,Descrição\n"
        "01/11/2026,100.00,T2,Transferência recebida pelo Pix - B\n"
        "01/11/2026,100.00,T9,Transferência recebida pelo Pix - Z\n"
    )
    (tmp_path / "psp.csv").write_text(PSP, encoding="utf-8")
    (tmp_path / "nubank.csv").write_text(nubank, encoding="utf-8")
    data = DataDir(tmp_path / "data").ensure()
    import_statements([tmp_path / "psp.csv"], data=data)
    report = import_statements([tmp_path / "nubank.csv"], data=data)
    assert (report.duplicate, report.imported) == (1, 1)  # T9 names no known movement


def test_one_file_at_a_time_in_name_order_is_one_line_per_movement(exported, tmp_path) -> None:
    # what `recon daily` does with its inbox: the Nubank CSV comes before the formats that
    # carry its transaction ids (PSP CSV, OFX), after the ones with PIX ids only (CNAB 240)
    from recon.sandbox.exports import STATEMENT_FILES

    folder, movements = exported
    data = DataDir(tmp_path / "data").ensure()
    for name in sorted(STATEMENT_FILES):
        import_statements([folder / name], data=data)
    assert _count(data) == movements
    for name in sorted(STATEMENT_FILES):
        again = import_statements([folder / name], data=data)
        assert again.imported == 0, name
        if name != "extrato_nubank.csv":
            assert again.new_versions == 0, name
    # the first Nubank import paired by day and amount (its ids were not known yet); with the
    # PSP CSV and OFX stored, its ids now name each line: at most a few same-amount lines of
    # one day are stored again as versions of the line the id names; nothing is counted twice
    assert _count(data) == movements
