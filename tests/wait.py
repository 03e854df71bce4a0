"""Waiting in tests for a condition, not for a clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

POLL = 0.005
"""Seconds between two looks at the condition."""

TIMEOUT = 10.0
"""How long a condition may take before the test fails: a guard against hanging, not a speed check."""


async def wait_until(
    condition: Callable[[], object],
    timeout: float = TIMEOUT,
    *,
    what: str = "",
    between: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """Return once `condition()` is true, letting the event loop run in between.

    Args:
        condition: Looked at until it is true.
        timeout: Seconds before giving up.
        what: What is waited for, for the failure's message.
        between: Awaited between two looks (default: a short sleep); a Textual test passes its
            pilot's `pause`, which also lets the screen process its messages.

    Raises:
        AssertionError: `condition()` was still false after `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {what or condition}")
        await (between() if between is not None else asyncio.sleep(POLL))


def wait_until_sync(condition: Callable[[], object], timeout: float = TIMEOUT, *, what: str = "") -> None:
    """`wait_until` for code outside an event loop (threads, subprocesses)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {what or condition}")
        time.sleep(POLL)
