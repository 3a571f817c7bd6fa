"""Open Finance Brasil accounts API transaction pages (issue 14 item 5)."""

from __future__ import annotations

import copy
import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from recon.config import DataDir
from recon.errors import StatementError, StatementParseError
from recon.statements import import_statements
from recon.statements.formats.open_finance import parse_documents, parse_file
from recon.statements.lines import days_coverage
from recon.statements.sniff import sniff_format

from ..conftest import FIXTURES, by_e2e, view_rows

PAGE: dict[str, Any] = json.loads((FIXTURES / "open_finance_page.json").read_text())
E1 = "E18236120202611011000s0123456789"


def test_fixture() -> None:
    result = parse_file(FIXTURES / "open_finance_page.json")
    assert result.bad == []
    pix, fee = result.all_rows()
    assert pix[1:6] == ("2026-11-01T13:00:00.358Z", 11000, "credit", "pix_in", E1)
    assert pix[9] == "43908445778"
    assert pix[11] == "PIX RECEBIDO MARIA DA SILVA banco 260 ag 0001 conta 67890854360 dv 4"
    assert pix[12] is None  # the transactionId is the PIX id itself
    assert fee[2:5] == (-350, "debit", "fee") and fee[12] == "TRF20261101000002"
    assert any("LANCAMENTO_FUTURO 1" in c for c in result.checks)  # scheduled: no money
    assert any("= meta.totalRecords" in c for c in result.checks)
    assert result.coverage == [
        days_coverage(
            date(2026, 11, 1), date(2026, 11, 1), "open-finance fromBookingDate/toBookingDate"
        )
    ]


def test_sniffed_and_imported(data_dir: DataDir) -> None:
    assert sniff_format(FIXTURES / "open_finance_page.json") == "open-finance"
    report = import_statements([FIXTURES / "open_finance_page.json"], data_dir)
    assert (report.read, report.imported) == (2, 2)
    assert by_e2e(data_dir)[E1]["source_format"] == "open-finance"


def test_v1_number_amount_is_exact() -> None:
    item = {
        "transactionId": "X1",
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": "DEBITO",
        "transactionName": "TED ENVIADA",
        "type": "TED",
        "amount": json.loads("1000.04", parse_float=__import__("decimal").Decimal),
        "transactionCurrency": "BRL",
        "transactionDate": "2026-11-03",
    }
    (row,) = parse_documents([{"data": [item]}], "p.json").all_rows()
    assert row[1:5] == ("2026-11-03T00:00:00-03:00", -100004, "debit", "other")


def test_list_of_pages_and_fallback_coverage(tmp_path: Path) -> None:
    first = copy.deepcopy(PAGE)
    second = copy.deepcopy(PAGE)
    for page in (first, second):
        page["links"] = {}
        page.pop("meta")
    second["data"] = [
        {
            **second["data"][1],
            "transactionId": "TRF2",
            "transactionDateTime": "2026-11-04T15:00:00Z",
        }
    ]
    result = parse_documents([first, second], "pages.json")
    assert [r[0] for r in result.all_rows()] == [1, 2, 4]
    # no request named, no paging stated: the pages are taken as all there is, and cover
    # their lines' first to last day
    assert result.coverage == [
        days_coverage(date(2026, 11, 1), date(2026, 11, 4), "lines first/last day")
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"creditDebitType": None}, "creditDebitType"),
        ({"creditDebitType": "AMBOS"}, "creditDebitType"),
        ({"completedAuthorisedPaymentType": "TALVEZ"}, "completedAuthorisedPaymentType"),
        ({"transactionAmount": {"amount": "1.001", "currency": "BRL"}}, "transactionAmount.amount"),
        ({"transactionAmount": {"amount": "-1.00", "currency": "BRL"}}, "transactionAmount.amount"),
        (
            {"transactionAmount": {"amount": "1.00", "currency": "USD"}},
            "transactionAmount.currency",
        ),
        ({"transactionDateTime": "amanha"}, "transactionDateTime"),
    ],
)
def test_bad_items(tmp_path: Path, data_dir: DataDir, change: dict[str, Any], field: str) -> None:
    page = copy.deepcopy(PAGE)
    page["data"][1].update(change)
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.field, err.value.line) == (field, 2)


def test_missing_page_detected(tmp_path: Path, data_dir: DataDir) -> None:
    page = copy.deepcopy(PAGE)
    page["meta"]["totalRecords"] = 5
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(StatementError, match=r"meta.totalRecords says 5"):
        import_statements([path], data_dir)


def test_not_a_page(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"data": {"creditDebitType": "CREDITO"}}))
    with pytest.raises(StatementError, match="not an Open Finance"):
        import_statements([path], data_dir, format="open-finance")


# ---------------------------------------------------------------- what a request covers
# A covered period with no line in it means "nothing moved": a page covers only what its
# request (links.self) listed, and nothing when its lines contradict that request.

SELF = "https://api.banco.com.br/open-banking/accounts/v2/accounts/acc-1/transactions"


def _page(query: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {
        "data": list(items),
        "links": {"self": f"{SELF}?{query}"},
        "meta": {"totalRecords": len(items), "totalPages": 1},
    }


def _credit(**extra: Any) -> dict[str, Any]:
    return {**PAGE["data"][0], **extra}


def _debit(**extra: Any) -> dict[str, Any]:
    return {**PAGE["data"][1], **extra}


def test_credits_only_request_covers_the_credit_side(tmp_path: Path, data_dir: DataDir) -> None:
    page = _page(
        "fromBookingDate=2026-11-01&toBookingDate=2026-11-03&creditDebitIndicator=CREDITO",
        _credit(),
    )
    (period,) = parse_documents([page], "p.json").coverage
    assert period.scope == "received"  # the engine's scope that covers credits only
    assert period.basis.endswith("creditDebitIndicator=CREDITO")
    path = tmp_path / "credits.json"
    path.write_text(json.dumps(page))
    import_statements([path], data_dir)
    (row,) = view_rows(data_dir, "statement_coverage")
    assert row["scope"] == "received"


def test_credits_only_request_without_dates_covers_the_lines_days_for_credits(
    tmp_path: Path,
) -> None:
    from recon.statements.inspect import inspect_statements

    path = tmp_path / "credits.json"
    path.write_text(json.dumps(_page("creditDebitIndicator=CREDITO", _credit())))
    (report,), errors = inspect_statements([path], tmp_path / "data")
    assert errors == []
    assert [(p["first"], p["last"], p["scope"]) for p in report["periods"]] == [
        ("2026-11-01", "2026-11-01", "received")
    ]


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("creditDebitIndicator=DEBITO", "debits only"),
        ("creditDebitIndicator=AMBOS", "not CREDITO or DEBITO"),
        ("type=PIX", "query parameters recon does not know (type)"),
    ],
)
def test_a_request_that_narrows_the_listing_otherwise_covers_nothing(
    tmp_path: Path, data_dir: DataDir, query: str, why: str
) -> None:
    page = _page(f"fromBookingDate=2026-11-01&toBookingDate=2026-11-01&{query}", _debit())
    result = parse_documents([page], "p.json")
    assert result.coverage == []
    assert len(result.all_rows()) == 1  # its lines are read all the same
    assert any(why in w and "no statement period" in w for w in result.warnings)
    path = tmp_path / "debits.json"
    path.write_text(json.dumps(page))
    report = import_statements([path], data_dir)
    assert report.imported == 1 and view_rows(data_dir, "statement_coverage") == []


@pytest.mark.parametrize(
    "query",
    [
        "fromBookingDate=2025-11-01&toBookingDate=2025-11-03",  # the lines are a year later
        "toBookingDate=2025-11-03",
        "fromBookingDate=2026-11-02",
    ],
)
def test_lines_outside_the_requested_period_cover_nothing(query: str) -> None:
    result = parse_documents([_page(query, _credit(), _debit())], "p.json")
    assert result.coverage == []
    assert len(result.all_rows()) == 2
    (warning,) = result.warnings
    assert "lines booked 2026-11-01..2026-11-01 fall outside the requested" in warning


def test_a_debit_in_a_credits_only_page_covers_nothing() -> None:
    page = _page("creditDebitIndicator=CREDITO", _credit(), _debit())
    result = parse_documents([page], "p.json")
    assert result.coverage == [] and any("a debit line" in w for w in result.warnings)


def test_lines_inside_a_one_sided_request_keep_the_lines_days() -> None:
    result = parse_documents([_page("fromBookingDate=2026-10-01", _credit())], "p.json")
    assert result.coverage == [
        days_coverage(date(2026, 11, 1), date(2026, 11, 1), "lines first/last day")
    ]
    assert result.warnings == []


# ---------------------------------------------------------------- fractions of a cent
# The API allows 4 decimals and the official mock data fills them ('9848.2852'). Money moves
# in whole cents and recon never rounds: such an amount is refused, by name.


def test_an_amount_with_a_fraction_of_a_cent_is_refused_by_name(
    tmp_path: Path, data_dir: DataDir
) -> None:
    page = copy.deepcopy(PAGE)
    page["data"][1]["transactionAmount"]["amount"] = "9848.2852"
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.file, err.value.line, err.value.field) == (
        str(path),
        2,
        "transactionAmount.amount",
    )
    message = str(err.value)
    assert "item 2 (transactionId 'TRF20261101000002')" in message
    assert "'9848.2852' has a fraction of a cent" in message
    assert "never rounds" in message and "\n" not in message
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.imported, report.quarantined) == (1, 1)


@pytest.mark.parametrize("amount", ["10.0050", "10.001", "10.10000001"])
def test_every_fraction_of_a_cent_is_named_so(amount: str) -> None:
    page = copy.deepcopy(PAGE)
    page["data"][0]["transactionAmount"]["amount"] = amount
    (bad,) = parse_documents([page], "p.json").bad
    assert bad.field == "transactionAmount.amount" and "fraction of a cent" in bad.reason


def test_a_v1_number_with_a_fraction_of_a_cent_names_its_own_field() -> None:
    from decimal import Decimal

    item = {
        "transactionId": "X1",
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": "DEBITO",
        "type": "TED",
        "amount": Decimal("9848.2852"),
        "transactionCurrency": "BRL",
        "transactionDate": "2026-11-03",
    }
    (bad,) = parse_documents([{"data": [item]}], "p.json").bad
    assert bad.field == "amount" and "'9848.2852' has a fraction of a cent" in bad.reason
    (bad,) = parse_documents([{"data": [{**item, "transactionCurrency": "USD"}]}], "p").bad
    assert bad.field == "transactionCurrency"


def test_trailing_zeros_past_the_cents_are_read() -> None:
    page = copy.deepcopy(PAGE)
    page["data"][0]["transactionAmount"]["amount"] = "110.000000"
    assert parse_documents([page], "p.json").all_rows()[0][2] == 11000


# ---------------------------------------------------------------- every page of a request
# A request's period is covered only once every page of it (1..totalPages) has been read:
# page 1 of 6 lists only part of the period's movements, and a covered period with no line in
# it means "nothing moved" (false missing-payment breaks otherwise). Pages of one request
# complete each other across the files of an import, and across imports.

PERIOD = "fromBookingDate=2026-11-01&toBookingDate=2026-11-02"
COVERED = days_coverage(
    date(2026, 11, 1), date(2026, 11, 2), "open-finance fromBookingDate/toBookingDate"
)


def _numbered(
    number: int,
    pages: int,
    *items: dict[str, Any],
    records: int | None = None,
    query: str = PERIOD,
    v2: bool = False,
) -> dict[str, Any]:
    """Page `number` of `pages` of one request (page-size 1); v2 pages state no totals in
    meta, only links.next while a next page exists."""

    def link(n: int) -> str:
        return f"{SELF}?{query}&page={n}&page-size=1"

    links = {"self": link(number), "first": link(1)}
    if number < pages:
        links["next"] = link(number + 1)
    if number > 1:
        links["prev"] = link(number - 1)
    meta: dict[str, Any] = {"requestDateTime": "2026-11-03T09:00:00Z"}
    if not v2:
        meta |= {"totalRecords": pages if records is None else records, "totalPages": pages}
    return {"data": list(items), "links": links, "meta": meta}


def _first(**kw: Any) -> dict[str, Any]:
    return _numbered(1, 2, _credit(), **kw)


def _second(**kw: Any) -> dict[str, Any]:
    return _numbered(2, 2, _debit(), **kw)


def _save(folder: Path, name: str, *pages: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(pages[0] if len(pages) == 1 else list(pages)))
    return path


def _covered(data_dir: DataDir) -> list[tuple[Any, ...]]:
    return [
        (r["covered_from"], r["covered_to"], r["basis"], r["scope"])
        for r in view_rows(data_dir, "statement_coverage")
    ]


def _as_row(period: Any) -> tuple[Any, ...]:
    from recon.statements.lines import EPOCH

    return (
        EPOCH + timedelta(microseconds=period.start_us),
        EPOCH + timedelta(microseconds=period.end_us),
        period.basis,
        period.scope,
    )


def test_page_1_of_2_alone_covers_nothing(tmp_path: Path, data_dir: DataDir) -> None:
    result = parse_documents([_first()], "p1.json")
    assert result.coverage == []
    assert len(result.all_rows()) == 1
    report = import_statements([_save(tmp_path, "p1.json", _first())], data_dir)
    assert report.imported == 1  # lines never wait for coverage
    assert _covered(data_dir) == []
    (file,) = report.per_file
    assert file.coverage == ()
    (warning,) = file.warnings  # the request, its period, the pages seen and missing
    assert "accounts/acc-1/transactions 2026-11-01..2026-11-02" in warning
    assert "page 1 of 2 read, page 2 missing" in warning
    assert "no statement period recorded" in warning


def test_pages_1_and_2_in_two_files_of_one_import_cover_the_period(
    tmp_path: Path, data_dir: DataDir
) -> None:
    report = import_statements(
        [_save(tmp_path, "p1.json", _first()), _save(tmp_path, "p2.json", _second())], data_dir
    )
    assert report.imported == 2
    assert _covered(data_dir) == [_as_row(COVERED)]
    first, second = report.per_file
    assert first.coverage == () and second.coverage != ()  # reported once, where it completes
    assert any("2 pages, 2 transactions = meta.totalRecords" in c for c in second.checks)
    assert first.warnings == second.warnings == ()


def test_a_folder_with_every_page_covers_the_period(tmp_path: Path, data_dir: DataDir) -> None:
    folder = tmp_path / "pages"
    for number, item in enumerate([_credit(), _debit(), _debit(transactionId="TRF3")], start=1):
        _save(folder, f"page-{number}.json", _numbered(number, 3, item))
    report = import_statements([folder], data_dir)
    assert report.imported == 3
    assert _covered(data_dir) == [_as_row(COVERED)]
    assert any(
        "3 pages, 3 transactions = meta.totalRecords" in c for c in report.per_file[-1].checks
    )
    assert not any(f.warnings for f in report.per_file)


def test_a_damaged_page_is_an_error_over_the_files_of_an_import(
    tmp_path: Path, data_dir: DataDir
) -> None:
    paths = [
        _save(tmp_path, "p1.json", _first(records=3)),
        _save(tmp_path, "p2.json", _second(records=3)),
    ]
    with pytest.raises(
        StatementError, match=r"the pages hold 2 transactions, meta.totalRecords says 3"
    ):
        import_statements(paths, data_dir)
    assert view_rows(data_dir) == []  # nothing written


def test_missing_pages_imported_later_complete_the_request(
    tmp_path: Path, data_dir: DataDir
) -> None:
    import_statements([_save(tmp_path, "p1.json", _first())], data_dir)
    assert _covered(data_dir) == []
    later = import_statements([_save(tmp_path, "p2.json", _second())], data_dir)
    assert _covered(data_dir) == [_as_row(COVERED)]
    (file,) = later.per_file
    assert file.warnings == () and file.coverage != ()
    assert any("2 transactions = meta.totalRecords" in c for c in file.checks)
    again = import_statements([_save(tmp_path, "p1.json", _first())], data_dir)
    assert again.imported == 0 and len(_covered(data_dir)) == 1


def test_pages_of_an_earlier_import_that_disagree_record_no_period(
    tmp_path: Path, data_dir: DataDir
) -> None:
    """Completed with stored pages, a total that does not add up is a warning, not an error:
    a stored page cannot be taken back, so the request must be imported whole again."""
    import_statements([_save(tmp_path, "p1.json", _first(records=3))], data_dir)
    report = import_statements([_save(tmp_path, "p2.json", _second(records=3))], data_dir)
    assert _covered(data_dir) == []
    (warning,) = report.per_file[0].warnings
    assert "meta.totalRecords says 3" in warning and "no statement period recorded" in warning


def test_v2_pages_without_totals_are_whole_once_a_page_links_no_next(
    tmp_path: Path, data_dir: DataDir
) -> None:
    """Accounts API v2 states no totalPages (meta has only requestDateTime): `links.next` is
    there on every page but the last."""
    assert parse_documents([_first(v2=True)], "p1.json").coverage == []
    (warning,) = parse_documents([_first(v2=True)], "p1.json").warnings
    assert "the last page not read yet" in warning
    assert parse_documents([_first(v2=True), _second(v2=True)], "p.json").coverage == [COVERED]
    import_statements([_save(tmp_path, "p1.json", _first(v2=True))], data_dir)
    assert _covered(data_dir) == []
    import_statements([_save(tmp_path, "p2.json", _second(v2=True))], data_dir)
    assert _covered(data_dir) == [_as_row(COVERED)]


def test_pages_that_disagree_on_the_totals_cover_nothing() -> None:
    """Pages fetched while the listing changed (meta.totalRecords 2, then 3): one movement may
    have moved between pages unseen, so the whole set covers nothing."""
    result = parse_documents([_first(records=2), _second(records=3)], "p.json")
    assert result.coverage == []
    assert any("disagree" in w and "no statement period" in w for w in result.warnings)


def test_each_request_in_a_file_covers_its_own_period() -> None:
    """Two requests' pages in one file cover their two periods, not the days between them."""
    other = "fromBookingDate=2026-11-10&toBookingDate=2026-11-10"
    late = _numbered(1, 1, _debit(transactionDateTime="2026-11-10T15:00:00Z"), query=other)
    result = parse_documents([_first(), _second(), late], "p.json")
    assert sorted(result.coverage) == sorted(
        [COVERED, days_coverage(date(2026, 11, 10), date(2026, 11, 10), COVERED.basis)]
    )


@pytest.mark.parametrize(
    "query",
    [
        "fromBookingDate=2026-02-30&toBookingDate=2026-03-02",
        "fromBookingDate=2026-11-02&toBookingDate=2026-11-01",
    ],
)
def test_dates_that_are_no_period_cover_nothing(query: str) -> None:
    """The warning says no period, and none is recorded (not the lines' days instead)."""
    result = parse_documents([_page(query)], "p.json")
    assert result.coverage == []
    assert any("no statement period" in w for w in result.warnings)


def test_inspect_shows_a_lone_page_covering_nothing(tmp_path: Path) -> None:
    from recon.statements.inspect import inspect_statements, render_text

    (report,), errors = inspect_statements([_save(tmp_path, "p1.json", _first())], tmp_path / "d")
    assert errors == [] and report["periods"] == []
    assert any("page 1 of 2 read, page 2 missing" in w for w in report["warnings"])
    assert "covers: none (the warnings say why)" in render_text([report])


@pytest.mark.parametrize(
    ("type_", "way", "kind"),
    [
        ("ENCARGOS_JUROS_CHEQUE_ESPECIAL", "DEBITO", "interest"),
        ("RENDIMENTO_APLIC_FINANCEIRA", "CREDITO", "yield"),
        ("PACOTE_TARIFA_SERVICOS", "DEBITO", "fee"),
    ],
)
def test_types_say_the_banks_own_lines(type_: str, way: str, kind: str) -> None:
    item = {
        "transactionId": "X1",
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": way,
        "transactionName": "LANCAMENTO",
        "type": type_,
        "transactionAmount": {"amount": "1.2300", "currency": "BRL"},
        "transactionDate": "2026-11-03",
    }
    (row,) = parse_documents([{"data": [item]}], "p.json").all_rows()
    assert row[4] == kind
