"""What every SDK-backed provider shares: retrying a stream that broke after its 200, and one-line errors.

SDKs retry HTTP errors only up to the response headers; once a stream is flowing, a cut
connection, a read timeout or an SSE error event is the app's to retry. Providers raise
`StreamBroke` for those and run each call through `retry_broken_stream`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tui_assist.providers.base import ProviderError, StreamSink

T = TypeVar("T")

MAX_LINE = 300
"""Longest error line shown to users."""


class StreamBroke(Exception):
    """A stream failed after its 200 response: worth another attempt."""


async def retry_broken_stream(
    attempt: Callable[[], Awaitable[T]], *, sink: StreamSink, retries: int, backoff: float, what: str
) -> T:
    """Run `attempt`, retrying it up to `retries` times when it raises `StreamBroke`.

    Args:
        attempt: One streamed call.
        sink: Told `retrying(n, reason)` before retry n (1-based), so hosts drop the void text.
        retries: Retries after the first attempt.
        backoff: Seconds before the first retry; doubled for each later one.
        what: The service, for the final error line ("Anthropic API").

    Returns:
        What the first successful attempt returned.

    Raises:
        ProviderError: when every attempt broke; the message is one line.
    """
    done = 0
    while True:
        try:
            return await attempt()
        except StreamBroke as exc:
            if done >= retries:
                raise ProviderError(
                    one_line(f"{what} stream failed after {plural(done + 1, 'attempt')}: {exc}")
                ) from exc.__cause__
            done += 1
            sink.retrying(done, one_line(str(exc)))
            await asyncio.sleep(backoff * 2 ** (done - 1))


def sdk_attempts(request: Any) -> int:
    """How many HTTP attempts a Stainless-generated SDK made: it numbers retries in a header."""
    try:
        return int(request.headers.get("x-stainless-retry-count", "0")) + 1
    except (AttributeError, ValueError):
        return 1


def plural(n: int, word: str) -> str:
    """`1 attempt`, `3 attempts`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def exc_text(exc: BaseException) -> str:
    """An exception as `Type: message`."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def clip(text: str, limit: int) -> str:
    """Whitespace folded to single spaces, cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def one_line(text: str) -> str:
    """An error message fit for one line of a terminal."""
    return clip(text, MAX_LINE)
