"""`import recon` and `import recon.config` stay cheap: a notebook, a cron job or `recon
--help` must not pay for pandas, pyarrow's datasets, DuckDB, deltalake or matplotlib (each
costs from a tenth of a second to a second) before it asks for a table.

Checked in a fresh interpreter, since this test session has long imported all of them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# the packages a module imported at start-up must not load; pyarrow too for recon.config,
# which only resolves paths and URIs
HEAVY = ("pandas", "pyarrow", "duckdb", "deltalake", "matplotlib", "numpy", "pyspark")


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys\n{statement}\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return list(json.loads(done.stdout))


@pytest.mark.parametrize(
    "statement",
    ["import recon", "import recon.config", "import recon.errors", "import recon.lake"],
)
def test_importing_loads_no_heavy_package(statement: str) -> None:
    assert loaded_after(statement) == []


def test_the_check_sees_a_heavy_import() -> None:
    assert {"duckdb", "pyarrow"} <= set(loaded_after("import recon.catalog"))
