"""Shared helpers: blank cleaning (row and vectorized agree), PIX id finding, classification."""

from __future__ import annotations

import sys

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from recon.statements.lines import classify, clean, pix_ids, vclean

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
    assert classify("debit", "X", fee_hint=True) == ("fee", None, None)
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
