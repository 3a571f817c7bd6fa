"""`recon erase` and the erase world (tests/lake/erase_world.py): on a local data directory
here; the same world on object storage comes with the remote erase."""

from __future__ import annotations

from pathlib import Path

from recon import catalog, pii, testing
from recon.ops.erase import ERASED, erase_document
from tests.lake import erase_world as world
from tests.lake.erase_world import Finder


def test_the_local_erase_cleans_quarantine_and_escaped_names_and_keeps_the_services_key(
    tmp_path: Path,
) -> None:
    """What the remote erase shares with the local one, on a local data directory: the
    quarantined lines and `summary.json` (names written `Jos\\u00e9`) are cleaned, a
    statement file with no lines is read, and the service's own PIX key (pixInfo of an
    onramp the person paid) is not taken for theirs."""
    everyone = world.people(2)
    person = everyone[0]
    data = world.build(tmp_path / "data", everyone)
    world.side_files(data, everyone)
    testing.statement_lines(data, [], batch="empty-file", covers=None)
    service_key = pii.mask_key(str(testing.intent(1)["pix_key_value"]))
    report = data.reports / "2026-11-02" / "report.html"
    report.write_text(report.read_text() + f"<p>recebedor {service_key}</p>", encoding="utf-8")
    run = catalog.latest_run(data)
    assert run is not None and "Jos\\u00e9" in (run / "summary.json").read_text()
    result = erase_document(data, person.cpf)
    assert (result.intents, result.lines) == (4, 2)
    assert Finder([person]).in_folder(data.root) == {}
    assert service_key in report.read_text(encoding="utf-8")
    quarantined = catalog.sql("SELECT reason, raw FROM statement_quarantine", data)
    assert quarantined["reason"].str.contains(ERASED, regex=False).sum() == 1
    assert Finder(everyone[1:]).in_text(quarantined.to_string())
