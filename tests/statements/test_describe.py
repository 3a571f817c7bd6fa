"""Descriptions as banks write them (the table in docs/statements.md, one row per example)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.statements.describe import Described, describe, direction_from_text

E2E = "E18236120202611011000s0123456789"
RTR = "D18236120202611021200r0000000001"

# (bank, text, amount direction, name, document, bank)
TABLE = [
    (
        "Nubank",
        "Transferência recebida pelo Pix - MARIA DA SILVA - •••.123.456-•• - NU PAGAMENTOS - IP "
        "(0260) Agência: 1 Conta: 1234567-8",
        "credit",
        "MARIA DA SILVA",
        "***.123.456-**",  # Nubank's bullets written as BACEN's stars: one mask character
        "NU PAGAMENTOS - IP (0260)",
    ),
    (
        "Nubank",
        "Transferência enviada pelo Pix - JOAO LTDA - 12.345.678/0001-90 - BCO DO BRASIL S.A. "
        "(0001) Agência: 1234 Conta: 5678-9",
        "debit",
        "JOAO LTDA",
        "12.345.678/0001-90",
        "BCO DO BRASIL S.A. (0001)",
    ),
    (
        "Inter",
        'Pix recebido: "Cp :18236120-Fulano de Tal"',
        "credit",
        "Fulano de Tal",
        None,
        "18236120",
    ),
    ("Itaú", "PIX TRANSF  FULANO S05/11", "debit", "FULANO S", None, None),
    ("Itaú", "PIX QRS IFOOD COM AG05/11", "debit", "IFOOD COM AG", None, None),
    (
        "Banco do Brasil",
        "Pix - Recebido - 12/03 21:08 João Vitor Oliveira",
        "credit",
        "João Vitor Oliveira",
        None,
        None,
    ),
    ("Bradesco", "Transfe Pix Rem: Leticia Pires", "credit", "Leticia Pires", None, None),
    # Bradesco's OFX MEMO ends with the PIX's day, as Itaú's texts do
    (
        "Bradesco",
        "Transfe Pix Rem: Singular Mind Marketi 01/12",
        "credit",
        "Singular Mind Marketi",
        None,
        None,
    ),
    ("Bradesco", "Transfe Pix Des: JOAO SOUZA 03/11", "debit", "JOAO SOUZA", None, None),
    ("Itaú", "PIX TRANSFER SONIA R15/05", "debit", "SONIA R", None, None),
    # Inter's OFX MEMO: the counterparty's ISPB, agency and account before the name
    (
        "Inter",
        "PIX ENVIADO - Contraparte: 45246410-1-30422-FOXBIT SERVIÇOS DIGI",
        "debit",
        "FOXBIT SERVIÇOS DIGI",
        None,
        "45246410",
    ),
    (
        "Inter",
        "PIX ENVIADO - Cp: 18236120-1-443816439-Katiana Pinheiro Jansen",
        "debit",
        "Katiana Pinheiro Jansen",
        None,
        "18236120",
    ),
    ("Inter", 'Pix recebido: "Cp :18236120-99 TAXIS"', "credit", "99 TAXIS", None, "18236120"),
    # Inter between its own accounts: agency and account, then the name; or D: payer. C: payee
    (
        "Inter",
        "PIX ENVIADO INTERNO - 00019 0115869018 DEV HOUSE SERVICOS DE TI LTDA",
        "debit",
        "DEV HOUSE SERVICOS DE TI LTDA",
        None,
        None,
    ),
    (
        "Inter",
        "PIX RECEBIDO INTERNO - 00019 0113693672 ELISAMA CAETANO",
        "credit",
        "ELISAMA CAETANO",
        None,
        None,
    ),
    (
        "Inter",
        "PIX ENVIADO INTERNO - D: PEDRO HENRIQUE BRAGA DA SILVA. C: KAIO RODRIGO",
        "debit",
        "KAIO RODRIGO",
        None,
        None,
    ),
    (
        "Inter",
        "PIX RECEBIDO INTERNO - D: KAIO RODRIGO. C: PEDRO HENRIQUE BRAGA",
        "credit",
        "KAIO RODRIGO",
        None,
        None,
    ),
    (
        "Nubank",
        "Pagamento com QR Pix CENORADAS DOCERIA LTDA",
        "debit",
        "CENORADAS DOCERIA LTDA",
        None,
        None,
    ),
    ("Banco do Brasil", "Pix-Envio devolvido", "credit", None, None, None),
    ("Santander", "PIX RECEBIDO MARIA SILVA", "credit", "MARIA SILVA", None, None),
    ("C6", "Pix enviado para JOAO SOUZA", "debit", "JOAO SOUZA", None, None),
    ("C6", "Pix recebido de MARIA DA SILVA - PIX RECEBIDO", "credit", "MARIA DA SILVA", None, None),
    (
        "Mercado Pago",
        "Pix recebido FABIANO CARVALHO DA SILVA",
        "credit",
        "FABIANO CARVALHO DA SILVA",
        None,
        None,
    ),
    ("Mercado Pago", "Pagamento com Código QR Pix Jorge Luis", "debit", "Jorge Luis", None, None),
    ("PagBank", "Pix recebido - Juliano Pereira", "credit", "Juliano Pereira", None, None),
    ("Caixa", "CRED PIX", "credit", None, None, None),
    # Banco do Brasil writes the payer's CPF as 14 digits, 000 and the CPF, before the name
    (
        "Banco do Brasil",
        "Pix - Recebido - 01/12 00:06 00052998224725 JOAO VITOR",
        "credit",
        "JOAO VITOR",
        "***.982.247-**",
        None,
    ),
    # 000 and a CPF that also passes a CNPJ's check: the CPF
    (
        "Banco do Brasil",
        "Pix - Recebido - 03/01 12:07 00000731356586 Gabriela de",
        "credit",
        "Gabriela de",
        "***.313.565-**",
        None,
    ),
    (
        "Banco do Brasil",
        "Pix - Recebido - 30/12 10:24 11222333000181 M C EMPREEN",
        "credit",
        "M C EMPREEN",
        "11222333000181",
        None,
    ),
    (
        "Banco do Brasil",
        "Pix-Recebimento devolvido - 30/06 13:35 CINTIA ANDRADE CORREIA",
        "credit",
        "CINTIA ANDRADE CORREIA",
        None,
        None,
    ),
    # a MEI's registered name carries its owner's CPF; the CNPJ after it is the company's
    (
        "Nubank",
        "Transferência enviada pelo Pix - CLAUDIA PEREIRA 52998224725 - 11.222.333/0001-81 - "
        "PAGSEGURO INTERNET IP S.A. (0290) Agência: 1 Conta: 1234567-8",
        "debit",
        "CLAUDIA PEREIRA",
        "11.222.333/0001-81",
        "PAGSEGURO INTERNET IP S.A. (0290)",
    ),
    (
        "Inter",
        'Pix enviado: "Cp :16501555-BRUNO DE ASSIS 52998224725"',
        "debit",
        "BRUNO DE ASSIS",
        "***.982.247-**",
        "16501555",
    ),
    (
        "Inter",
        'Pix recebido: "00019 253084687 ADELINO SILVA"',
        "credit",
        "ADELINO SILVA",
        None,
        None,
    ),
    (
        "PagBank",
        "QR Code Pix enviado - Comercial De Doces Tiete",
        "debit",
        "Comercial De Doces Tiete",
        None,
        None,
    ),
    ("sandbox", f"PIX RECEBIDO {E2E} MARIA SILVA", "credit", "MARIA SILVA", None, None),
    # C6 writes the payer's CPF, a hyphen and the name, and nothing else
    ("C6", "52998224725-CLEITON DA SILVA", "credit", "CLEITON DA SILVA", "***.982.247-**", None),
]


@pytest.mark.parametrize(("bank", "text", "direction", "name", "document", "psp"), TABLE)
def test_real_forms(bank, text, direction, name, document, psp) -> None:
    said = describe(text, direction)
    assert (said.name, said.document, said.bank) == (name, document, psp), bank
    assert said.pix is ("PIX" in text.upper())  # C6's bare "CPF-NAME" says nothing of PIX


def test_ids_and_refunds() -> None:
    said = describe(f"DEVOLUCAO PIX {RTR} REF {E2E}", "debit")
    assert (said.refund_id, said.end_to_end_id, said.refund, said.name) == (RTR, E2E, True, None)
    assert describe("Reembolso recebido pelo Pix - LOJA X", "credit").refund


def test_key_and_labelled_document() -> None:
    said = describe("Pix recebido - CPF 12345678901 - chave: fulano@x.com", "credit")
    assert (said.document, said.key, said.name) == ("***.456.789-**", "fulano@x.com", None)


def test_a_full_cpf_is_never_kept_whole() -> None:
    said = describe("PIX RECEBIDO - MARIA - 123.456.789-01", "credit")
    assert (said.document, said.name) == ("***.456.789-**", "MARIA")
    company = describe("PIX ENVIADO - LOJA - 12.345.678/0001-90", "debit")
    assert company.document == "12.345.678/0001-90"  # a CNPJ names a company, not a person


def test_digits_that_are_not_a_document_stay_out_of_it() -> None:
    # 11 digits failing the CPF check are not a CPF (an account, an id): not a document
    said = describe("PIX RECEBIDO - MARIA SILVA 12345678900", "credit")
    assert said.document is None
    # a short number is part of a name ("99 TAXIS"), a long bare number is not
    assert describe("Pix enviado - 99 TAXIS", "debit").name == "99 TAXIS"
    # a time stamp that passes the CNPJ check is still a time stamp
    assert describe("Pix recebido 20261018130953 LOJA", "credit").document is None


def test_every_mask_character_is_written_as_a_star() -> None:
    for written in ("•••.123.456-••", "●●●.123.456-●●", "xxx.123.456-xx", "***.123.456-**"):
        text = f"Transferência recebida pelo Pix - ANA - {written} - NU PAGAMENTOS (0260)"
        assert describe(text, "credit").document == "***.123.456-**", written


def test_direction_word_never_contradicts_the_sign() -> None:
    text = "Estorno - Transferência enviada pelo Pix - LOJA"
    assert describe(text, "credit").direction_word is None  # the sign wins
    assert describe(text, "debit").direction_word == "debit"
    assert direction_from_text("Pix recebido FULANO") == "credit"
    assert direction_from_text("PIX TRANSF FULANO") is None  # the words do not say


def test_not_a_pix_text_says_nothing_of_a_counterparty() -> None:
    assert describe("TARIFA PACOTE SERVICOS", "debit").name is None
    assert describe(None) == Described()
    assert describe("", "credit") == Described()


@given(st.text(max_size=300), st.sampled_from([None, "credit", "debit"]))
def test_any_text_is_read_without_error(text: str, direction: str | None) -> None:
    said = describe(text, direction)
    assert said.direction_word in (None, "credit", "debit")
    if direction is not None and said.direction_word is not None:
        assert said.direction_word == direction
    if said.name is not None:
        assert said.name == said.name.strip() and said.name
