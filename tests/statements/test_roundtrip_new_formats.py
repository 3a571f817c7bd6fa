"""Generated camt.053 and Open Finance statements round-trip to the exact cent (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from recon.money import MAX_CENTS
from recon.statements.formats.camt import parse_bytes
from recon.statements.formats.open_finance import parse_documents

MOVES = st.lists(
    st.tuples(st.integers(min_value=1, max_value=MAX_CENTS // 1000), st.booleans()),
    min_size=1,
    max_size=20,
)


def _amount(cents: int, decimals: int = 2) -> str:
    return f"{cents // 100}.{cents % 100:02d}" + "0" * (decimals - 2)


@settings(max_examples=60, deadline=None)
@given(
    MOVES, st.integers(min_value=-(10**12), max_value=10**12), st.sampled_from(["02", "08", "13"])
)
def test_camt_round_trip(moves: list[tuple[int, bool]], opening: int, version: str) -> None:
    net = sum(c if credit else -c for c, credit in moves)
    status = "<Sts>BOOK</Sts>" if version == "02" else "<Sts><Cd>BOOK</Cd></Sts>"

    def bal(code: str, cents: int) -> str:
        side = "CRDT" if cents >= 0 else "DBIT"
        return (
            f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp>"
            f'<Amt Ccy="BRL">{_amount(abs(cents))}</Amt><CdtDbtInd>{side}</CdtDbtInd>'
            "<Dt><Dt>2026-11-01</Dt></Dt></Bal>"
        )

    entries = "".join(
        f'<Ntry><Amt Ccy="BRL">{_amount(c)}</Amt><CdtDbtInd>{"CRDT" if credit else "DBIT"}'
        f"</CdtDbtInd>{status}<BookgDt><Dt>2026-11-01</Dt></BookgDt>"
        f"<AcctSvcrRef>R{i}</AcctSvcrRef></Ntry>\n"
        for i, (c, credit) in enumerate(moves)
    )
    xml = (
        f'<?xml version="1.0"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.{version}">'
        "<BkToCstmrStmt><Stmt><Id>1</Id>"
        + bal("OPBD", opening)
        + bal("CLBD", opening + net)
        + entries
        + "</Stmt></BkToCstmrStmt></Document>"
    )
    result = parse_bytes(xml.encode(), "gen.xml")
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [c if credit else -c for c, credit in moves]


@settings(max_examples=60, deadline=None)
@given(MOVES, st.booleans())
def test_open_finance_round_trip(moves: list[tuple[int, bool]], v1: bool) -> None:
    items = []
    for i, (c, credit) in enumerate(moves):
        item = {
            "transactionId": f"T{i}",
            "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
            "creditDebitType": "CREDITO" if credit else "DEBITO",
            "transactionName": "TED",
            "type": "TED",
            "transactionDateTime": "2026-11-01T12:00:00.000Z",
        }
        if v1:
            item.update(amount=_amount(c), transactionCurrency="BRL")
        else:
            item["transactionAmount"] = {"amount": _amount(c, 4), "currency": "BRL"}
        items.append(item)
    text = json.dumps({"data": items})
    if v1:  # v1 wrote numbers: decoded as exact decimals, never floats
        text = text.replace('"amount": "', '"amount": ').replace(
            '", "transactionCurrency"', ', "transactionCurrency"'
        )
    from recon.statements.lines import json_documents

    result = parse_documents(json_documents(text, "p.json"), "p.json")
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [c if credit else -c for c, credit in moves]
