"""The table of bank layouts (recon.statements.banks) is consistent with how sniffing reads it:
the first layout whose signature a header has wins, so an earlier layout never hides a
later one, and a layout told apart by its header as written names the cells it signs."""

from __future__ import annotations

from recon.statements.banks import GENERIC, HEADERLESS, LAYOUTS, VOCABULARY, normalize


def test_layout_names_are_unique_and_none_is_a_reserved_name() -> None:
    names = [layout.name for layout in LAYOUTS]
    assert len(names) == len(set(names))
    assert not {GENERIC.name, HEADERLESS.name} & set(names)


def test_no_layout_hides_a_later_one() -> None:
    for i, first in enumerate(LAYOUTS):
        constrained = bool(first.written or first.delimiter or first.date_format)
        for later in LAYOUTS[i + 1 :]:
            assert constrained or not first.signature <= later.signature, (first, later)


def test_a_header_as_written_holds_the_signature() -> None:
    for layout in LAYOUTS:
        if layout.written:
            assert {normalize(c) for c in layout.written} >= layout.signature, layout.name


def test_every_layout_names_a_date_and_money_column() -> None:
    money = VOCABULARY["amount"] | VOCABULARY["credit"] | VOCABULARY["debit"]
    for layout in LAYOUTS:
        assert layout.signature & VOCABULARY["booked_at"], layout.name
        assert layout.signature & money, layout.name
