"""What recon knows of each bank, as data in one place: CSV layouts, header words,
the words of balance rows, footers, fees and refunds, the forms of their description texts.

The readers (recon.statements.formats) and the parser of banks' texts (describe) hold the
logic and read these tables; a bank's new export is usually a row here (a Layout, a header
synonym, a lead phrase) and a test with its published sample (tests/statements). Python and
not a TOML or CSV file: the entries are frozensets, regular expressions and dataclasses
that the readers use as they are, checked by mypy and ruff, with the comment that says
where each came from beside it; a data file would need its own loader and schema checks
for the same content. Where each layout and text form was published: docs/statements.md.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# -- CSV headers: the vocabulary of column names (recon.statements.formats.csv_sniff) ------


def normalize(name: str) -> str:
    """A header cell as the vocabulary spells it: lower case, no accents, no "(R$)"."""
    s = unicodedata.normalize("NFKD", name.strip().strip('"').lstrip("\ufeff"))
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = re.sub(r"\(\s*(?:em\s+)?r\$\s*\)|\br\$", " ", s)
    s = re.sub(r"[^a-z0-9$]+", " ", s)
    return " ".join(s.split())


def _names(*names: str) -> frozenset[str]:
    return frozenset(normalize(n) for n in names)


# Headers that can only mean a D/C flag: when the amounts carry no sign and such a column holds
# values that are no credit/debit words, the file states the direction in a way recon cannot
# read, and it is refused rather than read as all credits.
FLAG_ONLY = _names(
    "D/C",
    "DC",
    "C/D",
    "CD",
    "Deb_Cred",
    "Débito/Crédito",
    "Crédito/Débito",
    "Credit/Debit",
    "Natureza",
    "Sinal",
    "Entrada/Saída",
    "E/S",
)


# recon field -> header names (normalized). Order of VOCABULARY matters only for ties.
VOCABULARY: dict[str, frozenset[str]] = {
    "booked_at": _names(
        "Data",
        "Date",
        "Data Lançamento",
        "Data de Lançamento",
        "Data do Lançamento",
        "Data Movimento",
        "Data Mov",
        "Data_Mov",
        "Dt Lançamento",
        "Data da Transação",
        "Data Transação",
        "RELEASE_DATE",
        "Data de Compra",
        "Data Operação",
        "Data Hora",
        "Data e Hora",
        "data_hora",
        "Transaction Date",
        "Posting Date",
        "Booking Date",
        "Fecha",
        "Data da Movimentação",
        "Data Efetivação",
    ),
    "amount": _names(
        "Valor",
        "Amount",
        "Value",
        "Valor Lançamento",
        "Valor do Lançamento",
        "TRANSACTION_NET_AMOUNT",
        # Mercado Pago's settlement report ("Todas as transações": TRANSACTION_AMOUNT,
        # FEE_AMOUNT, SETTLEMENT_NET_AMOUNT) and release report (GROSS_AMOUNT, MP_FEE_AMOUNT,
        # NET_CREDIT_AMOUNT / NET_DEBIT_AMOUNT): the net is what moved in the account
        "SETTLEMENT_NET_AMOUNT",
        "Net Amount",
        "Valor Líquido",
        "Montante",
        "Quantia",
        "Valor Movimentação",
        "Valor da Transação",
        "Importe",
    ),
    "credit": _names(
        "Crédito",
        "Créditos",
        "Entrada",
        "Entradas",
        "Credit",
        "Money In",
        "Valor Crédito",
        "NET_CREDIT_AMOUNT",
    ),
    "debit": _names(
        "Débito",
        "Débitos",
        "Saída",
        "Saídas",
        "Debit",
        "Money Out",
        "Valor Débito",
        "NET_DEBIT_AMOUNT",
    ),
    # a PSP's fee on the line, and the line before it (recon.statements.formats.csv: fee, gross)
    "fee": _names(
        "FEE_AMOUNT", "MP_FEE_AMOUNT", "Fee Amount", "Tarifa", "Valor da Tarifa", "Valor Tarifa"
    ),
    "gross": _names("TRANSACTION_AMOUNT", "GROSS_AMOUNT", "Gross Amount", "Valor Bruto"),
    "indicator": FLAG_ONLY
    | _names(
        "Tipo Lançamento",
        "Tipo",
        "Tipo de Lançamento",
        "Tipo de Transação",
        "Tipo Transação",
        "Tipo de Movimento",
        "Tipo de Movimentação",
        "Tipo de Operação",
    ),
    "text": _names(
        "Histórico",
        "Lançamento",
        "Descrição",
        "Detalhes",
        "Título",
        "Title",
        "Description",
        "Memo",
        "TRANSACTION_TYPE",
        "Tipo",
        "Estabelecimento",
        "Movimentação",
        "Complemento",
        "Transação",
        "Tipo Transação",
        "Descrição da Transação",
        "Detalhe",
        "Histórico Complementar",
        # Banco do Brasil's detailed export: the PIX's time, payer's document and name
        "Detalhamento Hist.",
        "Detalhamento Histórico",
        "Detalhamento do Histórico",
    ),
    "bank_reference": _names(
        "Identificador",
        "Documento",
        "Docto",
        "Docto.",
        "Nr_Doc",
        "Nr Doc",
        "Número do Documento",
        "N° documento",
        "Nº Documento",
        "No Documento",
        "N Documento",
        "Num Documento",
        "REFERENCE_ID",
        "ID",
        "ID Transação",
        "Código da Transação",
        "Codigo Transacao",
        "FITID",
        "SOURCE_ID",
        "Autenticação",
        "Número Documento",
        "Id da Transação",
        "Referência",
    ),
    "balance": _names(
        "Saldo",
        "Saldos",
        "Balance",
        "PARTIAL_BALANCE",
        "Saldo Final",
        "Saldo Atual",
        "Saldo do Dia",
    ),
    "end_to_end_id": _names(
        "End to End ID", "EndToEndId", "E2E", "E2E ID", "Id Fim a Fim", "end_to_end_id"
    ),
    "txid": _names("txid"),
    "counterparty_name": _names(
        "Nome",
        "Contraparte",
        "Nome Contraparte",
        "Favorecido",
        "Pagador",
        "Recebedor",
        "Beneficiário",
        "Nome do Pagador",
        "Counterparty",
        "Nome do Favorecido",
    ),
    "counterparty_document": _names(
        "CPF/CNPJ", "CNPJ/CPF", "Documento Contraparte", "CPF", "CNPJ", "Documento do Pagador"
    ),
    "counterparty_key": _names("Chave Pix", "Chave"),
}
DAILY_BALANCE = _names("Saldo do Dia")

FLAG_DEBIT = frozenset({"d", "debito", "debitos", "saida", "saidas", "debit", "db", "deb", "dr"})
FLAG_CREDIT = frozenset({"c", "credito", "creditos", "entrada", "entradas", "credit", "cr", "cred"})
FLAG_SYMBOLS = {"+": "credit", "(+)": "credit", "-": "debit", "(-)": "debit"}


# -- Named bank CSV layouts: a header signature and what the header cannot say ------------


@dataclass(frozen=True)
class Layout:
    """A bank's published CSV layout: its header signature and what the header cannot say."""

    name: str
    label: str
    signature: frozenset[str]  # normalized header cells the file must have
    card: bool = False  # a card statement: purchases, not money of the account
    daily_balance: bool = False  # its balance column is the day's closing, not per line
    continuation: bool = False  # rows without date and amount continue the line above
    # A signature whose normalized names another bank's export shares is told apart by how
    # the file is written: the header cells exactly as written, the delimiter, the dates.
    written: tuple[str, ...] = ()
    delimiter: str = ""
    date_format: str = ""

    def matches(self, cells: Sequence[str], delimiter: str, date_format: str | None) -> bool:
        """Whether a header (and the file's delimiter and dates) is this layout's."""
        if not self.signature <= {normalize(c) for c in cells}:
            return False
        if self.written and tuple(c.strip() for c in cells) != self.written:
            return False
        if self.delimiter and delimiter != self.delimiter:
            return False
        return not self.date_format or date_format == self.date_format


def _layout(name: str, label: str, cells: Sequence[str], **kw: Any) -> Layout:
    return Layout(name, label, _names(*cells), **kw)


# Most specific first: the first layout whose signature is in the header wins.
LAYOUTS: tuple[Layout, ...] = (
    _layout("nubank-conta", "Nubank (conta)", ["Data", "Valor", "Identificador", "Descrição"]),
    _layout("nubank-cartao", "Nubank (cartão)", ["date", "title", "amount"], card=True),
    _layout("inter-conta", "Inter (conta)", ["Data Lançamento", "Descrição", "Valor", "Saldo"]),
    _layout(
        "inter-cartao",
        "Inter (cartão)",
        ["Data", "Lançamento", "Categoria", "Tipo", "Valor"],
        card=True,
    ),
    _layout(
        "c6-conta",
        "C6 (conta)",
        [
            "Data Lançamento",
            "Data Contábil",
            "Título",
            "Descrição",
            "Entrada(R$)",
            "Saída(R$)",
            "Saldo do Dia(R$)",
        ],
        daily_balance=True,
    ),
    _layout(
        "c6-cartao",
        "C6 (cartão)",
        [
            "Data de Compra",
            "Nome no Cartão",
            "Final do Cartão",
            "Descrição",
            "Parcela",
            "Valor (em R$)",
        ],
        card=True,
    ),
    _layout(
        "bb",
        "Banco do Brasil",
        ["Data", "Lançamento", "Detalhes", "N° documento", "Valor", "Tipo Lançamento"],
    ),
    _layout(
        "bb-classico",
        "Banco do Brasil (clássico)",
        [
            "Data",
            "Dependencia Origem",
            "Histórico",
            "Data do Balancete",
            "Número do documento",
            "Valor",
        ],
    ),
    _layout("itau", "Itaú", ["data", "lançamento", "ag./origem", "valor (R$)"]),
    _layout(
        "itau-cartao",
        "Itaú (cartão)",
        ["data", "lançamento", "valor"],
        card=True,
        written=("data", "lançamento", "valor"),
        delimiter=",",
        date_format="%Y-%m-%d",
    ),
    _layout(
        "bradesco",
        "Bradesco",
        ["Data", "Histórico", "Docto.", "Crédito (R$)", "Débito (R$)", "Saldo (R$)"],
        continuation=True,
    ),
    _layout(
        "santander", "Santander", ["Data", "Histórico", "Documento", "Valor (R$)", "Saldo (R$)"]
    ),
    _layout("caixa", "Caixa", ["Conta", "Data_Mov", "Nr_Doc", "Historico", "Valor", "Deb_Cred"]),
    _layout(
        "mercadopago",
        "Mercado Pago",
        [
            "RELEASE_DATE",
            "TRANSACTION_TYPE",
            "REFERENCE_ID",
            "TRANSACTION_NET_AMOUNT",
            "PARTIAL_BALANCE",
        ],
    ),
    _layout("pagbank", "PagBank", ["CODIGO DA TRANSACAO", "DATA", "TIPO", "DESCRICAO", "VALOR"]),
    # BTG Pactual's "Extrato de conta corrente" workbook: its "Saldo Diário" rows (in the
    # Valor column) are the day's closing with the account's yield, which it does not list
    _layout(
        "btg",
        "BTG Pactual",
        ["Data e hora", "Categoria", "Transação", "Descrição", "Valor"],
        daily_balance=True,
    ),
)
GENERIC = Layout("generic", "by the header vocabulary", frozenset())

# Columns only a card statement has (the card, its holder, the installment): a file of no named
# layout that has one is a card statement, unless it also has columns of a merchant's sales
# report (an acquirer's or PSP's list of card sales, where the buyer's card is named too and a
# sale is money in), or its amounts are mostly negative (purchases already written as debits).
CARD_COLUMNS = _names(
    "Portador",
    "Nome do Portador",
    "Parcela",
    "Parcelas",
    "Final do Cartão",
    "Final Cartão",
    "Nome no Cartão",
    "Cartão",
    "Número do Cartão",
)
SALES_COLUMNS = _names(
    "Bandeira",
    "Adquirente",
    "Credenciadora",
    "NSU",
    "Código de Autorização",
    "Autorização",
    "MDR",
    "Taxa",
    "Taxa MDR",
    "Valor Bruto",
    "Valor Líquido",
    "Modalidade",
    "Terminal",
    "Data de Pagamento",
    "Data Prevista",
    "Previsão de Pagamento",
    "Estabelecimento Comercial",
)

HEADERLESS = Layout(
    "sem-cabecalho", "headerless data;lançamento;valor[;saldo] (Itaú TXT/CSV)", frozenset()
)


# -- Rows of a statement's table that are no line (recon.statements.formats.csv) -----------

# A balance row's label ("SALDO ANTERIOR", "S A L D O") and the first text of a row that ends
# the table ("Total", "Últimos Lançamentos", "Lançamentos futuros")
BALANCE_LABEL = re.compile(r"(?i)^\s*(?:saldo\b|s\s+a\s+l\s+d\s+o\b)")
TABLE_FOOTER = re.compile(
    r"(?i)^\s*(?:total\b|[úu]ltimos\s+lan[çc]amentos|lan[çc]amentos\s+futuros)"
)


# -- Words of a line's text that say its kind (recon.statements.lines.classify) ------------

# The words of the bank's own lines, by bank and kind: what a bank prints for its charges
# (`fee`), for the interest it charges (`interest`) and for what the account earns (`yield`).
# A bank's row holds the spellings only it was seen to print, "*" the words every bank uses;
# classify reads the union per kind, so a spelling learnt from one bank serves every file
# (a bank's export does not say which bank wrote it). Regular expressions (Python's and
# RE2's), read as whole words (no letter on either side: "TAR" in "TAR PACOTE", "0670TAR",
# "TAR/CUSTAS", never in "BITTAR"; "IOF" never in "BIOFARMA"; "REND" never in "BB RENDE
# FACIL", an investment, not its yield) and only before the text says PIX: what follows "PIX"
# is the counterparty ("Transferência recebida pelo Pix - CASSIANO BITTAR" is a PIX received,
# not a fee). The texts each row was taken from are tests/statements/test_bank_words.py's.
KIND_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "*": {
        "fee": ("TARIFA", "TARIFAS", "TAXA", "TAXAS", "TAR", "CESTA", "IOF"),
        "interest": ("JUROS", "ENCARGOS"),
        "yield": ("RENDIMENTO", "RENDIMENTOS", "REND"),
    },
    # "Cobrança de I.O.F. - IOF Saldo Devedor Conta" (IOF written with dots)
    "Banco do Brasil": {"fee": (r"I\.O\.F",)},
    # "RENTAB.INVEST FACILCRED*": the yield of Invest Fácil
    "Bradesco": {"yield": ("RENTAB",)},
    # a savings account's "CRED JUROS" (interest the account earns) and "REM BASICA"
    "Caixa": {"yield": (r"CRED\s+JUROS", r"REM\s+BASICA")},
}
# The order the kinds are told in: a yield before interest ("CRED JUROS" is what the account
# earns), a fee before both ("IOF S/ SALDO DEVEDOR" is the tax on the interest, a fee).
OWN_KINDS = ("fee", "yield", "interest")


def kind_words(kind: str) -> tuple[str, ...]:
    """Every bank's words of one of OWN_KINDS, "*" first, each once."""
    words = (w for bank in KIND_WORDS.values() for w in bank.get(kind, ()))
    return tuple(dict.fromkeys(words))


# Words of the bank's own credits that are no PIX and none of its own kinds, even when the
# text names a PIX product: a cashback ("CASHBACK TURBINADO PIX", Inter). Read like the kind
# words (whole, before "PIX"); the line is "other".
OWN_WORDS = ("CASHBACK",)
# Words that make a line with PIX evidence a devolução ("DEVOL" covers DEVOLUCAO, DEVOLUÇÃO,
# DEVOLVIDO and the banks' DEVOL abbreviation).
REFUND_WORDS = ("DEVOL", "REEMBOLSO", "ESTORNO")


# -- What banks write in a line's free text (recon.statements.describe) --------------------

# Inter: "Cp :ISPB-NAME", and in its OFX "Cp: ISPB-AGENCY-ACCOUNT-NAME" / "Contraparte: …"
INTER_COUNTERPARTY = re.compile(
    r"(?i)\b(?:Cp|Contraparte)\s*:\s*(?P<ispb>[0-9]{8})(?:\s*-\s*[0-9]+){0,2}\s*-\s*(?P<name>[^\"]+)"
)
# Inter between its own accounts: "D: PAYER. C: PAYEE"
PAYER_AND_PAYEE = re.compile(r"(?i)^\s*D\s*:\s*(?P<payer>.+?)\.?\s+C\s*:\s*(?P<payee>.+)$")
# Bradesco: "Transfe Pix Rem: NAME" (the sender) / "Des: NAME" (the recipient)
SENDER_OR_RECIPIENT = re.compile(
    r"(?i)\b(?P<which>Rem|Des|Remetente|Destinat[áa]rio)\s*:\s*(?P<name>.+)$"
)
# C6: the payer's CPF (or CNPJ), a hyphen and the name, and nothing else
DOCUMENT_DASH_NAME = re.compile(r"^\s*(?P<doc>[0-9]{11}|[0-9]{14})\s*-\s*(?P<name>[^0-9].*)$")
# Banco do Brasil's details: the PIX's day and time before the name ("12/03 21:08 NAME")
LEADING_DAY_TIME = re.compile(
    r"^\s*[0-9]{2}/[0-9]{2}(?:/[0-9]{2,4})?\s+[0-9]{2}:[0-9]{2}(?::[0-9]{2})?\s*"
)
# The words that introduce a PIX line, longest first; what follows is the counterparty.
PIX_LEADS = re.compile(
    r"(?i)^\s*(?:"
    r"transfer[êe]ncia\s+(?:recebida|enviada)(?:\s+pelo\s+pix)?"
    r"|reembolso\s+(?:recebido|enviado)\s+pelo\s+pix"
    r"|estorno\s*-\s*transfer[êe]ncia\s+(?:recebida|enviada)(?:\s+pelo\s+pix)?"
    r"|pagamento\s+com\s+(?:c[óo]digo\s+)?qr(?:\s*code)?\s+pix"
    r"|transfer[êe]ncia\s+pix\s+(?:recebida|enviada)"
    r"|pix\s+(?:recebido|enviado|recebida|enviada)(?:\s+interno)?(?:\s+(?:de|para|devolvido))?"
    r"|pix\s*-\s*(?:recebimento|envio)(?:\s+devolvido)?"
    r"|pix\s*-\s*(?:recebido|enviado)"
    r"|qr\s*code\s+pix\s+(?:recebido|enviado)"
    r"|pix\s+(?:transfer|transf|qrs|qrd|trans)\b"
    r"|transfe\s+pix"
    r"|(?:recebimento|envio|pagamento)\s+(?:de\s+)?pix"
    r"|devolu[çc][ãa]o\s+pix"
    r"|pix"
    r")\s*[:\-–]?\s*"
)
# Direction and refund words in a text (Described.direction_word, Described.refund)
CREDIT_TEXT = re.compile(r"(?i)\b(?:recebid[oa]s?|entrada|cr[ée]dito|rem)\b|recebimento")
DEBIT_TEXT = re.compile(r"(?i)\b(?:enviad[oa]s?|sa[íi]da|d[ée]bito|envio|des|pagamento)\b")
REFUND_TEXT = re.compile(r"(?i)devolu|reembolso|estorno|devolvido")
