"""Tell a statement file's format from its content (the extension is only a hint)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from recon.errors import StatementError
from recon.statements.lines import json_shape
from recon.workbook import OLE2, ZIP

_HEAD = 1 << 16

# The JSON formats recon reads, as the error for other JSON lists them.
JSON_FORMATS = (
    "API Pix JSON (a 'pix' list: GET /pix pages, webhook bodies; or items with 'endToEndId')",
    "Open Finance Brasil transaction pages (a 'data' list, 'links' and 'meta')",
    "Asaas payments (GET /v3/payments pages: 'object': 'list', 'data', 'hasMore'; payments)",
)
_KEY = re.compile(rb'"([^"\\\r\n]{1,40})"\s*:')


def _first_document(text: bytes) -> tuple[bool, Any]:
    """(True, the first JSON document) when the head holds it whole (one document, or the
    first line of one per line); (False, None) when the head ends inside it."""
    try:
        doc, _ = json.JSONDecoder().raw_decode(text.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):  # cut short, damaged, or a 4,300-digit number
        return False, None
    return True, doc


def _json_format(doc: Any) -> str | None:
    """open-finance | pix-json | asaas | None for a decoded document, by its shape."""
    from recon.statements.formats.asaas import is_asaas

    if isinstance(doc, list):
        if not doc:
            return "pix-json"  # an empty list of saved bodies: nothing to read, as before
        doc = doc[0]
    if not isinstance(doc, dict):
        return None
    if "pix" in doc or "endToEndId" in doc:
        return "pix-json"
    if is_asaas(doc):
        return "asaas"
    if all(isinstance(doc.get(k), t) for k, t in (("data", list), ("links", dict), ("meta", dict))):
        return "open-finance"  # the page envelope, even with no item (an empty page)
    return None


def _sniff_json(text: bytes) -> tuple[str | None, str]:
    """(format or None, what was seen) for content that starts like JSON."""
    if b'"creditDebitType"' in text or b'"completedAuthorisedPaymentType"' in text:
        return "open-finance", ""
    whole, doc = _first_document(text)
    if whole:
        return _json_format(doc), json_shape(doc)
    # The head ends inside the document (a file over 64 KiB): by the keys it names.
    if all(k in text for k in (b'"data"', b'"links"', b'"meta"')):
        return "open-finance", ""
    if b'"pix"' in text or b'"endToEndId"' in text:
        return "pix-json", ""
    if b'"netValue"' in text and b'"object"' in text:
        return "asaas", ""
    keys = list(dict.fromkeys(m.group(1).decode("utf-8", "replace") for m in _KEY.finditer(text)))
    named = ", ".join(repr(k) for k in keys[:8]) or "no keys"
    return None, f"a document whose first 64 KiB name {named}"


def sniff_bytes(head: bytes, name: str = "", path: Path | None = None) -> str | None:
    """The format of a file starting with `head`: pix-json | camt | open-finance | ofx |
    cnab240 | csv | spreadsheet, or None (`path`, when given, lets a zip's directory be read).

    A spreadsheet by its magic bytes (a zip of OOXML or OpenDocument members, an OLE2 file
    holding a workbook), or HTML holding a table (an ".xls" that is a web page); an ".xls"
    that is text is a CSV like any other. Never by the file's name."""
    from recon.statements.formats.spreadsheet import is_spreadsheet

    if head.startswith((OLE2, ZIP)):
        return "spreadsheet" if is_spreadsheet(head, path) else None
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if not text:
        return None
    upper = text[:2048].upper()
    if b"OFXHEADER" in upper or b"<OFX>" in upper or b"<?OFX" in upper:
        return "ofx"
    if text[:1] == b"<" and b"urn:iso:std:iso:20022:tech:xsd:camt.05" in text:
        return "camt"
    if is_spreadsheet(head):
        return "spreadsheet"
    if text[:1] in (b"{", b"["):
        return _sniff_json(text)[0]
    from recon.statements.formats import cnab240

    if cnab240.sniff(head):  # decoded and padded back as its reader does
        return "cnab240"
    from recon.statements.formats.csv import sniff_head
    from recon.statements.formats.csv_sniff import decode_csv

    cut = head.rfind(b"\n")
    sample = decode_csv(head[: cut + 1] if cut > 0 else head)[0]
    if sniff_head(sample) is not None:
        return "csv"
    if name.lower().endswith((".csv", ".txt")) and ("," in sample or ";" in sample):
        return "csv"
    return None


def sniff_format(path: Path, *, csv_profile: Any = None) -> str:
    """The format of the file at `path`; a clear StatementError when it cannot be told."""
    with path.open("rb") as fh:
        head = fh.read(_HEAD)
    found = sniff_bytes(head, path.name, path)
    if found is None and csv_profile is not None:
        return "csv"
    if found is None:
        text = head.lstrip(b"\xef\xbb\xbf").lstrip()
        if text[:1] in (b"{", b"["):
            seen = _sniff_json(text)[1]
            raise StatementError(
                f"{path}: JSON that is none of the formats recon reads (seen: {seen}); recon "
                f"reads {'; '.join(JSON_FORMATS)}; --format pix-json, open-finance or asaas "
                "reads it as one of them and names what is missing"
            )
        raise StatementError(
            f"{path}: unknown statement format (not API Pix JSON, camt, Open Finance, OFX, CNAB 240, a known "
            "CSV or a spreadsheet); pass --format, or --csv-profile for another CSV shape"
        )
    return found
