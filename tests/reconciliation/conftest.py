from __future__ import annotations

import pytest

from recon.config import DataDir
from recon.testing.handbuilt import World


@pytest.fixture
def world(data_dir: DataDir) -> World:
    """An empty hand-built world in a fresh data dir."""
    return World(data_dir)
