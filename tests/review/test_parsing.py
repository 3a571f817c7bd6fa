"""Property tests: whatever a browser sends, the queue's parameters and a session cookie are
either understood or refused cleanly (never an unexpected exception)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recon.review.auth import Sessions, User
from recon.review.queue import FilterError, Filters

KEYS = ["category", "priority", "state", "assignee", "decision", "status", "coverage", "min_age",
        "max_age", "q", "sort", "page", "per_page", "other"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), st.text(max_size=30)))
def test_any_query_parses_or_is_a_filter_error(params: dict[str, str]) -> None:
    try:
        filters = Filters.parse(params)
    except FilterError as exc:
        assert str(exc)
        return
    assert 1 <= filters.per_page <= 100_000 and filters.page >= 1
    # the links the page builds from it parse back to the same filter
    assert Filters.parse(filters.query()) == filters


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_cookie_is_a_session_or_none(cookie: str) -> None:
    sessions = Sessions(b"x" * 32)
    assert sessions.load(cookie) is None  # nothing not signed by us is a session


def test_a_signed_session_round_trips_and_expires() -> None:
    now = [1_000_000.0]
    sessions = Sessions(b"y" * 32, idle_seconds=600, max_seconds=3600, clock=lambda: now[0])
    ana = User("ana", "approver", "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaA")
    session = sessions.new(ana)
    assert sessions.load(sessions.dump(session)) == session
    assert sessions.user_of(session, {"ana": ana}) == ana
    assert sessions.load(sessions.dump({**session, "iat": 1})) is None  # too old
    assert sessions.load(sessions.dump({**session, "seen": 1})) is None  # idle
    assert Sessions(b"z" * 32).load(sessions.dump(session)) is None  # another secret
    now[0] += 601
    assert sessions.load(sessions.dump(session)) is None
    token = sessions.csrf_token(session)
    assert sessions.csrf_ok(session, token)
    assert not sessions.csrf_ok(sessions.new(ana), token)  # bound to the session
    assert not sessions.csrf_ok(None, token) and not sessions.csrf_ok(session, "")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=100))
def test_any_csrf_token_is_checked_without_error(token: str) -> None:
    sessions = Sessions(b"w" * 32)
    session = sessions.new(None)
    assert sessions.csrf_ok(session, token) == (token == sessions.csrf_token(session))


def test_a_non_ascii_cookie_is_not_a_session() -> None:
    """Found by the property test: compare_digest raised TypeError on non-ASCII text."""
    sessions = Sessions(b"v" * 32)
    assert sessions.load("abc.é") is None
    assert not sessions.csrf_ok(sessions.new(None), "é")
