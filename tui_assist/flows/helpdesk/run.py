# pyright: strict
"""Running the benchmark: one pattern on one ticket, every pattern on every ticket, and the report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from tui_assist.core.model import Provider
from tui_assist.core.observer import TurnObserver
from tui_assist.core.text import clip
from tui_assist.flows.helpdesk.patterns import PATTERN_NAMES, PATTERNS, Leaves, PatternName, build_pattern
from tui_assist.flows.helpdesk.tickets import Ticket, load_tickets
from tui_assist.workflow import Step, WorkflowBudget, WorkflowBudgetTracker, run_reporting


@dataclass(frozen=True, slots=True)
class TicketResult:
    """One pattern's result on one ticket."""

    pattern: PatternName
    ticket: int
    expected: str
    got: str
    """The team assigned, or `error`."""
    correct: bool
    steps: int
    """Steps the run started (leaves and combinators)."""
    detail: str
    error: str | None = None

    def to_dict(self, leaves: Leaves) -> dict[str, Any]:
        """A JSON-ready row."""
        return {
            "leaves": leaves,
            "pattern": self.pattern,
            "ticket": self.ticket,
            "expected": self.expected,
            "got": self.got,
            "correct": self.correct,
            "steps": self.steps,
            "detail": self.detail,
            "error": self.error,
        }


async def run_pattern(
    name: PatternName,
    ticket: Ticket,
    observer: TurnObserver | None = None,
    *,
    leaves: Leaves = "rules",
    provider: Provider | None = None,
    workflow: Step[Ticket, Any] | None = None,
    parent_id: str | None = None,
) -> TicketResult:
    """Run one pattern on one ticket and judge the result.

    A route's invalid label, an unparseable model reply or an exhausted budget is a failed
    result (`got="error"`), not an exception; provider failures and cancellation propagate.

    Args:
        name: The pattern.
        ticket: The ticket.
        observer: Where node events go (`None`: no events).
        leaves: `rules` or `model`.
        provider: The model backend for `model` leaves.
        workflow: A prebuilt `build_pattern(name, leaves)` to reuse across tickets.
        parent_id: The node the run hangs under, if any.

    Returns:
        The result.
    """
    from tui_assist.core.budget import BudgetExhausted

    pattern = PATTERNS[name]
    flow = workflow if workflow is not None else pattern.build(leaves)
    tracker = WorkflowBudgetTracker(WorkflowBudget(max_steps=500, max_model_requests=50))
    try:
        output = await run_reporting(
            flow, ticket, observer, budget=tracker, provider=provider, parent_id=parent_id
        )
    except (ValueError, BudgetExhausted) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return TicketResult(name, ticket.id, ticket.category, "error", False, tracker.steps, message, message)
    verdict = pattern.read(output, ticket, leaves)
    correct = verdict.acceptable and verdict.team == ticket.category
    return TicketResult(
        name, ticket.id, ticket.category, verdict.team, correct, tracker.steps, verdict.detail
    )


async def run_benchmark(
    *,
    leaves: Leaves = "rules",
    provider: Provider | None = None,
    tickets: Sequence[Ticket] | None = None,
    patterns: Sequence[PatternName] = PATTERN_NAMES,
) -> list[TicketResult]:
    """Run every pattern on every ticket, one at a time, in order.

    Args:
        leaves: `rules` or `model`.
        provider: The model backend for `model` leaves.
        tickets: The tickets (the packaged twelve by default).
        patterns: The patterns to run.

    Returns:
        One result per pattern and ticket, pattern by pattern.
    """
    results: list[TicketResult] = []
    for name in patterns:
        flow = build_pattern(name, leaves)
        for ticket in tickets if tickets is not None else load_tickets():
            results.append(await run_pattern(name, ticket, leaves=leaves, provider=provider, workflow=flow))
    return results


def format_report(results: Sequence[TicketResult], source: str, leaves: Leaves = "rules") -> str:
    """The benchmark's text report: a summary per pattern, then each ticket's result.

    Args:
        results: `run_benchmark`'s results.
        source: What the leaves were (printed in the heading).
        leaves: Which leaves ran (picks each pattern's description).

    Returns:
        The report, ending with a newline; the same results always give the same text.
    """
    by_pattern: dict[str, list[TicketResult]] = {}
    for result in results:
        by_pattern.setdefault(result.pattern, []).append(result)
    tickets = len({r.ticket for r in results})

    def how(name: str) -> str:
        pattern = PATTERNS[cast(PatternName, name)]
        return pattern.model_summary if leaves == "model" and pattern.model_summary else pattern.summary

    lines = [f"help-desk benchmark: {tickets} tickets, {source}", ""]
    lines.append(f"{'pattern':<14}{'correct':>8}{'steps':>7}  how")
    for name, rows in by_pattern.items():
        correct = f"{sum(r.correct for r in rows)}/{len(rows)}"
        lines.append(f"{name:<14}{correct:>8}{sum(r.steps for r in rows):>7}  {how(name)}")
    for name, rows in by_pattern.items():
        lines += ["", f"{name}: {how(name)}"]
        lines.append(f"  {'ticket':<7}{'expected':<10}{'got':<10}{'ok':<4}{'steps':>5}  detail")
        for r in rows:
            mark = "✓" if r.correct else "✗"
            lines.append(
                f"  {'#' + str(r.ticket):<7}{r.expected:<10}{r.got:<10}{mark:<4}{r.steps:>5}"
                f"  {clip(r.detail, 72, fold=False)}"
            )
    return "\n".join(lines) + "\n"
