"""Bounds against a hostile list server: every mode ends in one line, exit 3, nothing published.

The server (tests/extraction/hostile.py) runs on loopback with bounded loops. Bounds that would
take minutes at their defaults (deadlines, retries) are set low in the data dir's recon.toml,
which is also how a user configures them; the size bounds are tested at their defaults.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from recon import catalog
from recon.cli import main
from recon.config import DataDir
from tests.extraction.hostile import HostileServer, gzip_bomb

FAST = {"retry_attempts": "2", "retry_budget": "5"}

CASES = [
    # mode, extra recon.toml lines, a fragment of the one error line
    ("huge_total", "", "max_total"),
    ("huge_body", "", "declares 2,147,483,648 bytes"),
    ("endless_body", "", "max_body_bytes"),
    ("gzip_bomb", "", "max_decoded_bytes"),
    ("trickle", "deadline = 3", "did not finish within 3s (deadline)"),
    ("trickle", "response_deadline = 1, retry_attempts = 1", "response_deadline"),
    ("deep_json", "", "the JSON body is nested too deeply"),
    ("too_many_items", "", "105 intents for an echoed limit of 100"),
    ("wrong_content_type", "", "Content-Type 'text/html', not JSON"),
    ("truncated", "", "peer closed connection"),
    ("id_twice", "", "field 'id': named twice"),
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RECON_API_KEY", "hostile-test-key")
    monkeypatch.delenv("RECON_CONFIG", raising=False)
    monkeypatch.delenv("RECON_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./recon.toml but the data dir's


def assert_nothing_published(data: DataDir) -> None:
    assert catalog.list_snapshots(data) == []
    left = sorted(p.name for p in data.snapshots.iterdir())
    assert [name for name in left if not name.startswith(".recon.lock")] == []


@pytest.mark.parametrize(
    ("mode", "toml", "fragment"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_hostile_mode_is_one_line_exit_3_and_nothing_published(
    mode: str, toml: str, fragment: str, data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = dict(FAST)
    for pair in filter(None, toml.split(", ")):
        key, _, value = pair.partition(" = ")
        settings[key] = value
    lines = [f"{key} = {value}" for key, value in settings.items()]
    (data_dir.root / "recon.toml").write_text("[extract]\n" + "\n".join(lines) + "\n")
    with HostileServer(mode) as server:
        started = time.monotonic()
        code = main(["extract", "--data", str(data_dir.root), "--base-url", server.url, "--quiet"])
        elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 3, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("recon: error: "), err
    assert fragment in lines[0]
    assert "hostile-test-key" not in err
    assert elapsed < 30
    assert_nothing_published(data_dir)


def test_the_gzip_bomb_is_a_real_one() -> None:
    import zlib

    bomb = gzip_bomb(64 << 20)
    assert len(bomb) < 100_000
    d = zlib.decompressobj(31)
    assert len(d.decompress(bomb)) == 64 << 20 and d.eof and not d.unused_data
    assert len(gzip_bomb()) < 3_000_000  # the 2 GiB one the server sends
