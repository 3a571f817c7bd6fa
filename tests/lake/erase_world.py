"""A small world of named people for the erase tests, and the search for one of them.

`build` writes, on a local data directory, every place recon keeps a person: intents of two
snapshots (payee key, names, masked document, `metadata` and `raw`), statement lines in two
import batches (name, document, key, description), a quarantined line, a run whose breaks,
summary and flows name them, a report and a kept inbox file. `recon migrate` then makes the
same world on object storage, so a local and a remote erase can be compared row for row.

`Finder` holds every way the person is written (names, masked documents and keys, the keyed
hash, and their JSON- and HTML-escaped spellings) and searches Arrow tables, files, and every
object of a bucket for them.
"""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from recon import pii, testing
from recon.config import DataDir, new_run_id
from recon.schemas import EXCEPTIONS_SCHEMA
from recon.statements import stored

# names a person can have: accents, an apostrophe (HTML and JSON escape them)
NAMES = (
    "José D'Ávila Araújo",
    "Maria Luíza Conceição",
    "Ana Beatriz Souza",
    "João Pedro Gonçalves",
    "Fernanda Lima Tavares",
    "Raimundo Nonato Brandão",
    "Luciana O'Neill Peixoto",
    "Thiago Henrique Ramos",
)


def cpf(base: int) -> str:
    """A valid CPF (11 digits) from 9 base digits."""
    d = [int(c) for c in f"{base:09d}"]
    for n in (9, 10):
        d.append(sum(v * (n + 1 - i) for i, v in enumerate(d[:n])) * 10 % 11 % 10)
    return "".join(map(str, d))


def formatted(digits: str) -> str:
    return f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"


@dataclass(frozen=True)
class Person:
    n: int  # their place in the world: intent and line numbers derive from it
    name: str
    cpf: str  # 11 digits

    @property
    def masked(self) -> str:
        return pii.mask_document(formatted(self.cpf))

    def documents(self) -> set[str]:
        """Their document as stored: its keyed hash and BACEN's masks (what erase finds)."""
        return {
            self.masked,
            pii.mask_document(self.cpf),
            pii.mask_key(self.cpf),
            pii.digest(self.cpf),
        }

    def names(self) -> set[str]:
        return {self.name, self.name.upper()}

    def tokens(self) -> set[str]:
        """Every stored form of the person: what must be gone after an erase."""
        return self.documents() | self.names()


def people(count: int, seed: int = 0) -> list[Person]:
    """`count` people with distinct names and distinct masked documents (digits 4-9)."""
    assert count <= len(NAMES)
    out = []
    for i in range(count):
        middle = (seed * 7_919 + (i + 1) * 104_729) % 1_000_000  # digits 4-9: what masks show
        base = int(f"{100 + i}{middle:06d}")
        out.append(Person(i + 1, NAMES[(i + seed) % len(NAMES)], cpf(base)))
    assert len({p.masked for p in out}) == count and len({p.name for p in out}) == count
    return out


def intents_of(person: Person) -> list[dict[str, Any]]:
    """A payout to the person's CPF key, and an onramp they paid (masked payer document)."""
    n = person.n
    meta = json.dumps({"beneficiary": person.name, "note": f"payout {n}"}, ensure_ascii=False)
    raw = json.dumps(
        {"id": testing.uid(1000 + n), "pixInfo": {"recipientName": person.name}},
        ensure_ascii=False,
    )
    return [
        testing.intent(
            1000 + n,
            intent_type="offramp",
            amount_cents=10_000 + n,
            destination_address=formatted(person.cpf),
            pix_key_type="cpf",
            pix_key_value=person.cpf,
            pix_recipient_name=person.name,
            party_display_name=person.name,
            party_document_masked=person.masked,
            metadata=meta,
            raw=raw,
        ),
        testing.intent(
            2000 + n,
            amount_cents=20_000 + n,
            party_display_name=person.name,
            party_document_masked=person.masked,
        ),
    ]


def lines_of(person: Person) -> list[dict[str, Any]]:
    n = person.n
    return [
        testing.statement_line(
            1000 + n,
            kind="pix_out",
            amount_cents=-(10_000 + n),
            counterparty_name=person.name.upper(),
            counterparty_document=formatted(person.cpf),
            counterparty_key=person.cpf,
            description=f"PIX ENVIADO {person.name.upper()}",
        ),
        testing.statement_line(
            2000 + n,
            amount_cents=20_000 + n,
            counterparty_name=person.name.upper(),
            counterparty_document=person.masked,
            description="PIX RECEBIDO",
        ),
    ]


def build(root: Path, everyone: Sequence[Person], *, snapshots: int = 2) -> DataDir:
    """The world as a local data directory at `root` (see the module doc)."""
    data = DataDir(root).ensure()
    rows = [row for p in everyone for row in intents_of(p)]
    others = [testing.intent(9000 + i) for i in range(3)]  # nobody's: no document at all
    for day in range(snapshots):
        testing.snapshot(data, [*rows, *others], at=testing.T0 + timedelta(days=day, hours=2))
    testing.statement_lines(data, [line for p in everyone for line in lines_of(p)])
    fees = [testing.statement_line(9000 + i, kind="fee", amount_cents=-350) for i in range(2)]
    for fee in fees:
        fee.update(counterparty_name=None, counterparty_document=None, description="TARIFA")
    testing.statement_lines(data, fees)
    quarantine = pa.Table.from_pylist(
        [
            {
                "source_format": "csv",
                "source_file": "extrato.csv",
                "source_line": 90 + p.n,
                "field": "amount_cents",
                "reason": f"not an amount: {p.name.upper()}",
                "raw": f"02/11/2026;PIX {p.name.upper()} {p.masked};R$ x,yz",
                "imported_at": testing.T0,
                "row_key": f"q{p.n:04d}",
            }
            for p in everyone
        ],
        schema=stored.QUARANTINE_STORED_SCHEMA,
    )
    stored.write_parquet_atomic(quarantine, stored.quarantine_path(data, "testing-quarantine"))
    breaks = [
        testing.break_row(
            "offramp_missing_payout",
            p.n,
            intent_id=testing.uid(1000 + p.n),
            reason=f"payout to {p.name} ({p.masked}) not found in any statement",
        )
        for p in everyone
    ]
    samples = {"payee_named": [{"name": p.name, "document": p.masked} for p in everyone]}
    testing.run(data, breaks, summary={"check_samples": samples}, run_id=new_run_id())
    return data


def side_files(data: DataDir, everyone: Sequence[Person]) -> None:
    """What only the machine that ran recon keeps: a report and a kept bank file."""
    report = data.reports / "2026-11-02"
    report.mkdir(parents=True, exist_ok=True)
    cells = "".join(f"<td>{html.escape(p.name)}</td><td>{p.masked}</td>" for p in everyone)
    (report / "report.html").write_text(f"<table><tr>{cells}</tr></table>", encoding="utf-8")
    kept = data.inbox / "processed" / "2026-11-02"
    kept.mkdir(parents=True, exist_ok=True)
    for p in everyone:
        (kept / f"extrato-{p.n}.csv").write_text(
            f"data;descricao;valor\n02/11/2026;PIX {p.name.upper()} {p.masked};-100,{p.n:02d}\n",
            encoding="utf-8",
        )
    (kept / "tarifas.csv").write_text("data;descricao;valor\n02/11/2026;TARIFA;-3,50\n")


def spellings(token: str) -> set[str]:
    """A text as files hold it: as is, JSON-escaped (once or twice: a stats string inside a
    log line) and HTML-escaped."""
    once = json.dumps(token)[1:-1]
    return {token, once, json.dumps(once)[1:-1], html.escape(token)}


class Finder:
    """Searches for the forms of some people (see the module doc)."""

    def __init__(self, everyone: Iterable[Person], tokens: Iterable[str] = ()):
        """Every form of `everyone`, and `tokens` (some forms of someone only)."""
        wanted = {t for p in everyone for t in p.tokens()} | set(tokens)
        forms = {s for t in wanted for s in spellings(t)}
        self.forms = sorted(forms, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(f) for f in self.forms))

    def in_text(self, text: str) -> list[str]:
        return sorted(set(self.pattern.findall(text)))

    def in_table(self, table: pa.Table) -> list[str]:
        found: set[str] = set()
        for column in table.columns:
            for value in column.to_pylist():
                found.update(self.in_value(value))
        return sorted(found)

    def in_value(self, value: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, bytes):
            if value[:4] == b"PAR1":
                return self.in_table(pq.read_table(io.BytesIO(value)))
            return self.in_text(value.decode("utf-8", "replace"))
        return self.in_text(value if isinstance(value, str) else str(value))

    def in_bytes(self, name: str, body: bytes) -> list[str]:
        if name.endswith(".parquet") and body[:4] == b"PAR1":
            return self.in_table(pq.read_table(io.BytesIO(body)))
        if name.endswith(".xlsx"):
            import zipfile

            with zipfile.ZipFile(io.BytesIO(body)) as z:
                return sorted({f for n in z.namelist() for f in self.in_text(z.read(n).decode())})
        return self.in_text(body.decode("utf-8", "replace"))

    def in_folder(self, root: Path) -> dict[str, list[str]]:
        """Relative path -> forms found, for every file under `root` that holds one."""
        found = {}
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            hits = self.in_bytes(path.name, path.read_bytes())
            if hits:
                found[str(path.relative_to(root))] = hits
        return found

    def in_bucket(self, client: Any, bucket: str, prefix: str = "") -> dict[str, list[str]]:
        """Object key -> forms found, for every object of the bucket that holds one."""
        found = {}
        for key in keys(client, bucket, prefix):
            body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
            hits = self.in_bytes(key, body)
            if hits:
                found[key] = hits
        return found


def keys(client: Any, bucket: str, prefix: str = "") -> Iterator[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        for item in page.get("Contents", []):
            yield item["Key"]


def etags(client: Any, bucket: str, prefix: str = "") -> dict[str, str]:
    """Object key -> ETag: what changed in a bucket, byte for byte."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return {o["Key"]: o["ETag"] for page in pages for o in page.get("Contents", [])}


def break_rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.select(EXCEPTIONS_SCHEMA.names).to_pylist(), key=lambda r: r["break_id"])
