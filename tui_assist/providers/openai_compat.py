"""The OpenAI-compatible provider: any Chat Completions server over the official `openai` SDK.

One adapter serves OpenAI itself and the local servers users run their own models on (Ollama,
vLLM, llama.cpp's `llama-server`, LM Studio): they all speak streaming Chat Completions. It
mirrors `AnthropicProvider` in everything the core can see:

- Retries happen in two layers. Before the response headers arrive, the SDK retries
  408/409/429/5xx and connection errors itself (`max_retries`), honouring `retry-after`. Once a
  200 has arrived the SDK never retries; a stream that then breaks (a dropped connection, no
  data for `stream_idle_timeout`, an error payload mid-stream, a stream that ends without a
  finish reason, tool arguments that are not JSON) is retried here from scratch, up to
  `stream_retries` times, and the sink hears `retrying()` first. Arguments that are JSON but not
  an object are the model's mistake, not the stream's: the call comes back with `{}` and its
  problem (`ModelResponse.invalid_tool_inputs`), for the agent loop to answer with an error.
- A response that has not begun within `request_timeout` (the SDK's retries included) fails at
  once.
- Whatever still fails becomes a `ProviderError` with one line a user can act on; a request the
  server refuses as too long for the model's context becomes `ContextOverflow` (its subclass).
  A server or model without native tool calling (Ollama's "does not support tools", vLLM without
  `--enable-auto-tool-choice`, llama.cpp without `--jinja`) is named as such, because the raw
  400 is the most common confusion with local models.

Translation: neutral `tool_use` blocks become an assistant message's `tool_calls`, and
`tool_result` blocks become `role: "tool"` messages (Chat Completions has no error flag, so an
error result is prefixed with `Error:`). Tools are sent as JSON-schema function tools; Anthropic's
versioned `native_type` is ignored. Streamed `tool_calls` deltas (an id and name first, then the
arguments JSON in pieces, keyed by `index`) are assembled into `ToolUseBlock`s. Usage is asked
for with `stream_options.include_usage`; servers that do not report it yield zero usage. A call
cancelled mid-stream reports (`StreamSink.usage`) the server's usage if a chunk carried it, else an
estimate of what was sent and received, since servers tell usage only at the end. The
cached share of the prompt (`prompt_tokens_details.cached_tokens`) is reported as cache reads,
so `Usage.input_tokens` stays exclusive of cached tokens, as in the rest of the app.

Only this module imports `openai`; `tui_assist.providers.profiles` resolves endpoints without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Final, Unpack, cast

import openai
from openai import AsyncOpenAI
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionContentPartParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from tui_assist.core.conversation import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tui_assist.core.model import (
    ModelRequest,
    ModelResponse,
    ProviderError,
    StreamSink,
    ToolSpec,
)
from tui_assist.core.text import estimate_tokens
from tui_assist.providers.errors import refused, retried_after, timed_out, unreachable
from tui_assist.providers.profiles import NO_KEY_PLACEHOLDER, MaxTokensParam
from tui_assist.providers.streaming import (
    SdkOptions,
    SdkProvider,
    StreamBroke,
    clip,
    exc_text,
    one_line,
    response_within,
    tool_input_object,
)

__all__ = ["OpenAICompatProvider", "build_chat_params"]


_STOP_REASONS: Final = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
"""Chat Completions finish reasons in the Messages API's words, as the rest of the app uses."""

_NOT_RETRYABLE_STREAM_ERRORS: Final = frozenset(
    {"invalid_request_error", "authentication_error", "permission_error", "not_found_error"}
)
"""Error types in a mid-stream error payload that a fresh attempt cannot fix."""

_NO_TOOLS = re.compile(
    r"does not support tools|tools? (?:are|is) not supported|not support(?:ed)? (?:function|tool)"
    r"|tool.?choice|tool.?call.?parser|--jinja|function calling",
    re.IGNORECASE,
)
"""What servers say when the model or server has no native tool calling (Ollama, vLLM, llama.cpp)."""


class OpenAICompatProvider(SdkProvider[AsyncOpenAI]):
    """A `Provider` for any OpenAI-compatible Chat Completions server, through the `openai` SDK.

    The client is created on first use, so constructing a provider never fails.

    Args:
        model: The model id sent with every request (e.g. `qwen2.5-coder:7b` for Ollama).
        base_url: The API root including `/v1`; None lets the SDK read `OPENAI_BASE_URL`, else
            use api.openai.com.
        api_key: The key; None lets the SDK read `OPENAI_API_KEY`, and sends a placeholder when
            that is unset too (local servers need no key).
        max_retries: Retries the SDK makes before response headers (429, 5xx, connect errors).
        stream_retries: Retries this provider makes when a stream breaks after its 200.
        stream_backoff: Seconds before the first stream retry; doubled for each later one.
        request_timeout: Seconds an attempt may wait for its response to begin, the SDK's
            retries included; past it the call fails with one line.
        stream_idle_timeout: Seconds a stream may deliver nothing before it counts as broken
            (and is retried); None: `request_timeout`. Also the SDK's per-attempt read timeout.
        max_tokens_param: Which request field carries `ModelRequest.max_tokens` (`none`: omit).
        include_usage: Whether to ask for usage with `stream_options` (a few servers reject it).
        client: A ready client to use instead of building one (the retry and idle-timeout
            arguments do not apply to it); `aclose()` leaves it open.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        max_tokens_param: MaxTokensParam = "max_tokens",
        include_usage: bool = True,
        **options: Unpack[SdkOptions[AsyncOpenAI]],
    ) -> None:
        super().__init__(model, **options)
        self.max_tokens_param: MaxTokensParam = max_tokens_param
        self.include_usage = include_usage

    def _make_client(self) -> AsyncOpenAI:
        key = self._api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY_PLACEHOLDER
        try:
            return AsyncOpenAI(api_key=key, **self._client_options())
        except openai.OpenAIError as e:
            raise ProviderError(one_line(f"OpenAI-compatible client: {e}")) from e

    async def list_models(self) -> list[str]:
        """The ids of the models the endpoint serves (`/model` completes them).

        Raises:
            openai.OpenAIError: when the list cannot be read (the caller falls back).
        """
        page = await self.client.models.list()
        return [model.id for model in page.data]

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Run one streamed call (see `Provider.complete`): text, then tool calls in order."""
        params = build_chat_params(
            request,
            request.model or self.model,
            max_tokens_param=self.max_tokens_param,
            include_usage=self.include_usage,
        )
        client = self.client
        return await self._retrying(
            lambda: self._attempt(client, params, sink, has_tools=bool(request.tools)),
            sink=sink,
            what=_server(client),
        )

    async def _attempt(
        self, client: AsyncOpenAI, params: dict[str, Any], sink: StreamSink, *, has_tools: bool
    ) -> ModelResponse:
        try:
            stream = await response_within(
                self.request_timeout,
                client.chat.completions.create(**params, stream=True),
                what=_server(client),
            )
        except openai.APIStatusError as e:
            line = _status_error_line(e, client, self.model, has_tools=has_tools)
            raise refused(line, _api_message(e), status=e.status_code, code=e.code) from e
        except openai.APITimeoutError as e:
            raise timed_out(_server(client), e.request) from e
        except openai.APIConnectionError as e:
            hint = " (is the server running?)" if _is_local(client) else ""
            raise unreachable(_server(client), e, e.message, hint=hint) from e
        except openai.OpenAIError as e:
            raise ProviderError(one_line(f"{_server(client)} error: {e}")) from e
        assembler = _Assembler(self.model)
        async with stream:
            try:
                async for chunk in stream:
                    assembler.add(chunk, sink)
            except asyncio.CancelledError:
                # The server has the request and may bill it: report what is known, since a
                # server tells usage only in its last chunk.
                sink.usage(assembler.usage_so_far(params), assembler.model)
                raise
            except openai.APITimeoutError as e:
                raise StreamBroke(f"no data from the server for {self.stream_idle_timeout:g} s") from e
            except openai.APIConnectionError as e:
                cause = exc_text(e.__cause__) if e.__cause__ is not None else e.message
                raise StreamBroke(f"connection broke mid-stream ({cause})") from e
            except openai.APIError as e:
                # An error payload inside a 200 stream.
                etype = e.type or e.code or "error"
                text = f"{etype}: {e.message}"
                if etype in _NOT_RETRYABLE_STREAM_ERRORS:
                    line = one_line(f"{_server(client)} error mid-stream ({text})")
                    raise refused(line, e.message, code=e.code) from e
                raise StreamBroke(text) from e
            except ValueError as e:
                raise StreamBroke(f"malformed stream ({exc_text(e)})") from e
        return assembler.finish()


# --------------------------------------------------------------------------- request


def build_chat_params(
    request: ModelRequest,
    model: str,
    *,
    max_tokens_param: MaxTokensParam = "max_tokens",
    include_usage: bool = True,
) -> dict[str, Any]:
    """Translate a neutral request into `chat.completions.create()` arguments (without `stream`).

    Args:
        request: The neutral request.
        model: The model id.
        max_tokens_param: Which field carries the output limit (`none`: no limit is sent).
        include_usage: Whether to ask for usage in the stream's last chunk.

    Returns:
        The keyword arguments: `model`, `messages`, and as needed `tools`, the output limit
        and `stream_options`.
    """
    messages: list[ChatCompletionMessageParam] = []
    if request.system.strip():
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_message_params(message))
    params: dict[str, Any] = {"model": model, "messages": messages}
    if request.tools:
        params["tools"] = [_tool_param(spec) for spec in request.tools]
    if max_tokens_param != "none":
        params[max_tokens_param] = request.max_tokens
    if include_usage:
        params["stream_options"] = {"include_usage": True}
    return params


def _message_params(message: Message) -> list[ChatCompletionMessageParam]:
    if message.role == "assistant":
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        calls: list[ChatCompletionMessageFunctionToolCallParam] = [
            {
                "id": b.id,
                "type": "function",
                "function": {"name": b.name, "arguments": json.dumps(b.input, ensure_ascii=False)},
            }
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        if not text.strip() and not calls:
            return []
        assistant: ChatCompletionAssistantMessageParam = {"role": "assistant"}
        assistant["content"] = text if text.strip() else None
        if calls:
            assistant["tool_calls"] = calls
        return [assistant]
    # A user message: tool results must directly follow the assistant's tool calls, so they go
    # first, as `tool` messages; any text follows as a user message.
    out: list[ChatCompletionMessageParam] = []
    texts: list[str] = []
    images: list[str] = []
    for block in message.content:
        match block:
            case ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error):
                body = content or "(no output)"
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": tool_use_id,
                        "content": f"Error: {body}" if is_error else body,
                    }
                )
            case TextBlock(text=text):
                if text.strip():
                    texts.append(text)
            case ImageBlock(media_type=media_type, data=data):
                images.append(f"data:{media_type};base64,{data}")
            case _:
                pass  # thinking has no chat-completions form; tool calls are not valid here
    if images:
        parts: list[ChatCompletionContentPartParam] = []
        if texts:
            parts.append({"type": "text", "text": "\n\n".join(texts)})
        for url in images:
            parts.append({"type": "image_url", "image_url": {"url": url}})
        out.append({"role": "user", "content": parts})
    elif texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _tool_param(spec: ToolSpec) -> ChatCompletionFunctionToolParam:
    schema = spec.input_schema or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": schema},
    }


# --------------------------------------------------------------------------- response


@dataclass(slots=True)
class _PendingCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=lambda: list[str]())


class _Assembler:
    """Accumulates one streamed completion (choice 0) into a `ModelResponse`."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.text: list[str] = []
        self.calls: dict[int, _PendingCall] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.reported = False
        """Whether a chunk carried the server's usage."""

    def add(self, chunk: ChatCompletionChunk, sink: StreamSink) -> None:
        if chunk.model:
            self.model = chunk.model
        if chunk.usage is not None:
            self.usage = _usage(chunk)
            self.reported = True
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            piece = delta.content or delta.refusal
            if piece:
                self.text.append(piece)
                sink.text(piece)
            for call in delta.tool_calls or ():
                slot = self.calls.setdefault(self._key(call), _PendingCall())
                if call.id and not slot.id:
                    slot.id = call.id
                function = call.function
                if function is not None:
                    if function.name and not slot.name:
                        slot.name = function.name
                    if function.arguments:
                        slot.arguments.append(function.arguments)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def _key(self, call: ChoiceDeltaToolCall) -> int:
        """The slot a tool-call delta belongs to.

        The API keys deltas by `index`. Some servers leave it out and send each call whole, in
        a chunk of its own: then a new id starts a new call and a delta without id continues
        the last one.
        """
        index: object = getattr(call, "index", None)
        if isinstance(index, int):
            return index
        if call.id:
            for key, slot in self.calls.items():
                if slot.id == call.id:
                    return key
            return max(self.calls, default=-1) + 1
        return max(self.calls, default=0)

    def usage_so_far(self, params: dict[str, Any]) -> Usage:
        """The usage of a call cut short: the server's if a chunk carried it, else an estimate.

        vLLM's continuous usage stats put it in every chunk; most servers send it only last.
        """
        if self.reported:
            return self.usage
        sent = json.dumps([params.get("messages"), params.get("tools")], ensure_ascii=False)
        received = "".join(self.text) + "".join(a for call in self.calls.values() for a in call.arguments)
        return Usage(input_tokens=estimate_tokens(sent), output_tokens=estimate_tokens(received))

    def finish(self) -> ModelResponse:
        if self.finish_reason is None:
            raise StreamBroke("stream ended before the finish reason")
        blocks: list[Block] = []
        invalid: dict[str, str] = {}
        text = "".join(self.text)
        if text:
            blocks.append(TextBlock(text))
        for n, index in enumerate(sorted(self.calls)):
            call = self.calls[index]
            if not call.name:
                raise StreamBroke("a streamed tool call had no function name")
            call_id = call.id or f"call_{n}"
            try:
                arguments, problem = _arguments(call)
            except StreamBroke as e:
                if self.finish_reason == "length":  # cut by the output limit: another try ends the same way
                    raise ProviderError(
                        one_line(f"the reply hit the output limit (max_tokens) inside a tool call: {e}")
                    ) from e
                raise
            if problem is not None:
                invalid[call_id] = problem
            blocks.append(ToolUseBlock(call_id, call.name, arguments))
        stop = _STOP_REASONS.get(self.finish_reason, self.finish_reason)
        if self.calls and stop == "end_turn":
            stop = "tool_use"  # some servers say `stop` after tool calls
        return ModelResponse(
            message=Message("assistant", tuple(blocks)),
            stop_reason=stop,
            usage=self.usage,
            model=self.model,
            invalid_tool_inputs=invalid,
        )


def _arguments(call: _PendingCall) -> tuple[dict[str, Any], str | None]:
    raw = "".join(call.arguments).strip()
    if not raw:
        return {}, None
    try:
        value: Any = json.loads(raw)
        if isinstance(value, str):  # some models double-encode the arguments
            value = json.loads(value)
    except ValueError as e:
        raise StreamBroke(
            f"model sent invalid JSON arguments for tool {call.name!r} ({e}): {clip(raw, 80)}"
        ) from e
    return tool_input_object(call.name, value)


def _usage(chunk: ChatCompletionChunk) -> Usage:
    usage = chunk.usage
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    prompt = usage.prompt_tokens or 0
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=usage.completion_tokens or 0,
        cache_read_input_tokens=cached,
    )


# --------------------------------------------------------------------------- errors


def _status_error_line(e: openai.APIStatusError, client: AsyncOpenAI, model: str, *, has_tools: bool) -> str:
    status = e.status_code
    message = _api_message(e)
    after = retried_after(e.response.request)
    where = _server(client)
    if has_tools and status in (400, 404, 422, 500, 501) and _NO_TOOLS.search(message):
        line = (
            f"model {model!r} at {_url(client)} has no native tool calling "
            f"({status}: {clip(message, 100)}); "
            "use a model with tool support, or enable it on the server "
            "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME; llama.cpp: --jinja)"
        )
    elif status == 401:
        line = (
            "authentication failed: check OPENAI_API_KEY or the profile's api_key_env "
            f"({where} 401: {message})"
        )
    elif status == 404 and "model" in message.lower():
        line = f"model {model!r} not found at {_url(client)}: {message}"
    elif status == 429:
        line = f"{where} rate limit (429){after}: {message}"
    else:
        line = f"{where} error {status}{after}: {message}"
    return one_line(line)


def _api_message(e: openai.APIStatusError) -> str:
    body: object = e.body
    if isinstance(body, str) and body.strip():
        return body
    if isinstance(body, dict):
        message = cast(dict[str, Any], body).get("message")
        if isinstance(message, str) and message:
            return message
    return e.message


def _url(client: AsyncOpenAI) -> str:
    return str(client.base_url).rstrip("/")


def _server(client: AsyncOpenAI) -> str:
    return f"OpenAI-compatible API at {_url(client)}"


def _is_local(client: AsyncOpenAI) -> bool:
    host = client.base_url.host
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")
