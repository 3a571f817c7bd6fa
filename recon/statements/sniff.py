"""Tell a statement file's format from its content (the extension is only a hint)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.errors import StatementError

_HEAD = 1 << 16


def sniff_bytes(head: bytes, name: str = "") -> str | None:
    """The format of a file starting with `head`: pix-json | camt | open-finance | ofx |
    cnab240 | csv, or None."""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if not text:
        return None
    upper = text[:2048].upper()
    if b"OFXHEADER" in upper or b"<OFX>" in upper or b"<?OFX" in upper:
        return "ofx"
    if text[:1] == b"<" and b"urn:iso:std:iso:20022:tech:xsd:camt.05" in text:
        return "camt"
    if text[:1] in (b"{", b"["):
        if b'"creditDebitType"' in text or b'"completedAuthorisedPaymentType"' in text:
            return "open-finance"
        return "pix-json"
    from recon.statements import cnab240

    if cnab240.sniff(head):  # decoded and padded back as its reader does
        return "cnab240"
    from recon.statements.csvfile import sniff_head
    from recon.statements.csvsniff import decode_auto

    cut = head.rfind(b"\n")
    sample = decode_auto(head[: cut + 1] if cut > 0 else head)[0]
    if sniff_head(sample) is not None:
        return "csv"
    if name.lower().endswith((".csv", ".txt")) and ("," in sample or ";" in sample):
        return "csv"
    return None


def sniff_format(path: Path, *, csv_profile: Any = None) -> str:
    """The format of the file at `path`; a clear StatementError when it cannot be told."""
    with path.open("rb") as fh:
        head = fh.read(_HEAD)
    found = sniff_bytes(head, path.name)
    if found is None and csv_profile is not None:
        return "csv"
    if found is None:
        raise StatementError(
            f"{path}: unknown statement format (not API Pix JSON, camt, Open Finance, OFX, CNAB 240 or a known "
            "CSV); pass --format, or --csv-profile for another CSV shape"
        )
    return found
