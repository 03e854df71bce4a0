"""Budgets: limits checked before each spend, never only at the end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tui_assist.core.conversation import Usage

SpendCheck = Callable[[], str | None]
"""Why no further model request may go out (the conversation's spend cap is reached), or None.

The host owns the prices and the meter; the core only asks before each request."""


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for one turn (its rounds and sub-agents included). `None` means unlimited."""

    max_model_requests: int | None = 60
    max_tool_calls: int | None = 200
    max_tokens: int | None = None
    spend_cap: SpendCheck | None = None
    """Asked before every model request (sub-agents, critic, compaction included); None: no cap."""


class BudgetExhausted(Exception):
    """A spend would cross the budget; the message names the limit."""


class SpendCapReached(BudgetExhausted):
    """The conversation's cost reached its spend cap: the turn ends with outcome `budget`."""


def stop_outcome(stop: BudgetExhausted) -> Literal["budget", "budget_exhausted"]:
    """The outcome a budget stop ends a run with: `budget` for the spend cap."""
    return "budget" if isinstance(stop, SpendCapReached) else "budget_exhausted"


def check_spend(check: SpendCheck | None) -> None:
    """Refuse a model request once the spend cap is reached.

    Raises:
        SpendCapReached: with the line that says so.
    """
    reached = check() if check is not None else None
    if reached is not None:
        raise SpendCapReached(reached)


class BudgetTracker:
    """Counts what a turn spends and refuses a spend that the budget no longer allows."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.model_requests = 0
        self.tool_calls = 0
        self.usage = Usage()
        self.spend_stopped = False
        """Whether the spend cap refused a request (the turn's outcome is then `budget`)."""

    def before_model_request(self) -> None:
        """Charge one model request.

        Raises:
            BudgetExhausted: if the request or token limit is already reached.
            SpendCapReached: if the conversation's cost reached the spend cap.
        """
        try:
            check_spend(self.budget.spend_cap)
        except SpendCapReached:
            self.spend_stopped = True
            raise
        limit = self.budget.max_model_requests
        if limit is not None and self.model_requests >= limit:
            raise BudgetExhausted(f"model-request budget of {limit} reached")
        tokens = self.budget.max_tokens
        if tokens is not None and self.usage.total_tokens >= tokens:
            raise BudgetExhausted(f"token budget of {tokens} reached ({self.usage.total_tokens} used)")
        self.model_requests += 1

    def before_tool_call(self) -> None:
        """Charge one tool call.

        Raises:
            BudgetExhausted: if the tool-call limit is already reached.
        """
        limit = self.budget.max_tool_calls
        if limit is not None and self.tool_calls >= limit:
            raise BudgetExhausted(f"tool-call budget of {limit} reached")
        self.tool_calls += 1

    def record(self, usage: Usage) -> None:
        """Add the usage of a finished model call."""
        self.usage = self.usage + usage
