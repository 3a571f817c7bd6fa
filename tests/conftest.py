"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from recon.config import DataDir

os.environ.setdefault("MPLBACKEND", "Agg")
# a fixed personal-data key (recon.pii): tests never create one in the real home folder
os.environ.setdefault("RECON_PII_KEY", "recon-tests-pii-key")
# and a fixed audit key (recon.reconciliation.audit), for the same reason
os.environ.setdefault("RECON_AUDIT_KEY", "recon-tests-audit-key")
# tests run at the product's defaults, whatever the shell that started them chose: the
# language (pt-BR unless a test picks one) and no data directory
for _name in ("RECON_LANG", "RECON_DATA"):
    os.environ.pop(_name, None)

# property tests judge what an example gives, not how fast: on a 2-core machine running two
# workers (and Spark beside them) a 200 ms deadline fails examples that are only waiting
settings.register_profile("recon", deadline=None)
settings.load_profile("recon")


@pytest.fixture
def data_dir(tmp_path: Path) -> DataDir:
    """A fresh, empty data directory with its sub-folders."""
    return DataDir(tmp_path / "data").ensure()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `slow` tests first (Spark runs of a minute or more, the S3 jobs, the notebooks):
    with `-n 2`, short tests then fill the other worker's time around them, instead of one
    worker running the last long test alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
