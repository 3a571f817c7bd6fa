"""The sans-IO core (recon.api.protocol) driven by hand: no socket, no sleep, no event loop.

A call is a generator of commands; these tests play the network and the clock themselves,
so every retry decision is checked for any sequence of outcomes (hypothesis).
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.api import Limits, RetryPolicy
from recon.api.client import Client, split_userinfo
from recon.api.protocol import (
    BodyReader,
    Failed,
    Pacer,
    Received,
    Request,
    Sleep,
    Verdict,
    run_blocking,
)
from recon.errors import ApiConnectionError, ApiError, RateLimited, ResponseLimitError, ServerError

REQUEST = Request("GET", "http://api.invalid/v2/intents", "GET /v2/intents")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def classify(request: Request, outcome: Any) -> Verdict:
    """The v2 rules in small: 2xx ok; 429/5xx (not 501) and transport errors retried."""
    if isinstance(outcome, Failed):
        return Verdict(ApiConnectionError(f"{request.what}: down"), True)
    status = outcome.status
    if status < 300:
        return Verdict(None)
    hint = outcome.headers.get("retry-after")
    after = float(hint) if hint else None
    if status == 429:
        return Verdict(RateLimited("slow down", status_code=429, retry_after=after), True, after)
    if status >= 500 and status != 501:
        return Verdict(ServerError("boom", status_code=status), True, after)
    return Verdict(ApiError(f"status {status}"))


OUTCOMES = st.one_of(
    st.sampled_from([200, 201, 400, 404, 429, 500, 501, 502, 503]).flatmap(
        lambda status: st.one_of(st.none(), st.integers(1, 30)).map(
            lambda after: Received(status, {"retry-after": str(after)} if after else {}, b"{}")
        )
    ),
    st.just(Failed(httpx.ConnectError("refused"))),
)


@settings(max_examples=200, deadline=None)
@given(
    outcomes=st.lists(OUTCOMES, min_size=1, max_size=12),
    max_attempts=st.integers(1, 8),
    budget=st.floats(0, 200),
    seed=st.integers(0, 2**32 - 1),
)
def test_exchange_decides_like_the_policy_says(
    outcomes: list[Any], max_attempts: int, budget: float, seed: int
) -> None:
    policy = RetryPolicy(max_attempts=max_attempts, base_delay=0.2, max_delay=20, budget=budget)
    clock = Clock()
    pacer = Pacer(policy, clock=clock, rng=random.Random(seed))
    call = pacer.exchange(REQUEST, classify)
    start = clock.now
    sent: list[Any] = []
    sleeps: list[float] = []
    command = next(call)
    result: Any = None
    error: BaseException | None = None
    try:
        while True:
            if isinstance(command, Sleep):
                assert command.seconds > 0
                sleeps.append(command.seconds)
                clock.now += command.seconds
                command = call.send(None)
            else:
                assert command is REQUEST
                outcome = outcomes[min(len(sent), len(outcomes) - 1)]
                sent.append(outcome)
                command = call.send(outcome)
    except StopIteration as stop:
        result = stop.value
    except ApiError as exc:
        error = exc
    assert 1 <= len(sent) <= max_attempts
    last = sent[-1]
    verdicts = [classify(REQUEST, o) for o in sent]
    # every attempt but the last was a retryable failure
    assert all(v.error is not None and v.retryable for v in verdicts[:-1])
    if verdicts[-1].error is None:
        assert result is last and error is None
    else:
        assert error is verdicts[-1].error or type(error) is type(verdicts[-1].error)
        if isinstance(last, Failed):
            assert error.__cause__ is last.error
    # each wait honours the server's hint (a floor) and the policy's cap otherwise
    waits = sleeps  # no 429 shares a gate here beyond its own wait
    for before, wait in zip(verdicts, waits, strict=False):
        if before.retry_after is not None:
            assert wait >= before.retry_after
        else:
            assert wait <= policy.max_delay
    # a retry is only made when its wait ends inside the budget
    assert clock.now - start <= budget + 1e-9 or len(sent) == 1
    assert pacer.counts["requests"] == len(sent)
    assert pacer.counts["retries"] == len(sent) - 1


def test_a_429_pauses_every_call_of_the_pacer() -> None:
    clock = Clock()
    pacer = Pacer(RetryPolicy(), clock=clock, rng=random.Random(1))
    first, second = pacer.exchange(REQUEST, classify), pacer.exchange(REQUEST, classify)
    assert next(first) is REQUEST
    wait = first.send(Received(429, {"retry-after": "5"}, b""))
    assert isinstance(wait, Sleep) and wait.seconds >= 5
    # the other call, not yet started, must wait for the same instant before sending
    held = next(second)
    assert isinstance(held, Sleep) and held.seconds == pytest.approx(wait.seconds)
    clock.now += held.seconds
    assert second.send(None) is REQUEST


def test_a_token_bucket_spaces_requests() -> None:
    clock = Clock()
    pacer = Pacer(RetryPolicy(), clock=clock, max_rps=2)
    calls = [pacer.exchange(REQUEST, classify) for _ in range(3)]
    firsts = [next(c) for c in calls]
    assert firsts[0] is REQUEST
    assert [c.seconds for c in firsts[1:]] == pytest.approx([0.5, 1.0])  # type: ignore[union-attr]


def test_run_blocking_only_carries_commands_out() -> None:
    slept: list[float] = []
    replies = iter([Received(503, {"retry-after": "2"}, b""), Received(200, {}, b"ok")])
    pacer = Pacer(RetryPolicy(), rng=random.Random(0))
    got = run_blocking(pacer.exchange(REQUEST, classify), lambda r: next(replies), slept.append)
    assert got.content == b"ok" and len(slept) == 1 and slept[0] >= 2


# ------------------------------------------------------------------------------ bodies


@settings(max_examples=100, deadline=None)
@given(
    chunks=st.lists(st.integers(0, 5000), max_size=30),
    bound=st.integers(1, 40_000),
    ratio=st.integers(1, 5),
)
def test_body_reader_stops_at_the_bound_and_never_before(
    chunks: list[int], bound: int, ratio: int
) -> None:
    """Wire bytes and decoded bytes (a chunk may decode to `ratio`x) are held to their
    bounds; a body inside both comes back whole."""
    limits = Limits(max_body_bytes=bound, max_decoded_bytes=bound * 2)
    reader = BodyReader(limits, "GET /x", Clock())
    wire = decoded = 0
    try:
        for n in chunks:
            wire += n
            decoded += n * ratio
            reader.feed(b"x" * (n * ratio), wire)
    except ResponseLimitError as exc:
        assert wire > bound or decoded > bound * 2
        assert ("max_body_bytes" in str(exc)) == (wire > bound)
        return
    assert wire <= bound and decoded <= bound * 2
    assert reader.received(200, {}).content == b"x" * decoded


def test_body_reader_refuses_a_declared_length_first_and_a_slow_body() -> None:
    clock = Clock()
    reader = BodyReader(Limits(max_body_bytes=10, response_deadline=5), "GET /x", clock)
    with pytest.raises(ResponseLimitError, match="declares 11 bytes"):
        reader.start({"content-length": "11"})
    reader.start({"content-length": "10"})
    reader.feed(b"a", 1)
    clock.now += 6
    with pytest.raises(httpx.ReadTimeout, match="response_deadline"):
        reader.feed(b"b", 2)


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError):
        Limits(max_body_bytes=0)
    with pytest.raises(ValueError):
        Limits(response_deadline=float("inf"))


# ------------------------------------------------------------------------------ base URL


@pytest.mark.parametrize(
    ("url", "clean", "auth"),
    [
        ("http://h:1/x", "http://h:1/x", None),
        ("http://u:p%40ss@h:1/x", "http://h:1/x", ("u", "p@ss")),
        ("https://token@h", "https://h", ("token", "")),
        ("http://u:p@[::1]:8/", "http://[::1]:8/", ("u", "p")),
    ],
)
def test_userinfo_leaves_the_url(url: str, clean: str, auth: tuple[str, str] | None) -> None:
    assert split_userinfo(url) == (clean, auth)


def test_userinfo_travels_as_basic_auth_and_is_redacted() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500, json={"message": "echo pw-123 back"})

    client = Client(
        "http://ops:pw-123@api.invalid",
        "key",
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(max_attempts=1),
    )
    assert "pw-123" not in repr(client)
    with pytest.raises(ServerError) as info:
        client.get_intent("x")
    assert "pw-123" not in str(info.value) and "pw-123" not in str(info.value.body)
    assert seen[0].url.userinfo == b"" and seen[0].headers["authorization"].startswith("Basic ")
