"""The context port: what the agent loop asks before each model request, so a request fits the window.

The loop itself knows nothing about windows, summaries or where they are kept: before every
request it hands the request to a `ContextGuard` and sends what comes back, and after every
top-level response it reports the input size the provider measured. The host (the session)
implements the guard; it may rewrite the history part of the request (a summary instead of old
turns, old tool results cut), never what the loop keeps or what the store holds.

`ModelRequest.stable_prefix` tells the guard where the conversation history ends: the messages
before it are earlier turns; the rest belong to the running turn (or to a sub-agent, whose
requests carry no history).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from tui_assist.core.conversation import Usage
from tui_assist.core.model import ContextOverflow, ModelRequest
from tui_assist.core.observer import TurnObserver


@dataclass(frozen=True, slots=True)
class FittedRequest:
    """A request made to fit the context window, and what making it fit cost."""

    request: ModelRequest
    usage: Usage = field(default_factory=Usage)
    """Tokens spent on the way (a summarising model call); zero when none was made."""


class ContextGuard(Protocol):
    """Keeps the requests of a conversation inside the model's context window."""

    async def fit(
        self,
        request: ModelRequest,
        observer: TurnObserver,
        parent_id: str,
        *,
        overflow: ContextOverflow | None = None,
    ) -> FittedRequest:
        """The request to send instead of `request`: the same, or with its history compacted.

        Args:
            request: What the loop would send.
            observer: Where a compaction reports itself (a `compact` node under `parent_id`).
            parent_id: The node of the run that makes the request.
            overflow: Set when the provider refused the request as too long: compact now, whatever
                the estimate said.

        Returns:
            The request to send, and the usage of any model call made to compact.

        Raises:
            ContextOverflow: when `overflow` is set and nothing more can be compacted.
            ProviderError: when the summarising call fails while `overflow` is set.
        """
        ...

    def measured(self, request: ModelRequest, usage: Usage) -> None:
        """Report the input the provider measured for a request `fit` returned (top-level runs only)."""
        ...
