"""The `TurnStrategy` base class and what every strategy returns.

A strategy runs one user request against a conversation and reports through an observer. The
host (TUI, headless CLI, test) picks the strategy and calls `run`; nothing else changes between
them. A strategy implements `play`, which gets the request as one `TurnRequest`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tui_assist.core.agent import AgentRuntime
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.budget import Budget, BudgetTracker
from tui_assist.core.context import ContextGuard
from tui_assist.core.conversation import Conversation, ImageBlock, Message, Usage
from tui_assist.core.events import GoalCheck, GoalState, Verdict
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.hooks import NO_HOOKS, ToolHooks
from tui_assist.core.model import Provider
from tui_assist.core.observer import TurnObserver
from tui_assist.core.prompts import CRITIC_PROMPT, PLAN_MODE_SUFFIX, SYSTEM_PROMPT
from tui_assist.core.steering import Steering
from tui_assist.core.tooling import Toolbox, ToolboxFactory

StrategyName = Literal["agent", "refine", "shell", "goal"]
Outcome = Literal["answered", "unverified", "budget_exhausted", "budget", "cancelled", "error"]


@dataclass(slots=True)
class RoundRecord:
    """One refine round, kept for review and the store; never replayed into later turns."""

    index: int
    answer: str
    verdict: Verdict
    feedback: str
    evidence: list[ToolCallRecord]
    transcript: list[Message]
    """What the generator saw and added, in order."""
    usage: Usage
    """Generator and critic together."""
    critic_usage: Usage = field(default_factory=Usage)

    @property
    def tool_calls(self) -> int:
        """How many tool calls the round made, sub-agents included."""
        return len(self.evidence)


@dataclass(frozen=True, slots=True)
class GoalReport:
    """How a goal ended: its state, the attempts it made, and its checks as they last ran."""

    state: GoalState
    attempts: int
    checks: tuple[GoalCheck, ...] = ()


@dataclass(slots=True)
class TurnResult:
    """The outcome of one turn."""

    turn_id: str
    strategy: StrategyName
    prompt: str
    answer: str
    outcome: Outcome
    usage: Usage
    history: list[Message]
    """What this turn added to the conversation history (empty when it failed)."""
    rounds: list[RoundRecord] = field(default_factory=lambda: list[RoundRecord]())
    evidence: list[ToolCallRecord] = field(default_factory=lambda: list[ToolCallRecord]())
    error: str | None = None
    duration: float = 0.0
    goal: GoalReport | None = None
    """For a goal's turn: how the goal ended (its attempts are the `rounds`)."""

    @property
    def tool_calls(self) -> int:
        """Tool calls of the whole turn (all rounds, sub-agents included)."""
        return len(self.evidence) + sum(r.tool_calls for r in self.rounds)


@dataclass(slots=True)
class TurnDeps:
    """What strategies need from the host besides the observer."""

    provider: Provider
    toolbox_factory: ToolboxFactory
    approvals: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    budget: Budget = field(default_factory=Budget)
    system_prompt: str = SYSTEM_PROMPT
    """May hold `{workdir}`, filled in from the toolbox."""
    critic_prompt: str = CRITIC_PROMPT
    max_depth: int = 2
    max_tokens: int = 8192
    context: ContextGuard | None = None
    """Keeps every request of the turn (generators and sub-agents included) inside the window."""
    hooks: ToolHooks = NO_HOOKS
    """The user's hooks around every tool call of the turn (sub-agents' included) and its answer."""
    before_side_effect: Callable[[], Awaitable[None]] | None = None
    """Awaited before each tool call that may change files: the host's snapshot of the workdir
    gates them, and nothing else (see `core.agent`)."""
    model: str | None = None
    """The model the turn's requests ask for (a custom command's `model`); None: the provider's."""
    steering: Steering | None = None
    """Prompts the user sent while the turn runs, joining its agent's next request (`core.steering`)."""

    def runtime(self, toolbox: Toolbox, observer: TurnObserver, budget: BudgetTracker) -> AgentRuntime:
        """An agent runtime over one toolbox, with fresh evidence (told of plan mode when it is on)."""
        system = self.system_prompt.replace("{workdir}", str(Path(toolbox.workdir)))
        if self.approvals.mode == "plan":
            system += PLAN_MODE_SUFFIX
        return AgentRuntime(
            provider=self.provider,
            toolbox=toolbox,
            observer=observer,
            approvals=self.approvals,
            budget=budget,
            system=system,
            max_depth=self.max_depth,
            max_tokens=self.max_tokens,
            context=self.context,
            hooks=self.hooks,
            before_side_effect=self.before_side_effect,
            model=self.model,
            steering=self.steering,
        )


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What a host asks of a turn: a prompt against a conversation."""

    conversation: Conversation
    prompt: str
    turn_id: str | None = None
    """The turn node's id; None gives it a fresh one."""
    images: Sequence[ImageBlock] = ()
    """Attached to the prompt's message, before its text."""


class TurnStrategy(ABC):
    """One way to run a turn: hosts call `run`, a strategy implements `play`."""

    name: StrategyName

    async def run(
        self,
        conversation: Conversation,
        prompt: str,
        observer: TurnObserver,
        *,
        turn_id: str | None = None,
        images: Sequence[ImageBlock] = (),
    ) -> TurnResult:
        """Run the turn; on success append its history to `conversation`.

        `images` are attached to the prompt's message (before its text).

        Provider failures end as `outcome="error"`; cancellation propagates as
        `asyncio.CancelledError` after every open node has reported `cancelled`.
        """
        return await self.play(TurnRequest(conversation, prompt, turn_id, images), observer)

    @abstractmethod
    async def play(self, request: TurnRequest, observer: TurnObserver) -> TurnResult:
        """Run the turn `request` asks for, as `run` describes."""


class Stopwatch:
    """Measures a turn's duration."""

    def __init__(self) -> None:
        self._start = time.monotonic()

    @property
    def elapsed(self) -> float:
        """Seconds since creation."""
        return time.monotonic() - self._start
