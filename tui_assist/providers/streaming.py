"""What every SDK-backed provider shares: timeouts, retrying a broken stream, one-line errors.

SDKs retry HTTP errors only up to the response headers; once a stream is flowing, a cut
connection, a read timeout or an SSE error event is the app's to retry. Providers raise
`StreamBroke` for those and run each call through `retry_broken_stream`.

Two timeouts bound a call, so a server that accepts a request and then says nothing cannot keep
a turn waiting:

- `request_timeout`: how long one attempt may wait for its response to begin, the SDK's own
  retries included (`response_within`). Past it the call fails at once with one line.
- the stream idle timeout: the transport's read timeout, so a stream that delivers nothing for
  that long breaks (`StreamBroke`) and is retried like any other broken stream.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, cast

import httpx2

from tui_assist.core.model import ContextOverflow, ProviderError, StreamSink
from tui_assist.core.text import clip, exc_text, one_line, plural

__all__ = [
    "StreamBroke",
    "clip",
    "context_overflow",
    "exc_text",
    "one_line",
    "plural",
    "response_within",
    "retry_broken_stream",
    "sdk_attempts",
    "tool_input_object",
]

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


async def response_within(seconds: float, start: Awaitable[T], *, what: str) -> T:
    """Await `start` (a request up to its response headers, SDK retries included) for at most `seconds`.

    Args:
        seconds: The request timeout.
        start: The SDK call that returns once the response has begun.
        what: The service, for the error line ("Anthropic API at https://...").

    Returns:
        What `start` returned.

    Raises:
        ProviderError: when the response did not begin in time; the message is one line.
    """
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await start
    except TimeoutError as exc:
        if not deadline.expired():
            raise
        raise ProviderError(
            one_line(f"{what} did not answer within {seconds:g} s (request_timeout)")
        ) from exc


def tool_input_object(tool: str, value: object) -> tuple[dict[str, Any], str | None]:
    """A streamed tool input, which the API and every tool expect to be a JSON object.

    A value that is not one (`42`, a list, a string; an OpenAI-compatible server can send it) must
    never enter the history as it is: the API would reject every later request. It becomes `{}`,
    with a problem that the agent loop hands the model as the call's error result, so the model
    can correct itself (`ModelResponse.invalid_tool_inputs`).

    Args:
        tool: The tool's name, for the problem.
        value: The decoded input.

    Returns:
        `value` typed as an object and None, or `{}` and what was wrong (one line).
    """
    if not isinstance(value, dict):
        shown = json.dumps(value, ensure_ascii=False, default=str)
        return {}, f"model sent tool arguments that are not a JSON object for {tool!r}: {clip(shown, 80)}"
    return cast(dict[str, Any], value), None


def sdk_attempts(request: Any) -> int:
    """How many HTTP attempts a Stainless-generated SDK made: it numbers retries in a header."""
    try:
        return int(request.headers.get("x-stainless-retry-count", "0")) + 1
    except (AttributeError, ValueError):
        return 1


_TOO_LONG = re.compile(
    r"prompt is too long|input is too long|exceed context limit|maximum context length"
    r"|context[_ ]length[_ ]exceeded"
    r"|exceeds? the (?:available |model's )?context (?:size|window|length)",
    re.IGNORECASE,
)
"""How providers say a request does not fit the context window: Anthropic ("prompt is too long:
N tokens > M maximum", "input length and `max_tokens` exceed context limit: N + K > M"), OpenAI
and vLLM ("maximum context length is M tokens ... resulted in / requested N tokens", code
`context_length_exceeded`), llama.cpp ("exceeds the available context size")."""

_NUMBER = r"(\d[\d,]*)"
_TOKENS = (
    re.compile(_NUMBER + r" tokens? > " + _NUMBER),  # Anthropic: N tokens > M maximum
    re.compile(_NUMBER + r" \+ \d[\d,]* > " + _NUMBER),  # Anthropic: N + max_tokens > M
    re.compile(r"(?:resulted in|requested) " + _NUMBER + r" tokens"),
)
_LIMIT = re.compile(r"maximum context length is " + _NUMBER)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def context_overflow(line: str, message: str, *, code: str | None = None) -> ContextOverflow | None:
    """A `ContextOverflow` when a provider's error message says the request is too long, else None.

    Args:
        line: The one-line error for users.
        message: The provider's own error message.
        code: The provider's error code, if any (`context_length_exceeded`).

    Returns:
        The error, with the request's size and the model's window when the message gives them.
    """
    if code != "context_length_exceeded" and not _TOO_LONG.search(message):
        return None
    tokens = limit = None
    for pattern in _TOKENS:
        found = pattern.search(message)
        if found is not None:
            tokens = _int(found.group(1))
            if found.lastindex == 2:
                limit = _int(found.group(2))
            break
    found = _LIMIT.search(message)
    if found is not None:
        limit = _int(found.group(1))
    return ContextOverflow(line, tokens=tokens, limit=limit)


CONNECT_TIMEOUT: Final = 5.0
"""Seconds to open a connection (the SDKs' own default): an unreachable server is retried soon."""


def sdk_timeout(stream_idle_timeout: float) -> httpx2.Timeout:
    """The SDK client's timeouts: a read (a stream gone quiet) after the idle one, a connection within 5 s."""
    return httpx2.Timeout(stream_idle_timeout, connect=min(CONNECT_TIMEOUT, stream_idle_timeout))
