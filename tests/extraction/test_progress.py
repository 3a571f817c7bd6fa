"""`extract` reports its progress through `on_progress` (it draws nothing itself)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.extraction import extract
from recon.progress import Progress
from recon.testing.fake_api import FakeAsyncClient, FakeList


@settings(max_examples=25, deadline=None)
@given(
    intents=st.integers(0, 230),
    page_size=st.integers(1, 100),
    concurrency=st.integers(1, 4),
)
def test_one_event_per_page_in_order_ending_at_the_total(
    intents: int, page_size: int, concurrency: int
) -> None:
    events: list[Progress] = []
    with tempfile.TemporaryDirectory() as root:
        result = extract(
            DataDir(Path(root)),
            client=FakeAsyncClient(FakeList.of(intents)),
            page_size=page_size,
            concurrency=concurrency,
            on_progress=events.append,
        )
    assert len(events) == result.manifest["pages"]
    assert {(e.step, e.unit) for e in events} == {("extract", "intents")}
    done = [e.done for e in events]
    assert done == sorted(done)  # never goes back, whatever order the pages arrive in
    assert all(0 <= e.done <= e.total for e in events)
    assert (events[-1].done, events[-1].total) == (intents, intents)


def test_quiet_reports_nothing(data_dir: DataDir) -> None:
    events: list[Progress] = []
    result = extract(
        data_dir, client=FakeAsyncClient(FakeList.of(30)), quiet=True, on_progress=events.append
    )
    assert result.manifest["rows"] == 30
    assert events == []
