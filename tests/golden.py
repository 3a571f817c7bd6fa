"""Golden files: a test's output compared with a file kept in git, regenerated on purpose.

    RECON_UPDATE_GOLDEN=1 pytest tests/...     rewrites every golden file a test compares

Review the diff of the golden files like code: it is the change users see.
"""

from __future__ import annotations

import os
from pathlib import Path

UPDATE = "RECON_UPDATE_GOLDEN"


def assert_golden(path: Path, text: str) -> None:
    """`text` must equal the golden file at `path` (written instead when RECON_UPDATE_GOLDEN=1)."""
    if os.environ.get(UPDATE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    assert path.is_file(), f"golden file {path.name} missing: run with {UPDATE}=1"
    # newline="": compare the bytes a spreadsheet reads (CRLF stays CRLF)
    with path.open(encoding="utf-8", newline="") as fh:
        expected = fh.read()
    assert text == expected, f"{path.name} differs from the golden file ({UPDATE}=1 rewrites it)"
