"""Shared helpers: blank cleaning (row and vectorized agree), PIX id finding, classification."""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.statements.lines import classify, clean, pix_ids, vclean, vkind

E1 = "E18236120202611011000s0123456789"
D1 = "D18236120202611021200r0000000001"
WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def test_every_whitespace_character_is_cleaned_alike() -> None:
    values = ["a" + w + "b" for w in WHITESPACE] + [w + "x" + w for w in WHITESPACE]
    assert vclean(pa.array(values)).to_pylist() == [clean(v) for v in values]


@given(st.lists(st.text(alphabet=st.sampled_from(["a", "é", " ", *WHITESPACE[:8]]), max_size=8)))
def test_vclean_equals_clean(values: list[str]) -> None:
    assert vclean(pa.array(values, pa.string())).to_pylist() == [clean(v) for v in values]


def test_pix_ids() -> None:
    assert pix_ids(f"PIX RECEBIDO {E1} FULANO") == (E1, None)
    assert pix_ids(f"DEVOLUCAO PIX {D1} REF {E1}") == (E1, D1)
    assert pix_ids(f"X{E1}") == (None, None)  # glued to other text: not an id
    assert pix_ids(None) == (None, None)


def test_classify() -> None:
    assert classify("credit", f"PIX RECEBIDO {E1}") == ("pix_in", E1, None)
    assert classify("debit", "PIX ENVIADO", E1) == ("pix_out", E1, None)
    assert classify("debit", f"DEVOLUCAO PIX {D1} REF {E1}") == ("pix_refund_out", D1, E1)
    assert classify("credit", "DEVOLUÇÃO RECEBIDA", D1) == ("pix_refund_in", D1, None)
    assert classify("debit", "TARIFA PIX") == ("fee", None, None)
    assert classify("debit", "X", code_kind="fee") == ("fee", None, None)
    assert classify("credit", "PIX SEM ID") == ("pix_in", None, None)
    assert classify("credit", "TED RECEBIDA") == ("other", None, None)


def test_a_devolucao_needs_pix_evidence() -> None:
    """A returned cheque or TED is not a PIX devolução (Itaú's extrato writes a returned
    cheque as "DEVOL CHQ PAGTO CTA/TIT"); a refund word with PIX, an e2e id or a return id is."""
    for text in ("DEVOL CHQ PAGTO CTA/TIT", "CHEQUE DEVOLVIDO", "DEVOLUCAO TED/DOC", "ESTORNO TED"):
        assert classify("debit", text) == ("other", None, None), text
        assert classify("credit", text) == ("other", None, None), text
    assert classify("debit", "DEVOL CHQ", "000123") == ("other", None, None)
    assert classify("credit", "DEVOLUCAO PIX") == ("pix_refund_in", None, None)
    assert classify("credit", "DEVOLUÇÃO PIX") == ("pix_refund_in", None, None)
    assert classify("debit", "PIX DEVOLVIDO") == ("pix_refund_out", None, None)
    assert classify("credit", "Reembolso recebido pelo Pix") == ("pix_refund_in", None, None)
    assert classify("credit", f"DEVOLUCAO {E1}") == ("pix_refund_in", None, E1)
    assert classify("credit", "DEVOLUCAO", E1) == ("pix_refund_in", None, E1)
    assert classify("credit", "DEVOLUCAO TED", D1) == ("pix_refund_in", D1, None)  # the id says


@pytest.mark.parametrize(
    ("direction", "text", "kind"),
    [
        # the bank's own lines that name a PIX product are no PIX from a payer (Inter's OFX)
        ("credit", "CASHBACK PIX", "other"),
        ("credit", "CASHBACK TURBINADO PIX - Inter Primus", "other"),
        ("credit", "Cashback recebido - compras no Pix", "other"),
        ("credit", "RENDIMENTO CONTA PIX", "yield"),
        ("credit", "REND PAGO APLIC AUT MAIS", "yield"),
        ("debit", "JUROS PIX PARCELADO", "interest"),
        ("debit", "ESTORNO CASHBACK PIX", "other"),
        # ... but a name after "PIX" is the counterparty's
        ("credit", "Pix recebido - Cashback Brasil Ltda", "pix_in"),
        ("credit", "PIX RECEBIDO RENDIMENTOS CONSULTORIA", "pix_in"),
        # fee words are whole words: "TAR" in BITTAR, "IOF" in BIOFARMA are names
        ("credit", "Transferência recebida pelo Pix - CASSIANO BITTAR JORGE", "pix_in"),
        ("credit", "PIX RECEBIDO BIOFARMA LTDA", "pix_in"),
        ("debit", "PIX ENVIADO - CESTA BASICA LTDA", "pix_out"),
        ("debit", "PIX ENVIADO - IOF CONSULTORIA", "pix_out"),
        ("credit", "TED RECEBIDA BITTAR", "other"),
        ("debit", "TAR PACOTE MENSAL", "fee"),
        ("debit", "0670TAR PACOTE MENSAL", "fee"),
        ("debit", "TAR/CUSTAS COBRANCA", "fee"),
        ("debit", "DEB.IOF", "fee"),
        ("debit", "IOF ADICIONAL", "fee"),
        ("debit", "Cobrança de I.O.F.", "fee"),  # Banco do Brasil
        ("debit", "COBRANCA DE I.O.F.", "fee"),
        ("debit", "PIX ENVIADO - I.O.F. ASSESSORIA", "pix_out"),
        ("debit", "Tarifas bancárias", "fee"),
        ("debit", "TARIFA PIX ENVIADO", "fee"),
        # a fee given back is a fee, not a devolução of a PIX
        ("credit", "ESTORNO TARIFA PIX", "fee"),
        ("credit", "ESTORNO TARIFA", "fee"),
        ("credit", "DEVOLUCAO PIX", "pix_refund_in"),
    ],
)
def test_classify_bank_words(direction: str, text: str, kind: str) -> None:
    assert classify(direction, text) == (kind, None, None)


def test_ids_beat_words() -> None:
    assert classify("credit", f"CASHBACK PIX {E1}") == ("pix_in", E1, None)
    assert classify("credit", f"ESTORNO TARIFA PIX {E1}") == ("pix_refund_in", None, E1)
    assert classify("debit", "TARIFA", D1) == ("pix_refund_out", D1, None)


_TOKENS = [
    "PIX",
    "Pix",
    "TARIFA",
    "Tarifas",
    "TAXA",
    "TAR",
    "BITTAR",
    "0670TAR",
    "IOF",
    "BIOFARMA",
    "I.O.F.",
    "CESTA",
    "CASHBACK",
    "Cashback",
    "RENDIMENTO",
    "REND",
    "JUROS",
    "ENCARGOS",
    "RENTAB",
    "CRED",
    "REM",
    "BASICA",
    "Rende",
    "ESTORNO",
    "DEVOLUCAO",
    "Reembolso",
    "RECEBIDO",
    "ENVIADO",
    "TED",
    "Ç",
    "é",
    "ç",
    "-",
    ":",
    "/",
    ".",
    "123",
    E1,
    D1,
]


@given(
    st.lists(
        st.tuples(
            st.lists(
                st.tuples(st.sampled_from(_TOKENS), st.sampled_from(["", " ", " - ", "/"])),
                max_size=7,
            ),
            st.booleans(),
            st.sampled_from([None, "fee", "interest", "yield"]),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_vkind_is_classify_over_a_column(
    cases: list[tuple[list[tuple[str, str]], bool, str | None]],
) -> None:
    """The vectorized rule (OFX fast path) and the per-line rule give the same kind."""
    texts = ["".join(t + sep for t, sep in words).strip() for words, _, _ in cases]
    negative = pa.array([neg for _, neg, _ in cases])
    hints = pa.array([hint for _, _, hint in cases], pa.string())
    ids = [pix_ids(t) for t in texts]
    kind, by_ids = vkind(
        negative,
        pc.utf8_upper(pa.array(texts)),
        pa.array([e is not None for e, _ in ids]),
        pa.array([d is not None for _, d in ids]),
        hints,
    )
    expected = [
        classify("debit" if neg else "credit", t, code_kind=hint)
        for t, (_, neg, hint) in zip(texts, cases, strict=True)
    ]
    assert kind.to_pylist() == [k for k, _, _ in expected]
    # by_ids: the devoluções whose end_to_end_id is the return id (or refund_of the E… id)
    told = [k.startswith("pix_refund") and (e2e or of) is not None for k, e2e, of in expected]
    assert by_ids.to_pylist() == told


def test_vkind_reads_no_text_as_classify_reads_none() -> None:
    kind, by_ids = vkind(
        pa.array([False, True]),
        pa.array([None, None], pa.string()),
        pa.array([False, False]),
        pa.array([False, False]),
        pa.array([None, "fee"], pa.string()),
    )
    assert kind.to_pylist() == [
        classify("credit", None)[0],
        classify("debit", None, code_kind="fee")[0],
    ]
    assert by_ids.to_pylist() == [False, False]
