"""The bank's own lines (fees, interest, yields) read from the texts banks print.

Each text is one a bank prints in its statements, as published with open-source statement
readers and importers (the words per bank: recon.statements.banks.KIND_WORDS). The per-line
rule and the vectorized one (the OFX fast path) must read each alike.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from recon.statements.banks import KIND_WORDS, OWN_KINDS, kind_words
from recon.statements.lines import KINDS, classify, vkind

TEXTS = [
    # Banco do Brasil (lançamento - detalhes, as its CSV and OFX join them)
    ("Banco do Brasil", "debit", "Cobrança de I.O.F. - IOF Saldo Devedor Conta", "fee"),
    ("Banco do Brasil", "debit", "Cobrança de Juros - Juros Saldo Devedor Conta", "interest"),
    ("Banco do Brasil", "debit", "Cobrança de Juros - JUROS CHEQ ESPECIAL", "interest"),
    ("Banco do Brasil", "debit", "Tarifa Pacote de Serviços", "fee"),
    ("Banco do Brasil", "debit", "BB Rende Fácil", "other"),  # money invested, not a yield
    # Itaú
    ("Itaú", "credit", "REND PAGO APLIC AUT MAIS", "yield"),
    ("Itaú", "credit", "RENDIMENTOS REND PAGO APLIC AUT MAIS", "yield"),
    ("Itaú", "credit", "REND PAGO APLIC AUT APR", "yield"),
    ("Itaú", "debit", "IOF S/ SALDO DEVEDOR", "fee"),
    ("Itaú", "debit", "JUROS LIMITE DA CONTA", "interest"),
    ("Itaú", "debit", "TAR/CUSTAS COBRANCA", "fee"),
    ("Itaú", "credit", "RES APLIC AUT MAIS", "other"),  # money taken back, not a yield
    # Bradesco
    ("Bradesco", "credit", "RENTAB.INVEST FACILCRED*", "yield"),
    ("Bradesco", "debit", "ENCARGOS LIMITE DE CRED", "interest"),
    ("Bradesco", "debit", "IOF S/ UTILIZACAO LIMITE", "fee"),
    ("Bradesco", "debit", "TARIFA BANCARIA CESTA FACIL ECONOMICA", "fee"),
    ("Bradesco", "debit", "APLIC.INVEST FACIL", "other"),
    # Santander
    ("Santander", "debit", "TARIFA MENSALIDADE PACOTE SERVICOS NOVEMBRO / 2025", "fee"),
    ("Santander", "debit", "JUROS SALDO UTILIZ ATE LIMITE PERIODO: 01/11 A 30/11/25", "interest"),
    ("Santander", "debit", "RESGATE CONTAMAX AUTOMATICO", "other"),
    # Caixa (a savings account's credits)
    ("Caixa", "credit", "CRED JUROS", "yield"),
    ("Caixa", "credit", "REM BASICA", "yield"),
    # Sicredi
    ("Sicredi", "debit", "CESTA DE RELACIONAMENTO", "fee"),
    # PagBank, Inter, Nubank: what their exports write for the account's yield and charges
    ("PagBank", "credit", "Rendimento da conta - Rendimento sobre dinheiro", "yield"),
    ("Inter", "credit", "CASHBACK TURBINADO PIX - Inter Primus", "other"),
    ("Nubank", "credit", "Transferência recebida pelo Pix - RENDIMENTOS CONSULTORIA", "pix_in"),
]


@pytest.mark.parametrize(("bank", "direction", "text", "kind"), TEXTS)
def test_a_banks_text_reads_as_its_kind(bank: str, direction: str, text: str, kind: str) -> None:
    assert classify(direction, text) == (kind, None, None), bank


def test_the_vectorized_rule_reads_every_banks_text_alike() -> None:
    texts = [t for _, _, t, _ in TEXTS]
    kind, _ = vkind(
        pa.array([d == "debit" for _, d, _, _ in TEXTS]),
        pc.utf8_upper(pa.array(texts)),
        pa.array([False] * len(texts)),
        pa.array([False] * len(texts)),
        pa.array([None] * len(texts), pa.string()),
    )
    assert kind.to_pylist() == [k for _, _, _, k in TEXTS]


def test_a_code_outweighs_the_words_and_the_words_what_follows_pix() -> None:
    assert classify("credit", "TARIFA", code_kind="yield") == ("yield", None, None)
    assert classify("debit", "PIX ENVIADO - JUROS E CIA LTDA") == ("pix_out", None, None)
    assert classify("credit", "PIX RECEBIDO - REM BASICA LTDA") == ("pix_in", None, None)


def test_the_table_names_only_kinds_recon_knows() -> None:
    assert set(OWN_KINDS) <= set(KINDS)
    for bank, kinds in KIND_WORDS.items():
        assert set(kinds) <= set(OWN_KINDS), bank
    # every bank's spelling is read for every file: the union per kind
    assert r"I\.O\.F" in kind_words("fee") and "RENTAB" in kind_words("yield")
