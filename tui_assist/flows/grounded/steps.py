# pyright: strict
"""The grounded flow's composition (see `tui_assist.flows.grounded`): its routes and its top node.

Every leaf is a `Step` over the one `FlowState`, composed here with the engine's `Chain` and
`Route` (plus the bounded `RetrievalLoop`), so each step is a node the flow panel draws. The
leaves live in `classify`, `retrieval` (the docs route), `query_data` (the data route) and
`finish`; model calls go through `model_calls`, which checks the token budget before the spend.
"""

from __future__ import annotations

from typing import Any

from tui_assist.core.budget import BudgetExhausted
from tui_assist.flows.grounded.base import GroundedDeps, StateStep
from tui_assist.flows.grounded.classify import ClassifyStep, DeclineStep
from tui_assist.flows.grounded.finish import CheckApprovalStep, CheckCitationsStep, HoldStep, ReleaseStep
from tui_assist.flows.grounded.query_data import QueryDataStep
from tui_assist.flows.grounded.retrieval import (
    AnswerStep,
    NoDocumentsStep,
    RephraseStep,
    RetrievalLoop,
    RetrieveStep,
)
from tui_assist.flows.grounded.state import FLOW_NAME, FlowState, RouteLabel
from tui_assist.workflow import Chain, Route, Step, WorkflowContext


class _Branch(StateStep):
    """One route branch: records its label as the state's route, then runs its body."""

    __slots__ = ("body", "route")

    def __init__(self, route: RouteLabel, body: Step[FlowState, FlowState]) -> None:
        super().__init__(route)
        self.route: RouteLabel = route
        self.body = body

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The branch's body."""
        return (self.body,)

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Record the route and run the body."""
        input.route = self.route
        return await ctx.run(self.body, input)


class _Relevant(Step[FlowState, str]):
    """`found` when retrieval returned passages, else `none`."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("relevant?")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label."""
        return "found" if input.passages else "none"


class _Drafted(Step[FlowState, str]):
    """`drafted` when the data route produced a draft, `ended` when it already ended the run."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("drafted?")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label."""
        return "ended" if input.outcome is not None else "drafted"


class _Stop(StateStep):
    """Pass an ended run through unchanged."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("stop")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Nothing to do: the outcome is set."""
        ctx.outcome = input.outcome
        return input


class _NeedsApproval(Step[FlowState, str]):
    """`hold` when an approval rule matched, else `release`."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("needs approval?")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label."""
        return "hold" if input.needs_approval and not input.approved else "release"


class GroundedFlow(StateStep):
    """The flow's top node (kind `flow`): runs the body and turns a budget stop into an outcome."""

    __slots__ = ("body",)
    node_kind = "flow"

    def __init__(self, body: Step[FlowState, FlowState], *, label: str = FLOW_NAME) -> None:
        super().__init__(label)
        self.body = body

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The flow's body."""
        return (self.body,)

    def summarize_input(self, value: FlowState) -> str:
        """The question."""
        return value.question

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Run the body; a budget stop ends the run `budget_exhausted` (a stop, not a failure)."""
        try:
            await ctx.run(self.body, input)
        except BudgetExhausted as exc:
            input.outcome = "budget_exhausted"
            input.note = str(exc)
        ctx.outcome = input.outcome
        return input


def build_grounded_flow(
    deps: GroundedDeps, *, classifier: Step[FlowState, str] | None = None
) -> GroundedFlow:
    """The grounded flow, composed from the engine's combinators.

    Args:
        deps: The index, the data source, the glossary, the config and the kind of leaves.
        classifier: A classifier to use instead of `ClassifyStep` (tests use it to return labels
            outside the closed set).

    Returns:
        The flow's top step; run it with `run_grounded` (or `run_reporting` on a `FlowState`).
    """
    config = deps.config
    release = Route(_NeedsApproval(), {"hold": HoldStep(), "release": ReleaseStep()}, label="approval")
    finish: Step[FlowState, FlowState] = Chain(
        CheckCitationsStep(), Chain(CheckApprovalStep(config.approval_rules), release), label="finish"
    )
    docs = _Branch(
        "docs",
        Chain(
            RetrievalLoop(RetrieveStep(deps), RephraseStep(deps), config.max_attempts),
            Route(
                _Relevant(),
                {"found": Chain(AnswerStep(deps), finish), "none": NoDocumentsStep(deps)},
                label="relevance",
            ),
        ),
    )
    data = _Branch(
        "data",
        Chain(
            QueryDataStep(deps), Route(_Drafted(), {"drafted": finish, "ended": _Stop()}, label="drafted?")
        ),
    )
    route = Route(
        classifier or ClassifyStep(deps),
        {"docs": docs, "data": data},
        fallback=_Branch("unsupported", DeclineStep()),
        fallback_label="unsupported",
        label="route",
    )
    return GroundedFlow(route)
