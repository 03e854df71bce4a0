"""Which strategy a prompt runs, and the strategy built from the session's parts.

Kept apart from `ChatSession` because it changes for its own reasons (a new strategy, a new
dependency of the turn), not with the conversation's life or the store's steps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui_assist.session.factory import EmptyToolbox

if TYPE_CHECKING:
    from tui_assist.core.approval import ApprovalPolicy
    from tui_assist.core.budget import SpendCheck
    from tui_assist.core.model import Provider
    from tui_assist.core.steering import Steering
    from tui_assist.core.tooling import ToolboxFactory
    from tui_assist.core.turn import TurnStrategy
    from tui_assist.session.config import Settings
    from tui_assist.session.context import ContextKeeper
    from tui_assist.session.goals import Goals
    from tui_assist.session.hooks import SessionHooks


TURN_MODULES = (
    "tui_assist.workflow",
    "tui_assist.core.agent",
    "tui_assist.core.turn",
    "tui_assist.turns.agent",
    "tui_assist.turns.refine",
    "tui_assist.session.mentions",
    "tui_assist.session.controller",
)
"""What a turn imports (the workflow engine, the agent loop, the strategies, the mentions, the turn
controller), in an order where each adds little (a module at a time, keys are handled between).
They stay out of start-up, for the first frame; a host imports them once its session has loaded,
so that the first prompt (and the prompt's first edit, for the mentions) doesn't wait for them."""


def strategy_name(prompt: str, *, refine: bool, goal: bool = False) -> str:
    """How `prompt` runs: `goal` (the pending goal's), `shell` for `!COMMAND`, else `refine` or `agent`."""
    if goal:
        return "goal"
    if prompt.startswith("!") and prompt[1:].strip():  # `turns.shell.is_shell_prompt`, without its imports
        return "shell"
    return "refine" if refine else "agent"


def build_strategy(
    prompt: str,
    *,
    settings: Settings,
    refine: bool,
    rounds: int,
    provider: Callable[[], Provider],
    toolbox_factory: ToolboxFactory | None,
    approvals: ApprovalPolicy,
    system_prompt: Callable[[], str],
    context: ContextKeeper,
    context_window: Callable[[], int],
    hooks: SessionHooks | None,
    before_side_effect: Callable[[], Awaitable[None]],
    model: str | None,
    goals: Goals,
    spend_cap: SpendCheck | None = None,
    steering: Steering | None = None,
) -> TurnStrategy:
    """The strategy `prompt` runs: the shell for `!COMMAND`, else agent or refine.

    Args:
        prompt: The prompt as typed.
        settings: The session's settings (budgets, the critic's prompt, compaction).
        refine: Whether a model prompt runs the refine loop.
        rounds: The refine loop's rounds.
        provider: The session's provider (raises `SetupError` when there is none; a shell command
            never asks).
        toolbox_factory: Makes each run's tools; None: no tools.
        approvals: The approval policy.
        system_prompt: Reads the system prompt, the project's instructions included (after the
            provider: a session without one reads no instruction files).
        context: The conversation's context keeper (compaction); given the provider here.
        context_window: The window of the model the turn runs on.
        hooks: The hooks that run, if any.
        before_side_effect: Awaited before a call that may change files (the snapshot).
        model: The model the turn's requests ask for; None: the session's.
        goals: The session's goals: the pending goal's prompt runs as its goal turn.
        spend_cap: Says why no further model request may go out (the conversation's spend cap).
        steering: Hands over the prompts that join the turn's agent (`core.steering`).
    """
    tools = toolbox_factory or (lambda: EmptyToolbox(settings.workdir))
    if strategy_name(prompt, refine=refine, goal=goals.applies(prompt)) == "shell":
        from tui_assist.turns.shell import ShellTurn

        return ShellTurn(tools, approvals)
    # The strategies pull in the whole agent loop: imported at the first turn, not at startup.
    from tui_assist.core.budget import Budget
    from tui_assist.core.turn import TurnDeps
    from tui_assist.turns.agent import AgentTurn
    from tui_assist.turns.refine import RefineTurn

    chosen = provider()
    context.provider = chosen
    context.compact_at = settings.compact_at
    context.spend_cap = spend_cap
    deps = TurnDeps(
        provider=chosen,
        toolbox_factory=tools,
        approvals=approvals,
        budget=Budget(
            settings.max_model_requests, settings.max_tool_calls, settings.max_tokens_per_turn, spend_cap
        ),
        system_prompt=system_prompt(),
        critic_prompt=settings.critic_prompt,
        context=context,
        before_side_effect=before_side_effect,
        model=model,
        steering=steering,
    )
    if hooks is not None:
        deps.hooks = hooks
    # The critic's whole request must fit the window too, beside its reply; `critic_message`
    # takes the system prompt out of this room itself.
    from tui_assist.core.critic import CRITIC_MAX_TOKENS

    room = context_window() - CRITIC_MAX_TOKENS
    if goals.applies(prompt):
        deps.steering = None  # its critic judges the goal as set: a prompt sent meanwhile waits
        return goals.strategy(deps, critic_max_input_tokens=max(1_000, room))
    if not refine:
        return AgentTurn(deps)
    return RefineTurn(deps, max_rounds=rounds, critic_max_input_tokens=max(1_000, room))
