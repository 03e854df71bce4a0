"""What every SDK-backed provider shares: retrying a stream that broke after its 200, and one-line errors.

SDKs retry HTTP errors only up to the response headers; once a stream is flowing, a cut
connection, a read timeout or an SSE error event is the app's to retry. Providers raise
`StreamBroke` for those and run each call through `retry_broken_stream`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tui_assist.core.model import ProviderError, StreamSink
from tui_assist.core.text import clip, exc_text, one_line, plural

__all__ = ["StreamBroke", "clip", "exc_text", "one_line", "plural", "retry_broken_stream", "sdk_attempts"]

T = TypeVar("T")


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
