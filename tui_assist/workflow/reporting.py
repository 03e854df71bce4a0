"""Running a workflow so that every step reports through the core's observer.

`run_reporting` is the one entry point hosts use: the top step becomes a node under `parent_id`
(a turn's node, or none), and every step and combinator below reports `NodeStarted` and exactly
one `NodeFinished` (`done` / `failed` / `cancelled`) with its node and parent ids. The flow panel,
the store and tests all read the same events; `node_shape` folds them back into the composition
text, so a run of `a.then(b).then(c)` reads `Chain(Chain(a, b), c)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from tui_assist.core.events import NodeStarted, TurnEvent
from tui_assist.core.observer import TurnObserver
from tui_assist.workflow.step import Step, WorkflowBudget, WorkflowBudgetTracker, WorkflowContext

if TYPE_CHECKING:
    from tui_assist.core.model import Provider

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741

_KIND_NAMES = {
    "chain": "Chain",
    "route": "Route",
    "parallel": "Parallel",
    "orchestrator": "OrchestratorWorkers",
    "refine": "Refine",
}


async def run_reporting(
    step: Step[I, O],
    input: I,
    observer: TurnObserver | None,
    *,
    budget: WorkflowBudget | WorkflowBudgetTracker | None = None,
    provider: Provider | None = None,
    parent_id: str | None = None,
) -> O:
    """Run a workflow, reporting each step's node to `observer`.

    Args:
        step: The workflow (any step or combinator).
        input: Its input.
        observer: Where node events go; `None` runs the same steps with no events at all.
        budget: The run's limits (steps, model requests, tokens), or a tracker to share; pass a
            tracker to read what the run spent afterwards.
        provider: The model backend for model-backed leaves.
        parent_id: The node the workflow's node hangs under, if any.

    Returns:
        The workflow's output.

    Raises:
        BudgetExhausted: when a step or model call would cross the budget (checked before it).
        RouteError: when a route's classifier returns a label outside its set.
        asyncio.CancelledError: when the run is cancelled; every open node reports `cancelled`.
    """
    ctx = WorkflowContext.root(observer, budget=budget, provider=provider, parent_id=parent_id)
    return await ctx.run(step, input)


def node_shape(events: Iterable[TurnEvent], root_id: str | None = None) -> str:
    """The composition a run's node events describe, as text.

    Combinator nodes read `Kind(child, ...)`, other nodes with children `label(child, ...)`, and
    leaves their label, children in start order: `Chain(Chain(a, b), c)`.

    Args:
        events: A run's events (others are ignored).
        root_id: The node to start from; the first started node by default.

    Returns:
        The shape, or an empty string when no node started.
    """
    started: dict[str, NodeStarted] = {}
    children: dict[str | None, list[str]] = {}
    for event in events:
        if isinstance(event, NodeStarted):
            started[event.node_id] = event
            children.setdefault(event.parent_id, []).append(event.node_id)
    if not started:
        return ""
    root = root_id if root_id is not None else next(iter(started))

    def shape(node_id: str) -> str:
        node = started[node_id]
        kids = children.get(node_id, [])
        if not kids:
            return node.label
        name = _KIND_NAMES.get(node.node_kind, node.label)
        return f"{name}({', '.join(shape(kid) for kid in kids)})"

    return shape(root)
