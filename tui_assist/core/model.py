"""The provider protocol: who the core talks to, in neutral types.

Providers stream one model call at a time. They own transport concerns (HTTP retries, retrying a
stream that broke mid-way) and report streamed text through a `StreamSink`; everything else
(tools, budgets, events) belongs to the core.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from tui_assist.core.conversation import Message, Usage

DEFAULT_REQUEST_TIMEOUT: Final = 120.0
"""Seconds a model request may wait for its response to begin, and a stream may stay silent."""


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


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What a finished model call produced."""

    message: Message
    stop_reason: str
    usage: Usage
    model: str


class StreamSink(Protocol):
    """Where a provider reports a call's progress while it streams."""

    def text(self, delta: str) -> None:
        """A piece of assistant text arrived."""
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


class Provider(Protocol):
    """A model backend."""

    name: str
    model: str

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Run one streamed model call.

        Raises:
            ProviderError: when the call fails after the provider's retries.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
