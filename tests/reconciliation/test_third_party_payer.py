"""onramp_third_party_payer: a credit matched by txid or reference whose payer's document
contradicts the party's (masked digits disagree, or a CNPJ for a person). The pair stays
matched; the break is the flag."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.errors import ConfigError
from recon.pii import mask_document
from recon.reconciliation import ReconcileSettings
from recon.testing.handbuilt import T0, World, e2e, intent, line, uid

from .helpers import breaks, exception_rows, matches, run

AS_OF = T0 + timedelta(hours=6)
SPOUSE = {"name": "JOAO CARLOS PEREIRA", "doc": "***.111.222-**"}


def _paid(world: World, how: str = "txid", **payer: str | None) -> None:
    """Onramp 1 of MARIA SILVA (***.456.789-**) paid by a credit that names it by `how`."""
    world.snapshot([intent(1, client_reference="PEDIDO-778812")], AS_OF)
    names_it = {"txid": uid(1).replace("-", "")} if how == "txid" else {}
    text = {"description": "PIX RECEBIDO PEDIDO-778812"} if how == "reference" else {}
    world.statement([line(1, **names_it, **text, **payer)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("how", "label"), [("txid", "PIX charge code"), ("reference", "payment reference")]
)
def test_a_spouse_paying_by_qr_code_or_reference_is_flagged_and_stays_matched(world, how, label):
    _paid(world, how, **SPOUSE)
    result = run(world, lang="en")
    assert matches(result) == {(uid(1), e2e(1), how)}
    (row,) = exception_rows(result)
    assert (row["category"], row["priority"]) == ("onramp_third_party_payer", "P2")
    assert (row["intent_id"], row["end_to_end_id"]) == (uid(1), e2e(1))
    assert (row["expected_cents"], row["actual_cents"]) == (10_000, 10_000)
    assert row["reason_code"] == "onramp_third_party_payer"
    reason = row["reason"]
    assert f"(matched by {label})" in reason
    assert "paid by JOAO CARLOS PEREIRA (document ***.111.222-**)" in reason
    assert "party is MARIA SILVA (document ***.456.789-**)" in reason
    assert "MEI" not in reason
    assert result.summary.checks_passed


def test_the_reason_is_portuguese_by_default(world):
    _paid(world, **SPOUSE)
    (row,) = exception_rows(run(world))
    assert "JOAO CARLOS PEREIRA" in row["reason"] and "terceiro" in row["reason"]


def test_a_cnpj_for_a_person_is_flagged(world):
    _paid(world, name="PADARIA BOM PAO LTDA", doc="12.345.678/0001-**")
    (row,) = exception_rows(run(world, lang="en"))
    assert (row["category"], row["reason_code"]) == (
        "onramp_third_party_payer",
        "onramp_third_party_payer_company",
    )
    assert "a company, PADARIA BOM PAO LTDA (CNPJ 12.345.678/0001-**)" in row["reason"]
    assert "MEI" not in row["reason"]


def test_the_party_s_own_mei_is_said_so(world):
    """A MEI's CNPJ with the person's name (its root written before it, as banks do)."""
    _paid(world, name="52.062.865 MARIA SILVA", doc="52.062.865/0001-**")
    (row,) = exception_rows(run(world, lang="en"))
    assert (row["category"], row["reason_code"]) == (
        "onramp_third_party_payer",
        "onramp_third_party_payer_mei",
    )
    assert (
        "whose name agrees with the party's, MARIA SILVA (CPF ***.456.789-**): likely the "
        "party's MEI" in row["reason"]
    )


@pytest.mark.parametrize(
    "payer",
    [
        {},  # the party itself
        {"doc": None},  # the bank shows no document
        {"doc": "***.***.789-01"},  # other digits shown, none disagree
        {"name": "JOAO CARLOS PEREIRA"},  # another name, the same document: no contradiction
    ],
)
def test_no_flag_without_a_contradicting_document(world, payer):
    _paid(world, **payer)
    result = run(world)
    assert breaks(result) == set()
    assert matches(result) == {(uid(1), e2e(1), "txid")}


def test_the_priority_is_configurable(world):
    _paid(world, **SPOUSE)
    settings_ = ReconcileSettings.from_mapping({"priorities": {"onramp_third_party_payer": "P1"}})
    (row,) = exception_rows(run(world, settings=settings_))
    assert (row["category"], row["priority"]) == ("onramp_third_party_payer", "P1")


@pytest.mark.parametrize(
    ("priorities", "message"),
    [
        ({"onramp_third_party": "P1"}, "unknown category 'onramp_third_party'"),
        ({"onramp_third_party_payer": "P4"}, "expected P1, P2 or P3"),
        ("P1", "expected a table of category = priority"),
    ],
)
def test_a_bad_priority_is_a_config_error(priorities, message):
    with pytest.raises(ConfigError, match=message):
        ReconcileSettings.from_mapping({"priorities": priorities})


WIDTH = 11
documents = st.lists(st.sampled_from("0123456789*"), min_size=WIDTH, max_size=WIDTH).map("".join)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(pairs=st.lists(st.tuples(documents, st.one_of(documents, st.none())), min_size=1,
                      max_size=8))  # fmt: skip
def test_flagged_exactly_where_a_shown_digit_disagrees(tmp_path_factory, pairs):
    """Onramps paid by txid, each party's and payer's masked documents drawn at random: the
    flag is raised exactly where both show a digit at one position and the digits differ (a
    whole CPF on the statement shows only the digits the import keeps)."""
    from recon.config import DataDir

    world = World(DataDir(tmp_path_factory.mktemp("data")).ensure())
    world.snapshot(
        [intent(n + 1, amount=10_000 + n, doc=party) for n, (party, _) in enumerate(pairs)],
        AS_OF,
    )
    world.statement([
        line(n + 1, amount=10_000 + n, txid=uid(n + 1).replace("-", ""), doc=payer,
             name="JOAO CARLOS PEREIRA")
        for n, (_, payer) in enumerate(pairs)
    ])  # fmt: skip
    expected = {
        ("onramp_third_party_payer", uid(n + 1), e2e(n + 1))
        for n, (party, payer) in enumerate(pairs)
        if payer is not None
        # the import masks a whole CPF as BACEN does (recon.pii): only its shown digits count
        and any(
            a != b and "*" not in (a, b) for a, b in zip(party, mask_document(payer), strict=True)
        )
    }
    result = run(world)
    assert breaks(result) == expected
    assert {m[2] for m in matches(result)} == {"txid"} and len(matches(result)) == len(pairs)
