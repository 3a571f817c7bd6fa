"""The bank's own lines (fees, interest, yields): no break names them, no pass pairs them,
and the control totals count each kind apart."""

from __future__ import annotations

from datetime import timedelta

from recon.reconciliation import ReconcileSettings
from recon.testing.handbuilt import T0, World, intent, line

from .helpers import breaks, matches, run

AS_OF = T0 + timedelta(hours=48)


def build(world: World) -> None:
    """An onramp paid by one credit, and the bank's own lines of the same day: interest and
    yields (one of each the onramp's amount), a fee."""
    world.snapshot([intent(1, amount=10_000)], at=AS_OF)
    own = {"name": None, "doc": None}
    world.statement(
        [
            line(1, amount=10_000),  # the onramp's credit, by attributes
            line(2, kind="interest", amount=184, description="JUROS SALDO DEVEDOR", **own),
            line(3, kind="interest", amount=10_000, description="ENCARGOS LIMITE", **own),
            line(4, kind="yield", amount=12, description="REND PAGO APLIC AUT MAIS", **own),
            line(5, kind="yield", amount=10_000, description="RENDIMENTO POUPANCA", **own),
            line(6, kind="fee", amount=79, description="IOF S/ SALDO DEVEDOR", **own),
        ]
    )


def test_interest_and_yield_are_no_breaks_and_are_totalled_apart(world: World) -> None:
    build(world)
    result = run(world, settings=ReconcileSettings())
    # not unmatched_debit / unmatched_credit, and a yield of the onramp's amount is no payment
    assert breaks(result) == set()
    assert {i for i, _, _ in matches(result)} == {intent(1)["id"]}
    s = result.summary
    assert s.checks_passed, s.check_samples
    assert (s.totals["interest_cents"], s.totals["yield_cents"]) == (10_184, 10_012)
    assert s.totals["fees_cents"] == 79
    assert s.totals["statement_credit_cents"] == 10_000  # the bank's own lines apart
    assert s.totals["statement_debit_cents"] == 0
    (credit,) = [r for r in s.control_totals if r["direction"] == "credit"]
    (debit,) = [r for r in s.control_totals if r["direction"] == "debit"]
    assert (credit["yield_cents"], credit["interest_cents"]) == (10_012, 0)
    assert (debit["interest_cents"], debit["fees_cents"]) == (10_184, 79)
    assert credit["statement_cents"] == 10_000 and credit["unexplained_cents"] == 0
    assert debit["statement_cents"] == 0 and debit["unexplained_cents"] == 0
