"""CSV exports in the shapes Brazilian banks and PSPs publish (one sample per layout).

Each sample is written the way the bank's export writes it (encoding, delimiter, preamble,
quoting, decimal mark, date format), with the forms of description text that bank uses;
the sources of each layout are listed in docs/statements.md. Names and numbers are made up.
`expected` is (layout, [(amount_cents, kind, counterparty_name)], period or None).
"""

from __future__ import annotations

from datetime import date

NUBANK_CONTA = (
    "Data,Valor,Identificador,Descrição\n"
    "01/11/2026,150.00,6543a1b2-0000-4000-8000-000000000001,Transferência recebida pelo Pix"
    " - MARIA DA SILVA - •••.123.456-•• - NU PAGAMENTOS - IP (0260) Agência: 1 Conta:"
    " 1234567-8\n"
    "02/11/2026,-37.79,68138eea-2dd1-40ae-898f-6ebf077ff936,Compra no débito via NuPay - iFood\n"
    "03/11/2026,-1200.50,6543a1b2-0000-4000-8000-000000000003,Transferência enviada pelo Pix"
    " - JOAO COMERCIO LTDA - 12.345.678/0001-90 - BCO DO BRASIL S.A. (0001) Agência: 1234"
    " Conta: 5678-9\n"
    "04/11/2026,50.00,6543a1b2-0000-4000-8000-000000000004,Reembolso recebido pelo Pix"
    " - LOJA X - 98.765.432/0001-10 - ITAÚ UNIBANCO S.A. (0341) Agência: 1 Conta: 2-3\n"
)

NUBANK_CARTAO = (
    "date,title,amount\n"
    "2026-11-03,Burger King,72.80\n"
    "2026-11-04,Studio Z - Parcela 1/3,106.66\n"
    "2026-11-05,Pagamento recebido,-4558.53\n"
)

INTER_CONTA = (
    "\ufeffExtrato Conta Corrente \n"
    "Conta ;72385499\n"
    "Período ;01/11/2026 a 05/11/2026\n"
    "Saldo ;1.992,51\n"
    "\n"
    "Data Lançamento;Descrição;Valor;Saldo\n"
    '01/11/2026;Pix recebido: "Cp :18236120-MARIA DA SILVA";1.000,00;2.992,51\n'
    '02/11/2026;Pix enviado: "Cp :00000000-JOAO SOUZA";-250,00;2.742,51\n'
    "03/11/2026;Pagamento efetuado: NETFLIX.COM;-55,90;2.686,61\n"
)

INTER_CONTA_HISTORICO = (
    "Extrato Conta Corrente\n"
    "Conta ;72385499\n"
    "Período ;19/08/2026 a 17/09/2026\n"
    "Saldo ;1.992,51\n"
    "\n"
    "Data Lançamento;Histórico;Descrição;Valor;Saldo\n"
    "30/08/2026;Pix enviado;JOAO DA SILVA;-250,00;1.742,51\n"
    "30/08/2026;Pix enviado;JOAO DA SILVA;-250,00;1.492,51\n"
    "02/09/2026;Pix recebido;MARIA SOUZA;1.000,00;2.492,51\n"
)

INTER_CARTAO = (
    "\ufeff"
    '"Data","Lançamento","Categoria","Tipo","Valor"\n'
    '"01/10/2026","APPLE COM BILL         SAO PAULO BRA","COMPRAS","Compra à vista","R$ 29,90"\n'
    '"02/10/2026","PAGAMENTO ON LINE","PAGAMENTO","Pagamento","-R$ 1.500,00"\n'
)

C6_CONTA = (
    "EXTRATO DE CONTA CORRENTE C6 BANK\n"
    "Agência: 1 Conta: 12345678-9\n"
    "Período: 01/11/2026 a 30/11/2026\n"
    "\n"
    "\n"
    "\n"
    "Data Lançamento,Data Contábil,Título,Descrição,Entrada(R$),Saída(R$),Saldo do Dia(R$)\n"
    '01/11/2026,01/11/2026,Pix recebido de MARIA DA SILVA,PIX RECEBIDO,"1.000,00",,"2.000,00"\n'
    '01/11/2026,01/11/2026,Pix enviado para JOAO SOUZA,PIX ENVIADO,,"-300,00","1.700,00"\n'
)

C6_CARTAO = (
    "Data de Compra;Nome no Cartão;Final do Cartão;Categoria;Descrição;Parcela;"
    "Valor (em US$);Cotação (em R$);Valor (em R$)\n"
    "05/11/2026;MARIA SILVA;1234;Restaurante;IFOOD *IFOOD;Única;0;0;45.90\n"
    "06/11/2026;MARIA SILVA;1234;-;Estorno IFOOD;Única;0;0;-45.90\n"
    "07/11/2026;MARIA SILVA;9876;Serviços;NETFLIX.COM;Única;0;0;1234.56\n"
)

# Itaú's card bill CSV: UTF-8 BOM, exactly `data,lançamento,valor`, ISO dates, dot decimals,
# purchases positive, the bill's payment negative (several importers document the same shape).
ITAU_CARTAO = (
    "\ufeffdata,lançamento,valor\n"
    "2026-11-05,PAGAMENTO EFETUADO,-1500\n"
    "2026-11-04,LOJA X            02/10,76.09\n"
    "2026-11-03,PIX QRS PADARIA BOM,4\n"
    "2026-11-03,MERCADO Y,12.5\n"
)

# A card bill of no named layout (a broker's card, as published): known by its columns.
CARTAO_COLUNAS = (
    "\ufeffData;Estabelecimento;Portador;Valor;Parcela\r\n"
    "01/11/2026;LOJA MADEIRAS LTDA;MARIA SILVA;R$ 694,80;2 de 10\r\n"
    "03/11/2026;MERCADO*PRODUTOS;MARIA SILVA;R$ 1.183,21;Única\r\n"
    "05/11/2026;ESTORNO LOJA;MARIA SILVA;-R$ 10,00;Única\r\n"
)

BB = (
    '"Data","Lançamento","Detalhes","N° documento","Valor","Tipo Lançamento"\n'
    '"31/10/2026","Saldo Anterior","","","1.000,00",""\n'
    '"01/11/2026","Pix - Enviado","01/11 21:08 João Vitor Oliveira","31201","-370,00","Saída"\n'
    '"01/11/2026","Pix - Recebido","01/11 10:00 Maria Souza","31202","500,00","Entrada"\n'
    '"01/11/2026","Saldo do dia","","","1.130,00",""\n'
)

BB_CLASSICO = (
    '"Data","Dependencia Origem","Histórico","Data do Balancete","Número do documento","Valor",\n'
    '"31/10/2026","","Saldo Anterior","","0","1000.00",\n'
    '"01/11/2026","","Pix - Recebido","","14","150.00",\n'
    '"01/11/2026","","Tarifa Pacote de Serviços","","15","-29.90",\n'
    '"01/11/2026","","S A L D O","","0","1120.10",\n'
)

ITAU = (
    "data;lançamento;ag./origem;valor (R$);saldos (R$)\n"
    "31/10/2026;SALDO ANTERIOR;;;1.000,00\n"
    "03/11/2026;PIX TRANSF  FULANO S03/11;;-50,00;\n"
    "04/11/2026;PIX QRS IFOOD COM AG04/11;;-25,90;\n"
    "04/11/2026;SALDO TOTAL DISPONÍVEL DIA;;;924,10\n"
)

BRADESCO = (
    "Extrato de: Ag: 513 | Conta: 21121-4 | Entre 01/07/2026 e 31/07/2026\n"
    "Data;Histórico;Docto.;Crédito (R$);Débito (R$);Saldo (R$);\n"
    '01/07/26;SALDO ANTERIOR;;;;"18.016,00";\n'
    '01/07/26; Transfe Pix;1357553;"1.296,00";;"19.312,00";\n'
    ";Rem: Leticia Pires;;;;;\n"
    '02/07/26; Transfe Pix;1357554;;"-312,00";"19.000,00";\n'
    ";Des: Joao Souza;;;;;\n"
    ';Total;;"1.296,00";"-312,00";;\n'
    ";Últimos Lançamentos;;;;;\n"
    '03/07/26; Transfe Pix;1357555;"10,00";;;\n'
)

SANTANDER = (
    "AGENCIA;1234;CONTA;01012345-6\n"
    "\n"
    "Data;Histórico;Documento;Valor (R$);Saldo (R$)\n"
    "01/11/2026;SALDO ANTERIOR;;;1.000,00\n"
    "01/11/2026;PIX RECEBIDO MARIA SILVA;000123;150,00;1.150,00\n"
    "02/11/2026;PIX ENVIADO JOAO SOUZA;000124;-50,00;1.100,00\n"
)

CAIXA = (
    '"Conta";"Data_Mov";"Nr_Doc";"Historico";"Valor";"Deb_Cred"\n'
    '"0423012920005778782426";"20261101";"000000";"SALDO DIA";"1000.00";"C"\n'
    '"0423012920005778782426";"20261102";"310325";"CRED PIX";"5964.52";"C"\n'
    '"0423012920005778782426";"20261102";"310326";"PIX ENVIADO";"64.52";"D"\n'
)

MERCADO_PAGO = (
    "INITIAL_BALANCE;CREDITS;DEBITS;FINAL_BALANCE\n"
    "1,52;25.441,34;-25.442,86;0,00\n"
    "\n"
    "RELEASE_DATE;TRANSACTION_TYPE;REFERENCE_ID;TRANSACTION_NET_AMOUNT;PARTIAL_BALANCE\n"
    "01-07-2026;Dinheiro reservado Despesas Mensais ;166611940878;-1,52;0,00\n"
    "02-07-2026;Pix recebido FABIANO CARVALHO DA SILVA;166801941210;500,00;500,00\n"
    "02-07-2026;Pagamento Cartão de crédito;166802160620;-500,00;0,00\n"
)

PAGBANK = (
    "CODIGO DA TRANSACAO;DATA;TIPO;DESCRICAO;VALOR\n"
    "404ee56a-32ee-4f00-9000-000000000001;01/10/2026;Rendimento da conta;"
    "Rendimento sobre dinheiro;0,03\n"
    "18ff075b-0eab-4f00-9000-000000000002;02/10/2026;Pix recebido;Juliano Pereira;10\n"
    "28ff075b-0eab-4f00-9000-000000000003;03/10/2026;Pix enviado;Padaria Bom Dia;-25,90\n"
)

# An extrato in the shape a published spreadsheet importer reads (Banco do Brasil's texts):
# every amount unsigned, the direction in "Tipo de Transação" as (+) / (-).
BB_SINAIS = (
    "Data,Valor,Tipo de Transação,Descrição,Tipo de Serviço\n"
    '31/10/2026,"1.000,00",(+),Saldo Anterior,- - -\n'
    '03/11/2026,"8,00",(-),Pix - Enviado,Joao Souza\n'
    '03/11/2026,"4,00",(+),Pix - Recebido,Maria Silva\n'
    '04/11/2026,"5,42",(-),Compra com Cartão,PADARIA X\n'
    '04/11/2026,"5,42",(+),Estorno de Débito,- - -\n'
)

# (name, text, encoding, expected layout, [(cents, kind, counterparty)], period)
SAMPLES: list[tuple[str, str, str, str, list[tuple[int, str, str | None]], tuple | None]] = [
    (
        "nubank-conta",
        NUBANK_CONTA,
        "utf-8",
        "nubank-conta",
        [
            (15000, "pix_in", "MARIA DA SILVA"),
            (-3779, "other", None),
            (-120050, "pix_out", "JOAO COMERCIO LTDA"),
            (5000, "pix_refund_in", "LOJA X"),
        ],
        (date(2026, 11, 1), date(2026, 11, 4)),
    ),
    (
        "nubank-cartao",
        NUBANK_CARTAO,
        "utf-8",
        "nubank-cartao",
        [(-7280, "other", None), (-10666, "other", None), (455853, "other", None)],
        (date(2026, 11, 3), date(2026, 11, 5)),
    ),
    (
        "inter-conta",
        INTER_CONTA,
        "utf-8",
        "inter-conta",
        [
            (100000, "pix_in", "MARIA DA SILVA"),
            (-25000, "pix_out", "JOAO SOUZA"),
            (-5590, "other", None),
        ],
        (date(2026, 11, 1), date(2026, 11, 5)),
    ),
    (
        "inter-conta-historico",
        INTER_CONTA_HISTORICO,
        "utf-8",
        "inter-conta",
        [
            (-25000, "pix_out", "JOAO DA SILVA"),
            (-25000, "pix_out", "JOAO DA SILVA"),
            (100000, "pix_in", "MARIA SOUZA"),
        ],
        (date(2026, 8, 19), date(2026, 9, 17)),
    ),
    (
        "inter-cartao",
        INTER_CARTAO,
        "utf-8",
        "inter-cartao",
        [(-2990, "other", None), (150000, "other", None)],
        (date(2026, 10, 1), date(2026, 10, 2)),
    ),
    (
        "c6-conta",
        C6_CONTA,
        "utf-8",
        "c6-conta",
        [(100000, "pix_in", "MARIA DA SILVA"), (-30000, "pix_out", "JOAO SOUZA")],
        (date(2026, 11, 1), date(2026, 11, 30)),
    ),
    (
        "c6-cartao",
        C6_CARTAO,
        "utf-8",
        "c6-cartao",
        [(-4590, "other", None), (4590, "other", None), (-123456, "other", None)],
        (date(2026, 11, 5), date(2026, 11, 7)),
    ),
    (
        "bb",
        BB,
        "latin-1",
        "bb",
        [(-37000, "pix_out", "João Vitor Oliveira"), (50000, "pix_in", "Maria Souza")],
        (date(2026, 11, 1), date(2026, 11, 1)),
    ),
    (
        "bb-classico",
        BB_CLASSICO,
        "latin-1",
        "bb-classico",
        [(15000, "pix_in", None), (-2990, "fee", None)],
        (date(2026, 11, 1), date(2026, 11, 1)),
    ),
    (
        "itau",
        ITAU,
        "cp1252",
        "itau",
        [(-5000, "pix_out", "FULANO S"), (-2590, "pix_out", "IFOOD COM AG")],
        (date(2026, 11, 3), date(2026, 11, 4)),
    ),
    (
        "bradesco",
        BRADESCO,
        "cp1252",
        "bradesco",
        [(129600, "pix_in", "Leticia Pires"), (-31200, "pix_out", "Joao Souza")],
        (date(2026, 7, 1), date(2026, 7, 31)),
    ),
    (
        "santander",
        SANTANDER,
        "cp1252",
        "santander",
        [(15000, "pix_in", "MARIA SILVA"), (-5000, "pix_out", "JOAO SOUZA")],
        (date(2026, 11, 1), date(2026, 11, 2)),
    ),
    (
        "caixa",
        CAIXA,
        "utf-8",
        "caixa",
        [(596452, "pix_in", None), (-6452, "pix_out", None)],
        (date(2026, 11, 2), date(2026, 11, 2)),
    ),
    (
        "mercadopago",
        MERCADO_PAGO,
        "utf-8",
        "mercadopago",
        [
            (-152, "other", None),
            (50000, "pix_in", "FABIANO CARVALHO DA SILVA"),
            (-50000, "other", None),
        ],
        (date(2026, 7, 1), date(2026, 7, 2)),
    ),
    (
        "pagbank",
        PAGBANK,
        "utf-8",
        "pagbank",
        [
            (3, "yield", None),  # the account's yield
            (1000, "pix_in", "Juliano Pereira"),
            (-2590, "pix_out", "Padaria Bom Dia"),
        ],
        (date(2026, 10, 1), date(2026, 10, 3)),
    ),
]

SAMPLES.append(
    (
        "bb-sinais",
        BB_SINAIS,
        "utf-8",
        "generic",
        [
            (-800, "pix_out", None),
            (400, "pix_in", None),
            (-542, "other", None),
            (542, "other", None),
        ],
        (date(2026, 11, 3), date(2026, 11, 4)),
    )
)

SAMPLES.append(
    (
        "itau-cartao",
        ITAU_CARTAO,
        "utf-8",
        "itau-cartao",
        [
            (150000, "other", None),
            (-7609, "other", None),
            (-400, "other", "PADARIA BOM"),
            (-1250, "other", None),
        ],
        (date(2026, 11, 3), date(2026, 11, 5)),
    )
)
SAMPLES.append(
    (
        "cartao-por-colunas",
        CARTAO_COLUNAS,
        "utf-8",
        "cartao",
        [(-69480, "other", None), (-118321, "other", None), (1000, "other", None)],
        (date(2026, 11, 1), date(2026, 11, 5)),
    )
)

ITAU_SEM_CABECALHO = (
    "01/11/2026;PIX TRANSF  FULANO S01/11;-50,00\n"
    "02/11/2026;PIX QRS IFOOD COM AG02/11;-25,90\n"
    "03/11/2026;REND PAGO APLIC AUT MAIS;0,12\n"
)
SAMPLES.append(
    (
        "itau-sem-cabecalho",
        ITAU_SEM_CABECALHO,
        "cp1252",
        "sem-cabecalho",
        [(-5000, "pix_out", "FULANO S"), (-2590, "pix_out", "IFOOD COM AG"), (12, "yield", None)],
        (date(2026, 11, 1), date(2026, 11, 3)),
    )
)
