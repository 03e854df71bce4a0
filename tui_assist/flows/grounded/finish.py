# pyright: strict
"""How every answering branch finishes: citations checked, approval rules applied, then hold or release."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tui_assist.flows.grounded.base import StateStep
from tui_assist.flows.grounded.state import ApprovalRule, FlowState
from tui_assist.workflow import WorkflowContext

_CITATION = re.compile(r"(?<![\w#-])([a-z0-9][a-z0-9-]*#c\d{4}|sql#\d+)\b")


def cited_ids(text: str) -> list[str]:
    """The chunk ids (`doc#c0001`) and query ids (`sql#1`) a text cites, first citation first.

    Args:
        text: An answer.

    Returns:
        The distinct ids.
    """
    return list(dict.fromkeys(_CITATION.findall(text)))


class CheckCitationsStep(StateStep):
    """Cross the draft's citations against what was actually retrieved; flag an uncited draft."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("check citations")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `citations`, `invalid_citations` and `citations_flagged`."""
        retrieved = set(input.retrieved_ids)
        cited = cited_ids(input.draft)
        input.citations = [c for c in cited if c in retrieved]
        input.invalid_citations = [c for c in cited if c not in retrieved]
        input.citations_flagged = not input.citations
        ctx.outcome = "flagged" if input.citations_flagged else "grounded"
        ctx.output = f"{len(input.citations)} valid, {len(input.invalid_citations)} not retrieved"
        return input


class CheckApprovalStep(StateStep):
    """Apply the approval rules to the question and the draft."""

    __slots__ = ("rules",)

    def __init__(self, rules: Sequence[ApprovalRule]) -> None:
        super().__init__("approval rules")
        self.rules = tuple(rules)

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `needs_approval` and `approval_reasons`."""
        input.approval_reasons = [rule.name for rule in self.rules if rule.matches(input)]
        input.needs_approval = bool(input.approval_reasons)
        ctx.output = ", ".join(input.approval_reasons) or "none matched"
        return input


class HoldStep(StateStep):
    """Stop the run until a person approves it: the draft stays a draft."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("hold for approval")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set the outcome `awaiting_approval`."""
        input.outcome = "awaiting_approval"
        input.note = f"held by approval rule(s): {', '.join(input.approval_reasons)}"
        ctx.outcome = input.outcome
        return input


class ReleaseStep(StateStep):
    """Release the draft as the answer: `answered`, or `unverified` when its citations were flagged."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("release")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `answer` and the outcome."""
        input.answer = input.draft
        input.outcome = "unverified" if input.citations_flagged else "answered"
        if input.citations_flagged:
            input.note = "the answer cites nothing that was retrieved"
        ctx.outcome = input.outcome
        return input
