"""The provider protocol: who the core talks to, in neutral types.

Providers stream one model call at a time. They own transport concerns (HTTP retries, retrying a
stream that broke mid-way) and report streamed text through a `StreamSink`; everything else
(tools, budgets, events) belongs to the core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

from tui_assist.core.conversation import Message, Usage

DEFAULT_REQUEST_TIMEOUT: Final = 120.0
"""Seconds a model request may wait for its response to begin, and a stream may stay silent."""


ThinkingSetting = Literal["off", "auto"] | int
"""Extended thinking: off, a budget the provider picks where the model supports it, or a
budget in tokens (at least `MIN_THINKING_BUDGET`)."""

MIN_THINKING_BUDGET: Final = 1024
"""The smallest thinking budget the Messages API accepts."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]
    native_type: str | None = None
    """A provider-defined versioned tool type (e.g. Anthropic's `bash_20250124`), if any."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 8192
    stable_prefix: int = 0
    """How many leading messages are stable history: a provider may cache up to there."""
    stable_blocks: int = 0
    """How many leading content blocks of the first message after the stable history are stable
    too (the critic's context and task, which every round repeats before its own evidence)."""
    cache_tail: bool = True
    """Whether the end of the request is worth caching: true in an agent loop, whose next call
    repeats it; false for a one-off request such as the critic's, which no later call extends."""
    model: str | None = None
    """The model this request asks for instead of the provider's (a custom sub-agent's `model`)."""
    thinking: bool = False
    """Whether the model may think first (when the provider is set up to): true for the agent
    loop's calls; the critic, compaction and other one-off calls never think."""


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What a finished model call produced."""

    message: Message
    stop_reason: str
    usage: Usage
    model: str
    invalid_tool_inputs: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    """Tool calls (by id) whose arguments were not a JSON object, with what was wrong: such a
    call's input is `{}` in the message (the API takes nothing else back), and the agent loop
    answers it with an error the model can correct."""


class StreamSink(Protocol):
    """Where a provider reports a call's progress while it streams."""

    def text(self, delta: str) -> None:
        """A piece of assistant text arrived."""
        ...

    def thinking(self, delta: str) -> None:
        """A piece of the model's extended thinking arrived."""
        ...

    def retrying(self, attempt: int, error: str) -> None:
        """The stream broke; text reported so far is void and the call starts again."""
        ...

    def usage(self, usage: Usage, model: str) -> None:
        """A call that will not return (it was cancelled) spent `usage`, as far as the API said.

        A call that returns reports its usage in its `ModelResponse` instead, never here.
        """
        ...


class ProviderError(Exception):
    """A model call failed for good (after retries). The message is one clear line for users."""


class ContextOverflow(ProviderError):
    """The request does not fit the model's context window ("prompt is too long").

    Providers raise it instead of a plain `ProviderError`, so the core can compact the history and
    retry without reading error texts.

    Args:
        message: One line for users.
        tokens: The request's size in tokens, when the provider said it.
        limit: The model's context window in tokens, when the provider said it.
    """

    def __init__(self, message: str, *, tokens: int | None = None, limit: int | None = None) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.limit = limit


class Provider(Protocol):
    """A model backend."""

    name: str
    model: str

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Run one streamed model call, retrying a stream that breaks mid-way.

        Args:
            request: What to send.
            sink: Receives text deltas, and `retrying(n, reason)` before retry n (1-based).

        Returns:
            The assistant message, stop reason, usage and model.

        Raises:
            ProviderError: when the call fails for good (after the provider's retries); the
                message is one line.
            asyncio.CancelledError: when the caller cancels; the stream is closed first.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """A provider that can count a request's input tokens exactly, without running it."""

    async def count_tokens(self, request: ModelRequest) -> int:
        """The input tokens `request` would use (system, tools and messages).

        Raises:
            ProviderError: when counting fails.
        """
        ...
