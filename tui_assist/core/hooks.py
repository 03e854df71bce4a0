"""The port through which the agent loop runs the user's hooks around tool calls and its answer.

The loop decides *when* a hook point is reached (before a tool runs, when its approval would ask,
after it ran, around a sub-agent, when the model is about to give its answer); what runs there,
and how, is the host's (`session/hooks.py` runs the user's commands). The default does nothing,
so a test or a flow that has no hooks never pays for them. Sub-agents run through the same loop
and so get the same hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tui_assist.core.observer import TurnObserver

MAX_STOP_CONTINUES = 3
"""How often a `Stop` (or `SubagentStop`) hook may send the model back to work within one agent run."""


@dataclass(frozen=True, slots=True)
class HookedCall:
    """A tool call as hooks see it."""

    name: str
    input: dict[str, Any]
    node_id: str
    """The tool call's node: a hook's own node hangs under it."""
    mcp_server: str | None = None
    """For an MCP tool: its server (hooks call it `mcp__SERVER__TOOL`)."""
    mcp_tool: str | None = None
    """For an MCP tool: its name on the server."""
    call_id: str = ""
    """The model's id for the call (hooks get it as `tool_use_id`, to pair `PreToolUse` and `PostToolUse`)."""


@dataclass(frozen=True, slots=True)
class ToolGate:
    """What the `PreToolUse` hooks decided about a call."""

    refusal: str | None = None
    """Why it is refused (the model gets that as the tool result); None lets it go on."""
    permission: Literal["allow", "ask"] | None = None
    """`allow`: no approval dialog (deny rules still apply); `ask`: the dialog even if a rule allows."""
    updated_input: dict[str, Any] | None = None
    """The input to run instead, in this tool's names."""


GO_ON = ToolGate()
"""The gate that lets a call go on as the policy decides."""


@dataclass(frozen=True, slots=True)
class HookPermission:
    """What a `PermissionRequest` hook answered in place of the person."""

    allowed: bool
    message: str = ""
    """When denied: why, for the model."""


class HookStop(Exception):
    """A hook said `"continue": false`: the turn ends after this call, `reason` shown to the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ToolHooks(Protocol):
    """What the agent loop asks at its hook points; every answer None (or `GO_ON`) means "go on".

    `before_tool` and `after_tool` may raise `HookStop`: the loop then ends the run after the call.
    """

    async def before_tool(self, call: HookedCall, observer: TurnObserver) -> ToolGate:
        """Before `call` runs (and before it is put to the approval policy)."""
        ...

    async def permission_request(self, call: HookedCall, observer: TurnObserver) -> HookPermission | None:
        """The approval policy is about to ask the person about `call`.

        Returns:
            The answer in the person's place, or None to ask.
        """
        ...

    async def after_tool(
        self, call: HookedCall, output: str, is_error: bool, observer: TurnObserver
    ) -> str | None:
        """After `call` ran (`is_error`: it failed).

        Returns:
            None, or text for the model, appended to the tool result.
        """
        ...

    async def subagent_start(self, call: HookedCall, agent_type: str, observer: TurnObserver) -> str | None:
        """A sub-agent of type `agent_type` starts for the `agent` call `call`.

        Returns:
            None, or context for the sub-agent, added to its task.
        """
        ...

    async def before_answer(
        self,
        answer: str,
        node_id: str,
        observer: TurnObserver,
        *,
        agent_type: str | None = None,
        again: bool = False,
    ) -> str | None:
        """An agent is about to return `answer` (its hook nodes hang under `node_id`).

        Args:
            answer: What it would return.
            node_id: Its node.
            observer: Where hook nodes are reported.
            agent_type: None for the top-level agent (`Stop`), else the sub-agent's type (`SubagentStop`).
            again: Whether a hook already sent it back to work in this run.

        Returns:
            None to return it, else the next instruction: the model goes on with it.
        """
        ...


class NoHooks:
    """The `ToolHooks` that runs nothing."""

    async def before_tool(self, call: HookedCall, observer: TurnObserver) -> ToolGate:
        """Every call goes on."""
        return GO_ON

    async def permission_request(self, call: HookedCall, observer: TurnObserver) -> HookPermission | None:
        """The person is asked."""
        return None

    async def after_tool(
        self, call: HookedCall, output: str, is_error: bool, observer: TurnObserver
    ) -> str | None:
        """Nothing is added."""
        return None

    async def subagent_start(self, call: HookedCall, agent_type: str, observer: TurnObserver) -> str | None:
        """Nothing is added."""
        return None

    async def before_answer(
        self,
        answer: str,
        node_id: str,
        observer: TurnObserver,
        *,
        agent_type: str | None = None,
        again: bool = False,
    ) -> str | None:
        """The answer stands."""
        return None


NO_HOOKS = NoHooks()
"""The shared no-op hooks (it holds no state)."""


def with_context(prompt: str, context: str, event: str) -> str:
    """`prompt` with what a hook said added as a reminder the model sees."""
    if not context.strip():
        return prompt
    return f'{prompt}\n\n<hook-context event="{event}">\n{context.strip()}\n</hook-context>'
