"""The Anthropic provider: Claude over the official SDK's async streaming API.

Retries happen in two layers, because the SDK only covers the first:

- Before the response headers arrive, the SDK retries 408/409/429/5xx/529 and connection
  errors itself (`max_retries`), honouring `retry-after`.
- Once a 200 has arrived, the SDK never retries. A stream that then breaks (an SSE `error`
  event, a dropped connection, no data for `stream_idle_timeout`, a stream that ends early,
  events the SDK cannot assemble such as a delta for a block that never started, a tool input
  that is not a JSON object) is retried here, from scratch, up to `stream_retries` times; the
  sink hears `retrying()` first so the host can throw away the partial text.

Whatever still fails becomes a `ProviderError` with one line a user can act on; a request the
API refuses as too long for the context window becomes its subclass `ContextOverflow`, so the
core can compact the history and retry. A response that has not begun within `request_timeout`
(the SDK's retries included) fails at once.

Prompt caching uses at most four `cache_control` breakpoints, in prefix order: the last tool,
the system prompt, the end of the stable history (`ModelRequest.stable_prefix`) and the end of
the final message. The stable breakpoint lets a turn read back the history that the previous
turn wrote even though the final-message breakpoint moves on every call.

With `web_search_max_uses`, every request that offers tools also offers the API's web search
server tool (`web_search_20250305`), first, so the tools' cache breakpoint covers it; the critic's
requests offer no tools, so it never searches. The reply's `server_tool_use` and
`web_search_tool_result` blocks, and its text blocks' citations, are kept verbatim in the
neutral message (`ServerToolBlock`, `TextBlock.citations`), since the API wants them back.

Extended thinking (`thinking`, for requests that allow it) streams to the sink's `thinking()`;
thinking blocks come back in the response with their signatures and are sent back verbatim,
which the API requires before the tool results of the call that made them. A request that
does not think sends no thinking blocks (the API would only ignore them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack
from typing import Any, Final, Literal, Required, TypedDict, Unpack, cast

import anthropic
import httpx2
from anthropic import AsyncAnthropic
from anthropic.lib.streaming import AsyncMessageStream
from anthropic.types import (
    CacheControlEphemeralParam,
    ImageBlockParam,
    MessageParam,
    RedactedThinkingBlockParam,
    TextBlockParam,
    ThinkingBlockParam,
    ThinkingConfigParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUnionParam,
    ToolUseBlockParam,
)
from anthropic.types import Message as ApiMessage
from anthropic.types import Usage as ApiUsage

from tui_assist.core.conversation import (
    SERVER_TOOL_BLOCK_TYPES,
    Block,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    ServerToolBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tui_assist.core.model import (
    ModelRequest,
    ModelResponse,
    ProviderError,
    StreamSink,
    ThinkingSetting,
    ToolSpec,
)
from tui_assist.providers.anthropic_info import (
    BASH_TOOL_NAME,
    BASH_TOOL_TYPE,
    DEFAULT_MODEL,
    INTERLEAVED_THINKING_BETA,
    MISSING_CREDENTIALS_HINT,
    NATIVE_TOOL_TYPES,
    TEXT_EDITOR_TOOL_NAME,
    TEXT_EDITOR_TOOL_TYPE,
    anthropic_credentials_available,
    supports_native_tools,
    thinking_plan,
)
from tui_assist.providers.errors import refused, retried_after, timed_out, unreachable
from tui_assist.providers.streaming import (
    SdkOptions,
    SdkProvider,
    StreamBroke,
    exc_text,
    one_line,
    response_within,
    tool_input_object,
)

__all__ = [
    "BASH_TOOL_NAME",
    "BASH_TOOL_TYPE",
    "DEFAULT_MODEL",
    "MAX_CACHE_BREAKPOINTS",
    "NATIVE_TOOL_TYPES",
    "TEXT_EDITOR_TOOL_NAME",
    "TEXT_EDITOR_TOOL_TYPE",
    "WEB_SEARCH_TOOL_TYPE",
    "AnthropicProvider",
    "StreamParams",
    "anthropic_credentials_available",
    "build_stream_params",
]

WEB_SEARCH_TOOL_TYPE: Final = "web_search_20250305"
"""The web search server tool's version: the one every current Claude model takes without the
code execution tool (the 2026 versions filter results with it)."""

MAX_CACHE_BREAKPOINTS: Final = 4
"""The API rejects a request with more `cache_control` blocks than this."""

_EPHEMERAL: Final[CacheControlEphemeralParam] = {"type": "ephemeral"}

_NOT_RETRYABLE_STREAM_ERRORS: Final = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
        "billing_error",
    }
)
"""SSE `error` types that a fresh attempt cannot fix; any other mid-stream error is retried."""

_MALFORMED_STREAM: Final = (ValueError, LookupError, TypeError, AttributeError, RuntimeError)
"""What the SDK raises assembling events it cannot place: undecodable data or tool-input JSON
(ValueError), a delta or stop for a content block that never started (IndexError), an event
before `message_start` (RuntimeError)."""


_ContentParam = (
    TextBlockParam
    | ToolUseBlockParam
    | ToolResultBlockParam
    | ThinkingBlockParam
    | RedactedThinkingBlockParam
    | ImageBlockParam
)


class StreamParams(TypedDict, total=False):
    """The keyword arguments `AsyncMessages.stream()` receives for one `ModelRequest`."""

    model: Required[str]
    max_tokens: Required[int]
    messages: Required[list[MessageParam]]
    system: list[TextBlockParam]
    tools: list[ToolUnionParam]
    thinking: ThinkingConfigParam
    extra_headers: dict[str, str]


class AnthropicProvider(SdkProvider[AsyncAnthropic]):
    """A `Provider` for Claude through the `anthropic` SDK.

    Credentials and the endpoint come from the arguments, else from the SDK's own environment
    (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, profiles, `ANTHROPIC_BASE_URL`). The client is
    created on first use, so constructing a provider never fails on missing credentials.

    Args:
        model: The model id sent with every request.
        api_key: An API key; None lets the SDK find credentials itself.
        base_url: The API root without `/v1`; None lets the SDK read `ANTHROPIC_BASE_URL`.
        max_retries: Retries the SDK makes before response headers (429, 5xx, 529, connect errors).
        stream_retries: Retries this provider makes when a stream breaks after its 200.
        stream_backoff: Seconds before the first stream retry; doubled for each later one.
        prompt_caching: Whether to mark cache breakpoints (off only to measure what caching saves).
        thinking: Extended thinking for requests that allow it: `off`, `auto` (where the model
            supports it) or a budget in tokens.
        request_timeout: Seconds an attempt may wait for its response to begin, the SDK's
            retries included; past it the call fails with one line.
        stream_idle_timeout: Seconds a stream may deliver nothing before it counts as broken
            (and is retried); None: `request_timeout`. Also the SDK's per-attempt read timeout.
        client: A ready client to use instead of building one. It is used as it is (the retry
            and idle-timeout arguments do not apply to it, `request_timeout` does) and
            `aclose()` leaves it open: whoever made it closes it.
        web_search_max_uses: Offer the API's web search server tool with requests that offer
            tools, allowing this many searches per request; None: not offered.
    """

    name = "anthropic"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        prompt_caching: bool = True,
        thinking: ThinkingSetting = "off",
        web_search_max_uses: int | None = None,
        **options: Unpack[SdkOptions[AsyncAnthropic]],
    ) -> None:
        super().__init__(model, **options)
        self.web_search_max_uses = web_search_max_uses
        """Searches per request when the web search server tool is offered (None: not offered)."""
        self.prompt_caching = prompt_caching
        self.thinking: ThinkingSetting = thinking

    def _make_client(self) -> AsyncAnthropic:
        try:
            return AsyncAnthropic(api_key=self._api_key, **self._client_options())
        except anthropic.AnthropicError as e:
            if not anthropic_credentials_available():
                raise ProviderError(MISSING_CREDENTIALS_HINT) from e
            raise ProviderError(one_line(f"Anthropic credentials: {e}")) from e

    async def list_models(self) -> list[str]:
        """The ids of the models the API offers this key, newest first (`/model` completes them).

        Raises:
            anthropic.AnthropicError: when the list cannot be read (the caller falls back).
        """
        page = await self.client.models.list(limit=100)
        return [model.id for model in page.data]

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Run one streamed call (see `Provider.complete`): text and tool calls, in order."""
        params = build_stream_params(
            request,
            request.model or self.model,
            cache=self.prompt_caching,
            thinking=self.thinking,
            web_search_max_uses=self.web_search_max_uses,
        )
        client = self.client
        return await self._retrying(
            lambda: self._attempt(client, params, sink), sink=sink, what="Anthropic API"
        )

    async def _attempt(self, client: AsyncAnthropic, params: StreamParams, sink: StreamSink) -> ModelResponse:
        try:
            async with AsyncExitStack() as stack:
                stream = await response_within(
                    self.request_timeout,
                    stack.enter_async_context(client.messages.stream(**params)),
                    what=f"Anthropic API at {_url(client)}",
                )
                # Its text-only view is a generator too, never started: closed whatever happens.
                stack.push_async_callback(cast(AsyncGenerator[str, None], stream.text_stream).aclose)
                final: ApiMessage | None = None
                started = False
                while final is None:
                    try:
                        event = await anext(stream)
                    except asyncio.CancelledError:
                        if started:
                            # A call cut after `message_start` is billed for what the API reported
                            # so far (input and cache counts; output up to the last delta).
                            snapshot = stream.current_message_snapshot
                            sink.usage(_usage(snapshot.usage), snapshot.model)
                        raise
                    except StopAsyncIteration:
                        raise StreamBroke("stream ended before message_stop") from None
                    except anthropic.APIStatusError as e:
                        # An SSE `error` event: the response itself was a 200.
                        etype = e.type or "error"
                        text = f"{etype}: {e.api_message or e.message}"
                        if etype in _NOT_RETRYABLE_STREAM_ERRORS:
                            line = one_line(f"Anthropic API error mid-stream ({text})")
                            raise refused(line, text) from e
                        raise StreamBroke(text) from e
                    except httpx2.TimeoutException as e:
                        raise StreamBroke(
                            f"no data from the API for {self.stream_idle_timeout:g} s ({exc_text(e)})"
                        ) from e
                    except httpx2.HTTPError as e:
                        raise StreamBroke(f"connection broke mid-stream ({exc_text(e)})") from e
                    except _MALFORMED_STREAM as e:
                        raise StreamBroke(f"malformed stream ({exc_text(e)})") from e
                    if event.type == "text":
                        sink.text(event.text)
                    elif event.type == "thinking":
                        sink.thinking(event.thinking)
                    elif event.type == "message_start":
                        started = True
                    elif event.type == "message_stop":
                        final = event.message
                await _drain(stream)
                return _to_response(final)
        except anthropic.APIStatusError as e:
            raise _status_error(e) from e
        except anthropic.APITimeoutError as e:
            raise timed_out(f"Anthropic API at {_url(client)}", e.request) from e
        except anthropic.APIConnectionError as e:
            raise unreachable(f"Anthropic API at {_url(client)}", e, e.message) from e
        except anthropic.AnthropicError as e:
            raise ProviderError(one_line(f"Anthropic API error: {e}")) from e
        except TypeError as e:
            # The SDK's way of saying no credential was found (raised when it builds headers).
            if "authentication" in str(e):
                raise ProviderError(MISSING_CREDENTIALS_HINT) from e
            raise

    async def count_tokens(self, request: ModelRequest) -> int:
        """The input tokens `request` would use, from the API's `count_tokens` endpoint (no model run).

        Raises:
            ProviderError: when counting fails; the message is one line.
        """
        params = build_stream_params(
            request, request.model or self.model, cache=False, web_search_max_uses=self.web_search_max_uses
        )
        client = self.client
        try:
            counted = await client.messages.count_tokens(
                model=params["model"],
                messages=params["messages"],
                system=params.get("system", anthropic.omit),
                tools=cast(Any, params.get("tools", anthropic.omit)),
                timeout=self.request_timeout,
            )
        except anthropic.APIStatusError as e:
            raise _status_error(e) from e
        except anthropic.AnthropicError as e:
            raise ProviderError(one_line(f"Anthropic API could not count tokens: {exc_text(e)}")) from e
        return counted.input_tokens


# --------------------------------------------------------------------------- request


def build_stream_params(
    request: ModelRequest,
    model: str,
    *,
    cache: bool = True,
    thinking: ThinkingSetting = "off",
    web_search_max_uses: int | None = None,
) -> StreamParams:
    """Translate a neutral request into `messages.stream()` arguments, with cache breakpoints.

    Empty or whitespace-only text blocks are dropped, and so is a message left with no content
    (the API rejects both; such a message may come from a history stored before empty replies
    were refused, and the API joins the neighbours it leaves in one role). Tools with a
    `native_type` are sent as that versioned type when the model supports it.

    A request that allows thinking (`request.thinking`) gets the `thinking` configuration and
    a `max_tokens` raised by the thinking's room (the API counts thinking within `max_tokens`
    and wants it above the budget); with tools, a capped budget also asks for interleaved
    thinking. Thinking blocks of the history are sent only when the request thinks.

    Args:
        request: The neutral request.
        model: The model id.
        cache: Whether to place prompt-caching breakpoints at all.
        thinking: The provider's thinking setting.
        web_search_max_uses: Offer the web search server tool (first) when the request offers
            tools, with this many uses; None: not offered.

    Returns:
        The keyword arguments, with at most `MAX_CACHE_BREAKPOINTS` `cache_control` marks.
    """
    plan = thinking_plan(thinking, model) if request.thinking else None
    keep_thinking = plan is not None
    messages: list[MessageParam] = []
    stable: _Mark | None = None  # the last block of what `request` says is stable
    for i, message in enumerate(request.messages):
        content = _content_params(message.content, thinking=keep_thinking)
        if not content:
            continue
        if message.role == "user":
            messages.append({"role": "user", "content": content})
        else:
            messages.append({"role": "assistant", "content": content})
        if i < request.stable_prefix:
            stable = (len(messages) - 1, len(content) - 1)
        elif i == request.stable_prefix and request.stable_blocks > 0:
            kept = len(_content_params(message.content[: request.stable_blocks], thinking=keep_thinking))
            if kept:
                stable = (len(messages) - 1, kept - 1)

    marks = _breakpoints(request, messages, stable) if cache else []
    for where in marks:
        if isinstance(where, tuple):
            block = _blocks(messages[where[0]])[where[1]]
            if block["type"] != "thinking" and block["type"] != "redacted_thinking":  # never cached
                block["cache_control"] = _EPHEMERAL

    params: StreamParams = {"model": model, "max_tokens": request.max_tokens, "messages": messages}
    if plan is not None:
        how, tokens = plan
        params["max_tokens"] = request.max_tokens + tokens
        if how == "adaptive":
            params["thinking"] = {"type": "adaptive"}
        else:
            params["thinking"] = {"type": "enabled", "budget_tokens": tokens}
            if request.tools and not model.startswith("claude-3"):
                params["extra_headers"] = {"anthropic-beta": INTERLEAVED_THINKING_BETA}
    if request.system.strip():
        system: TextBlockParam = {"type": "text", "text": request.system}
        if "system" in marks:
            system["cache_control"] = _EPHEMERAL
        params["system"] = [system]
    if request.tools:
        native = supports_native_tools(model)
        last = len(request.tools) - 1
        tools: list[ToolUnionParam] = []
        if web_search_max_uses is not None:
            tools.append(
                {"type": WEB_SEARCH_TOOL_TYPE, "name": "web_search", "max_uses": web_search_max_uses}
            )
        tools += [
            _tool_param(t, native=native, cache="tools" in marks and i == last)
            for i, t in enumerate(request.tools)
        ]
        params["tools"] = tools
    return params


_Mark = tuple[int, int]
"""A content block, as (message index, block index) in the request's messages."""


def _breakpoints(
    request: ModelRequest, messages: list[MessageParam], stable: _Mark | None
) -> list[_Mark | Literal["system", "tools"]]:
    """Where the cache breakpoints go, most valuable first, at most `MAX_CACHE_BREAKPOINTS`.

    1. The end of the request, which the next call of an agent loop repeats (unless the request
       says no later call extends it).
    2. Where the previous call of the loop ended: two messages back, when the request ends with
       the model's tool calls and their results. The API looks back about 20 blocks from a
       breakpoint for an earlier entry; a turn with many parallel tool calls exceeds that, and a
       breakpoint right there always hits.
    3. The end of the stable part (history; the critic's context and task), read by every round.
    4. The system prompt (with the tools before it), shared by every call of the session.
    5. The last tool, shared with sub-agents, whose system prompt differs; dropped first, since
       the system breakpoint covers the tools for every other call.
    """
    out: list[_Mark | Literal["system", "tools"]] = []
    if messages and request.cache_tail:
        out.append((len(messages) - 1, len(_blocks(messages[-1])) - 1))
    if _ends_with_tool_round(messages):
        out.append((len(messages) - 3, len(_blocks(messages[-3])) - 1))
    if stable is not None:
        out.append(stable)
    if request.system.strip():
        out.append("system")
    if request.tools:
        out.append("tools")
    return list(dict.fromkeys(out))[:MAX_CACHE_BREAKPOINTS]


def _ends_with_tool_round(messages: list[MessageParam]) -> bool:
    """Whether the messages end with an assistant's tool calls and the user's tool results."""
    if len(messages) < 3 or messages[-2]["role"] != "assistant" or messages[-1]["role"] != "user":
        return False
    return any(block["type"] == "tool_result" for block in _blocks(messages[-1]))


def _blocks(message: MessageParam) -> list[_ContentParam]:
    """A message's content as `build_stream_params` built it: always a list of our block types."""
    return cast(list[_ContentParam], message["content"])


def _content_params(blocks: Sequence[Block], *, thinking: bool = False) -> list[_ContentParam]:
    out: list[_ContentParam] = []
    for block in blocks:
        match block:
            case ThinkingBlock(thinking=text, signature=signature):
                if thinking:
                    out.append({"type": "thinking", "thinking": text, "signature": signature})
            case RedactedThinkingBlock(data=data):
                if thinking:
                    out.append({"type": "redacted_thinking", "data": data})
            case ImageBlock(media_type=media_type, data=data):
                out.append(
                    cast(
                        ImageBlockParam,
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": media_type, "data": data},
                        },
                    )
                )
            case TextBlock(text=text, citations=citations):
                if text.strip():
                    param: TextBlockParam = {"type": "text", "text": text}
                    if citations:
                        param["citations"] = cast(Any, list(citations))
                    out.append(param)
            case ServerToolBlock(data=data):
                out.append(cast(_ContentParam, dict(data)))
            case ToolUseBlock(id=id_, name=name, input=input_):
                out.append({"type": "tool_use", "id": id_, "name": name, "input": input_})
            case ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error):
                result: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": tool_use_id}
                if content or is_error:
                    # An error result with no content is rejected by the API.
                    result["content"] = content or "(no output)"
                if is_error:
                    result["is_error"] = True
                out.append(result)
    return out


def _tool_param(spec: ToolSpec, *, native: bool, cache: bool) -> ToolUnionParam:
    extra: dict[str, Any] = {"cache_control": _EPHEMERAL} if cache else {}
    if spec.native_type and native:
        # The versioned types are distinct TypedDicts with literal `type`/`name` fields.
        return cast(ToolUnionParam, {"type": spec.native_type, "name": spec.name, **extra})
    custom: ToolParam = cast(
        ToolParam,
        {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema, **extra},
    )
    return custom


# --------------------------------------------------------------------------- response


_DRAIN_TIMEOUT: Final = 2.0
"""Seconds to read what follows `message_stop` (the end of the body) before giving up on it."""


async def _drain(stream: AsyncMessageStream[Any]) -> None:
    """Read a finished stream to its end, so the SDK's async generators finish now, in turn.

    They are a chain (events, SSE, httpx, httpcore). Left suspended after `message_stop`, they
    would be closed all at once by the event loop's shutdown, where they collide ("async
    generator already executing", which pytest reports as `PytestUnraisableExceptionWarning`).
    """
    try:
        async with asyncio.timeout(_DRAIN_TIMEOUT):
            while True:
                await anext(stream)
    except StopAsyncIteration:
        pass
    except Exception:  # the answer is complete; a fault after it changes nothing
        pass


def _to_response(final: ApiMessage) -> ModelResponse:
    blocks: list[Block] = []
    invalid: dict[str, str] = {}
    for block in final.content:
        if block.type == "text" and block.text:
            citations = tuple(c.model_dump(mode="json", exclude_none=True) for c in block.citations or ())
            blocks.append(TextBlock(block.text, citations))
        elif block.type in SERVER_TOOL_BLOCK_TYPES:
            blocks.append(ServerToolBlock(block.model_dump(mode="json", exclude_none=True)))
        elif block.type == "thinking":
            blocks.append(ThinkingBlock(block.thinking, block.signature))
        elif block.type == "redacted_thinking":
            blocks.append(RedactedThinkingBlock(block.data))
        elif block.type == "tool_use":
            arguments, problem = tool_input_object(block.name, block.input)
            if problem is not None:
                invalid[block.id] = problem
            blocks.append(ToolUseBlock(block.id, block.name, arguments))
    return ModelResponse(
        message=Message("assistant", tuple(blocks)),
        stop_reason=final.stop_reason or "end_turn",
        usage=_usage(final.usage),
        model=final.model,
        invalid_tool_inputs=invalid,
    )


def _usage(usage: ApiUsage) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )


# --------------------------------------------------------------------------- errors


def _status_error(e: anthropic.APIStatusError) -> ProviderError:
    """The error for a failed status: `ContextOverflow` when the request is too long for the model."""
    return refused(_status_error_line(e), e.api_message or e.message, status=e.status_code)


def _status_error_line(e: anthropic.APIStatusError) -> str:
    status = e.status_code
    etype = e.type or "error"
    message = e.api_message or e.message
    after = retried_after(e.response.request)
    if status == 401:
        line = f"authentication failed: check ANTHROPIC_API_KEY (Anthropic API 401 {etype}: {message})"
    elif status == 529 or etype == "overloaded_error":
        line = f"Anthropic API overloaded ({status}){after}"
    elif status == 429:
        line = f"Anthropic API rate limit (429){after}: {message}"
    else:
        line = f"Anthropic API error {status} ({etype}){after}: {message}"
    return one_line(line)


def _url(client: AsyncAnthropic) -> str:
    return str(client.base_url).rstrip("/")
