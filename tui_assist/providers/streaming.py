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
from collections.abc import Awaitable, Callable
from typing import Any, Final, Generic, Protocol, TypedDict, TypeVar, cast

import httpx2

from tui_assist.core.model import DEFAULT_REQUEST_TIMEOUT, ProviderError, StreamSink
from tui_assist.core.text import clip, exc_text, one_line, plural

__all__ = [
    "SdkOptions",
    "SdkProvider",
    "StreamBroke",
    "clip",
    "exc_text",
    "one_line",
    "plural",
    "response_within",
    "retry_broken_stream",
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


CONNECT_TIMEOUT: Final = 5.0
"""Seconds to open a connection (the SDKs' own default): an unreachable server is retried soon."""


def sdk_timeout(stream_idle_timeout: float) -> httpx2.Timeout:
    """The SDK client's timeouts: a read (a stream gone quiet) after the idle one, a connection within 5 s."""
    return httpx2.Timeout(stream_idle_timeout, connect=min(CONNECT_TIMEOUT, stream_idle_timeout))


class _Closable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)


class SdkOptions(TypedDict, Generic[ClientT], total=False):
    """The keyword arguments every SDK-backed provider takes and hands to `SdkProvider` as they are."""

    api_key: str | None
    base_url: str | None
    max_retries: int
    stream_retries: int
    stream_backoff: float
    request_timeout: float
    stream_idle_timeout: float | None
    client: ClientT | None


class ClientOptions(TypedDict):
    """What every SDK client is built with besides its credentials (`SdkProvider._client_options`)."""

    base_url: str | None
    max_retries: int
    timeout: httpx2.Timeout


class SdkProvider(Generic[ClientT]):
    """What every SDK-backed provider holds: its settings, its lazily made client, closing it.

    Subclasses make the client (`client`, on first use, so constructing a provider never fails)
    and run each call through `_retrying` with these settings. A subclass's constructor takes its
    own arguments and passes the rest (`SdkOptions`) on; the defaults are these.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        stream_retries: int = 2,
        stream_backoff: float = 0.5,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        stream_idle_timeout: float | None = None,
        client: ClientT | None = None,
    ) -> None:
        self.model = model
        self.stream_retries = stream_retries
        self.stream_backoff = stream_backoff
        self.request_timeout = request_timeout
        self.stream_idle_timeout = request_timeout if stream_idle_timeout is None else stream_idle_timeout
        self._api_key = api_key
        self._base_url = base_url
        self._max_retries = max_retries
        self._client: ClientT | None = client
        self._owns_client = client is None

    @property
    def client(self) -> ClientT:
        """The SDK client, created on first use (`_make_client`).

        Raises:
            ProviderError: when the SDK rejects its configuration (e.g. a broken profile).
        """
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def prepare(self) -> None:
        """Make the client now, in the caller's thread, not in the event loop at the first request.

        Its TLS set-up would hold the event loop. A configuration the SDK rejects is left for that request to
        report, as when the client is made on first use.
        """
        try:
            self.client  # noqa: B018 (made and kept by the property)
        except ProviderError:
            pass

    def _make_client(self) -> ClientT:
        """A new SDK client on these settings (`_client_options`), or one `ProviderError` line."""
        raise NotImplementedError

    def _client_options(self) -> ClientOptions:
        """The endpoint, the SDK's own retries and the timeouts a client this provider makes gets."""
        return ClientOptions(
            base_url=self._base_url,
            max_retries=self._max_retries,
            timeout=sdk_timeout(self.stream_idle_timeout),
        )

    async def _retrying(self, attempt: Callable[[], Awaitable[T]], *, sink: StreamSink, what: str) -> T:
        """Run one streamed call through `retry_broken_stream` with this provider's retry settings."""
        return await retry_broken_stream(
            attempt, sink=sink, retries=self.stream_retries, backoff=self.stream_backoff, what=what
        )

    async def aclose(self) -> None:
        """Close the client this provider created (an injected client is left to its owner)."""
        if self._client is not None and self._owns_client:
            await self._client.close()
            self._client = None
