"""Build CNAB 240 extrato records field by field (positions as FEBRABAN writes them)."""

from __future__ import annotations


def put(record: list[str], start: int, end: int, value: str | int, *, num: bool = False) -> None:
    """Write `value` at 1-based inclusive positions start..end (numbers zero-padded)."""
    width = end - start + 1
    text = str(value).rjust(width, "0") if num else str(value).ljust(width)
    assert len(text) == width, (start, end, value)
    record[start - 1 : end] = list(text)


def blank() -> list[str]:
    return [" "] * 240


def file_header(bank: str = "341", company: str = "RECON TESTE LTDA") -> str:
    r = blank()
    put(r, 1, 3, bank)
    put(r, 4, 7, 0, num=True)
    put(r, 8, 8, "0")
    put(r, 73, 102, company)
    put(r, 143, 143, "2")
    put(r, 144, 151, "03112026")
    return "".join(r)


def batch_header(opening: int, *, lot: int = 1, service: str = "04") -> str:
    r = blank()
    put(r, 1, 3, "341")
    put(r, 4, 7, lot, num=True)
    put(r, 8, 8, "1")
    put(r, 9, 9, "E")
    put(r, 10, 11, service)
    put(r, 12, 13, "40")
    put(r, 14, 16, "033")
    put(r, 53, 57, 1, num=True)
    put(r, 59, 70, 123456, num=True)
    put(r, 71, 71, "7")
    put(r, 143, 150, "01112026")
    put(r, 151, 168, abs(opening), num=True)
    put(r, 169, 169, "D" if opening < 0 else "C")
    put(r, 170, 170, "F")
    put(r, 171, 173, "BRL")
    return "".join(r)


def detail(
    seq: int,
    cents: int,
    day: str,
    history: str,
    document: str,
    *,
    category: str = "213",
    lot: int = 1,
) -> str:
    r = blank()
    put(r, 1, 3, "341")
    put(r, 4, 7, lot, num=True)
    put(r, 8, 8, "3")
    put(r, 9, 13, seq, num=True)
    put(r, 14, 14, "E")
    put(r, 109, 111, "DPV")
    put(r, 135, 142, day)
    put(r, 143, 150, day)
    put(r, 151, 168, abs(cents), num=True)
    put(r, 169, 169, "D" if cents < 0 else "C")
    put(r, 170, 172, category)
    put(r, 173, 176, "0001")
    put(r, 177, 201, history[:25])
    put(r, 202, 240, document[:39])
    return "".join(r)


def batch_trailer(closing: int, records: int, debits: int, credits: int, *, lot: int = 1) -> str:
    r = blank()
    put(r, 1, 3, "341")
    put(r, 4, 7, lot, num=True)
    put(r, 8, 8, "5")
    put(r, 143, 150, "03112026")
    put(r, 151, 168, abs(closing), num=True)
    put(r, 169, 169, "D" if closing < 0 else "C")
    put(r, 170, 170, "F")
    put(r, 171, 176, records, num=True)
    put(r, 177, 194, debits, num=True)
    put(r, 195, 212, credits, num=True)
    return "".join(r)


def file_trailer(batches: int, records: int) -> str:
    r = blank()
    put(r, 1, 3, "341")
    put(r, 4, 7, 9999, num=True)
    put(r, 8, 8, "9")
    put(r, 18, 23, batches, num=True)
    put(r, 24, 29, records, num=True)
    return "".join(r)


def extrato(opening: int, lines: list[tuple[int, str, str, str, str]]) -> str:
    """A whole, consistent file: lines are (cents, DDMMAAAA, history, document, category)."""
    details = [
        detail(i + 1, cents, day, hist, doc, category=cat)
        for i, (cents, day, hist, doc, cat) in enumerate(lines)
    ]
    debits = -sum(c for c, *_ in lines if c < 0)
    credits = sum(c for c, *_ in lines if c > 0)
    closing = opening + credits - debits
    records = [
        file_header(),
        batch_header(opening),
        *details,
        batch_trailer(closing, len(details) + 2, debits, credits),
    ]
    records.append(file_trailer(1, len(records) + 1))
    return "\r\n".join(records) + "\r\n"
