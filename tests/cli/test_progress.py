"""Progress on long steps: a spinner on stderr when it is a terminal (with counts when the
step reports them), nothing otherwise."""

from __future__ import annotations

import io
import sys
import time

import pytest

from recon.cli.console import progress, with_progress
from recon.progress import OnProgress, Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_progress_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("reconciling"):
        time.sleep(0.05)
    assert with_progress("rendering", lambda x: x * 2)(21) == 42
    assert capsys.readouterr().err == ""


def test_progress_names_the_step_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with progress("rendering the report"):
        time.sleep(0.3)
    assert "rendering the report" in term.getvalue()


def test_a_failing_step_still_raises_through_the_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", _Terminal())

    def boom() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        with_progress("reconciling", boom)()


def test_nothing_to_report_to_off_a_terminal() -> None:
    with progress("extract") as on_progress:
        assert on_progress is None


def test_a_step_that_reports_shows_its_counts_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with progress("extract") as on_progress:
        assert on_progress is not None
        on_progress(Progress("extract", 1200, 5000, "intents"))
        time.sleep(0.3)
    assert "1,200/5,000 intents" in term.getvalue()


def test_with_progress_hands_the_callback_to_a_step_that_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", _Terminal())

    def step(*, on_progress: OnProgress | None = None) -> bool:
        return on_progress is not None

    assert with_progress("extract", step, reports=True)() is True
    assert with_progress("extract", step)() is False
