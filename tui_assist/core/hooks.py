"""The port through which the agent loop runs the user's hooks around tool calls and its answer.

The loop decides *when* a hook point is reached (before a tool runs, after it ran, when the
model is about to give its answer); what runs there, and how, is the host's (`session/hooks.py`
runs the user's commands). The default does nothing, so a test or a flow that has no hooks never
pays for them. Sub-agents run through the same loop and so get the same hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from tui_assist.core.observer import TurnObserver

MAX_STOP_CONTINUES = 3
"""How often a `Stop` hook may send the model back to work within one agent run."""


@dataclass(frozen=True, slots=True)
class HookedCall:
    """A tool call as hooks see it."""

    name: str
    input: dict[str, Any]
    node_id: str
    """The tool call's node: a hook's own node hangs under it."""


class ToolHooks(Protocol):
    """What the agent loop asks at its hook points; every answer None means "go on"."""

    async def before_tool(self, call: HookedCall, observer: TurnObserver) -> str | None:
        """Before `call` runs (and before it is put to the approval policy).

        Returns:
            None to let it run, else why it is refused: the model gets that as the tool result.
        """
        ...

    async def after_tool(
        self, call: HookedCall, output: str, is_error: bool, observer: TurnObserver
    ) -> str | None:
        """After `call` ran.

        Returns:
            None, or text for the model, appended to the tool result.
        """
        ...

    async def before_answer(self, answer: str, node_id: str, observer: TurnObserver) -> str | None:
        """The top-level agent is about to return `answer` (its hook nodes hang under `node_id`).

        Returns:
            None to return it, else the next instruction: the model goes on with it.
        """
        ...


class NoHooks:
    """The `ToolHooks` that runs nothing."""

    async def before_tool(self, call: HookedCall, observer: TurnObserver) -> str | None:
        """Every call runs."""
        return None

    async def after_tool(
        self, call: HookedCall, output: str, is_error: bool, observer: TurnObserver
    ) -> str | None:
        """Nothing is added."""
        return None

    async def before_answer(self, answer: str, node_id: str, observer: TurnObserver) -> str | None:
        """The answer stands."""
        return None


NO_HOOKS = NoHooks()
"""The shared no-op hooks (it holds no state)."""
