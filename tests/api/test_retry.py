"""Retry policy, Retry-After parsing and the pacing primitives (property tests)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.api import RetryPolicy, parse_retry_after
from recon.api._retry import PauseGate, TokenBucket, parse_http_date

from ._payloads import FakeTime

NOW = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        (" 7 ", 7.0),
        ("1.5", 1.5),
        ("0", None),
        ("0.0", None),
        ("-5", None),
        ("", None),
        (None, None),
        ("soon", None),
        ("1e3", None),
        ("inf", None),
        ("NaN", None),
        ("Sun, 01 Nov 2026 12:00:30 GMT", 30.0),
        ("Sun, 01 Nov 2026 11:59:00 GMT", None),  # in the past
        ("Sun, 01 Nov 2026 12:00:00 GMT", None),  # now
        ("Sun, 32 Nov 2026 12:00:00 GMT", None),  # not a date
    ],
)
def test_parse_retry_after_examples(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, NOW) == expected


@given(st.integers(min_value=1, max_value=10**9))
def test_positive_delta_seconds_are_taken_as_is(seconds: int) -> None:
    assert parse_retry_after(str(seconds)) == seconds


@given(st.integers(max_value=0))
def test_non_positive_delta_seconds_are_no_hint(seconds: int) -> None:
    assert parse_retry_after(str(seconds)) is None


@given(st.integers(min_value=-86_400, max_value=86_400))
def test_http_date_is_measured_from_the_given_now(offset: int) -> None:
    header = format_datetime(NOW + timedelta(seconds=offset), usegmt=True)
    expected = float(offset) if offset > 0 else None
    assert parse_retry_after(header, NOW) == expected


@given(st.text())
def test_garbage_never_raises_and_never_gives_a_non_positive_wait(text: str) -> None:
    result = parse_retry_after(text, NOW)
    assert result is None or result > 0


def test_http_date_uses_the_local_clock_by_default() -> None:
    future = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    hint = parse_retry_after(future)
    assert hint is not None and 3500 < hint <= 3600


def test_parse_http_date() -> None:
    assert parse_http_date("Sun, 01 Nov 2026 12:00:00 GMT") == NOW
    assert parse_http_date(None) is None
    assert parse_http_date("garbage") is None


policies = st.builds(
    RetryPolicy,
    max_attempts=st.integers(1, 20),
    base_delay=st.floats(0, 5),
    max_delay=st.floats(0, 60),
    budget=st.floats(0, 600),
)


@given(policies, st.integers(1, 10_000), st.integers(0, 2**32))
def test_backoff_is_full_jitter_within_the_exponential_cap(
    policy: RetryPolicy, attempt: int, seed: int
) -> None:
    delay = policy.backoff(attempt, random.Random(seed))
    cap = min(policy.max_delay, policy.base_delay * 2.0 ** min(attempt - 1, 64))
    assert 0.0 <= delay <= cap


@given(
    policies,
    st.integers(1, 50),
    st.one_of(st.none(), st.floats(0.001, 10_000)),
    st.integers(0, 2**32),
)
def test_retry_after_is_a_floor_never_shortened_by_jitter(
    policy: RetryPolicy, attempt: int, hint: float | None, seed: int
) -> None:
    delay = policy.delay(attempt, hint, random.Random(seed))
    if hint is not None:
        assert delay >= hint
        # ...and never inflated beyond what backoff alone could ask for.
        assert delay <= max(hint, policy.max_delay)
    else:
        assert 0 <= delay <= policy.max_delay


def test_backoff_grows_exponentially_on_average() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=1000.0)
    rng = random.Random(1)
    means = [sum(policy.backoff(n, rng) for _ in range(400)) / 400 for n in (1, 3, 5)]
    assert means[0] < means[1] < means[2]
    assert 0.4 < means[0] < 0.6 and 6 < means[2] < 10  # uniform(0, 2**(n-1)) has mean 2**(n-2)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"base_delay": -1},
        {"max_delay": float("nan")},
        {"budget": float("inf")},
    ],
)
def test_policy_rejects_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RetryPolicy().backoff(0)


def test_policy_defaults_match_the_contract() -> None:
    assert RetryPolicy() == RetryPolicy(max_attempts=6, base_delay=0.2, max_delay=20.0, budget=120)


def test_pause_gate_only_extends_and_opens_with_time() -> None:
    t = FakeTime()
    gate = PauseGate(t.clock)
    assert gate.remaining() == 0
    gate.pause_for(5)
    gate.pause_for(2)  # a shorter pause never shortens the longer one
    assert gate.remaining() == 5
    gate.pause_for(-1)
    t.sleep(3)
    assert gate.remaining() == 2
    t.sleep(10)
    assert gate.remaining() == 0


@given(st.floats(0.5, 1000), st.integers(1, 200))
def test_token_bucket_spaces_a_burst_at_the_rate(rate: float, n: int) -> None:
    t = FakeTime()
    bucket = TokenBucket(rate, clock=t.clock)
    waits = [bucket.reserve() for _ in range(n)]  # n callers arrive at the same instant
    assert waits[0] == 0
    for k, wait in enumerate(waits):
        assert wait == pytest.approx(k / rate)


@given(st.floats(1, 100), st.lists(st.floats(0, 2), min_size=1, max_size=50))
def test_token_bucket_never_exceeds_rate_plus_burst(rate: float, gaps: list[float]) -> None:
    t = FakeTime()
    bucket = TokenBucket(rate, burst=3, clock=t.clock)
    send_times = []
    for gap in gaps:
        t.now += gap
        send_times.append(t.now + bucket.reserve())
    window = send_times[-1] - send_times[0]
    assert len(send_times) <= 3 + window * rate + 1e-6


def test_token_bucket_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        TokenBucket(0)
    with pytest.raises(ValueError):
        TokenBucket(1, burst=0.5)
