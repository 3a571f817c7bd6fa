"""Bank and PSP statements into one `statement_lines` table: API Pix JSON, OFX, CNAB 240, CSV.

import_statements(paths, data=None, *, format="auto", quarantine=False, account=None,
                  csv_profile=None) -> ImportReport
pull_pix(base_url, client_id, client_secret, inicio, fim, data=None, ...) -> ImportReport
"""

from __future__ import annotations

from recon.statements.importer import FileReport, ImportReport, import_statements
from recon.statements.lines import FORMATS, KINDS

__all__ = ["FORMATS", "KINDS", "FileReport", "ImportReport", "import_statements", "pull_pix"]


def __getattr__(name: str) -> object:
    # `pull_pix` needs httpx; import it only when asked for.
    if name == "pull_pix":
        from recon.statements.pull import pull_pix

        return pull_pix
    raise AttributeError(name)
