"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.config import DataDir

os.environ.setdefault("MPLBACKEND", "Agg")
# a fixed personal-data key (recon.pii): tests never create one in the real home folder
os.environ.setdefault("RECON_PII_KEY", "recon-tests-pii-key")


@pytest.fixture
def data_dir(tmp_path: Path) -> DataDir:
    """A fresh, empty data directory with its sub-folders."""
    return DataDir(tmp_path / "data").ensure()
