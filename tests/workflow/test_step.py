from __future__ import annotations

import pytest

from tests.workflow.helpers import assert_balanced, finished, started, status_by_label
from tui_assist.core.budget import BudgetExhausted, BudgetTracker
from tui_assist.core.observer import NullObserver, RecordingObserver
from tui_assist.workflow import (
    Chain,
    FunctionStep,
    Step,
    WorkflowBudget,
    WorkflowBudgetTracker,
    WorkflowContext,
    node_shape,
    run_reporting,
    step,
    summarize,
)


@step
async def a(x: int) -> int:
    return x + 1


@step
async def b(x: int) -> int:
    return x * 10


@step
async def c(x: int) -> str:
    return f"<{x}>"


async def test_step_decorator_makes_a_labelled_step() -> None:
    @step(label="shout")
    async def upper(text: str) -> str:
        return text.upper()

    assert isinstance(a, FunctionStep) and a.label == "a"
    assert upper.label == "shout"
    assert await run_reporting(upper, "hi", RecordingObserver()) == "HI"


async def test_a_leaf_reports_one_node_with_its_input_and_output() -> None:
    observer = RecordingObserver()
    assert await run_reporting(a, 41, observer, parent_id="turn-1") == 42
    assert observer.kinds == ["node_started", "node_finished"]
    (start,) = started(observer.events)
    assert (start.node_kind, start.label, start.parent_id, start.detail) == ("step", "a", "turn-1", "41")
    end = finished(observer.events)[start.node_id]
    assert (end.status, end.output, end.error) == ("done", "42", None)


async def test_then_nests_to_the_left_and_the_tree_says_so() -> None:
    flow = a.then(b).then(c)
    assert isinstance(flow, Chain) and isinstance(flow.first, Chain)
    assert flow.describe() == "Chain(Chain(a, b), c)"
    observer = RecordingObserver()
    assert await run_reporting(flow, 1, observer) == "<20>"
    assert node_shape(observer.events) == "Chain(Chain(a, b), c)"
    outer, inner, na, nb, nc = started(observer.events)
    assert [n.label for n in (na, nb, nc)] == ["a", "b", "c"]
    assert (outer.node_kind, inner.node_kind) == ("chain", "chain")
    assert outer.parent_id is None
    assert inner.parent_id == outer.node_id
    assert na.parent_id == nb.parent_id == inner.node_id
    assert nc.parent_id == outer.node_id
    assert finished(observer.events)[outer.node_id].output == "<20>"
    assert_balanced(observer.events)


async def test_a_failing_step_fails_its_ancestors_and_stops_the_chain() -> None:
    ran: list[str] = []

    @step
    async def boom(x: int) -> int:
        raise ValueError(f"bad input {x}")

    @step
    async def after(x: int) -> int:
        ran.append("after")
        return x

    observer = RecordingObserver()
    with pytest.raises(ValueError, match="bad input 2"):
        await run_reporting(a.then(boom).then(after), 1, observer)
    assert ran == []
    assert status_by_label(observer.events) == {"chain": "failed", "a": "done", "boom": "failed"}
    errors = [e.error for e in finished(observer.events).values() if e.status == "failed"]
    assert errors == ["bad input 2"] * 3
    assert_balanced(observer.events)


async def test_step_budget_is_checked_before_the_step_starts() -> None:
    calls: list[int] = []

    @step
    async def count(x: int) -> int:
        calls.append(x)
        return x + 1

    flow = count.then(count).then(count)  # 2 chains + 3 leaves = 5 steps
    observer = RecordingObserver()
    tracker = WorkflowBudgetTracker(WorkflowBudget(max_steps=4))
    with pytest.raises(BudgetExhausted, match="step budget of 4"):
        await run_reporting(flow, 0, observer, budget=tracker)
    assert calls == [0, 1]  # the third leaf was refused, not run
    assert len(started(observer.events)) == 4
    assert tracker.steps == 4
    assert_balanced(observer.events)

    enough = WorkflowBudgetTracker(WorkflowBudget(max_steps=5))
    assert await run_reporting(flow, 0, None, budget=enough) == 3
    assert enough.steps == 5


async def test_a_workflow_can_share_a_turns_model_budget() -> None:
    from tui_assist.core.budget import Budget

    turn = BudgetTracker(Budget(max_model_requests=1))
    tracker = WorkflowBudgetTracker(models=turn)
    tracker.before_model_request()
    with pytest.raises(BudgetExhausted, match="model-request budget of 1"):
        tracker.before_model_request()
    assert turn.model_requests == 1


@pytest.mark.parametrize("observer", [None, NullObserver()])
async def test_an_unobserved_run_runs_the_same_steps(observer: NullObserver | None) -> None:
    tracker = WorkflowBudgetTracker()
    assert await run_reporting(a.then(b).then(c), 1, observer, budget=tracker) == "<20>"
    assert tracker.steps == 5


async def test_nodes_are_unique_per_run_and_across_runs() -> None:
    observer = RecordingObserver()
    await run_reporting(a.then(b), 1, observer)
    await run_reporting(a.then(b), 1, observer)
    ids = [s.node_id for s in started(observer.events)]
    assert len(ids) == len(set(ids)) == 6


async def test_a_step_may_report_an_outcome_and_its_own_output() -> None:
    class Judge(Step[str, bool]):
        async def run(self, input: str, ctx: WorkflowContext) -> bool:
            ctx.outcome = "accepted"
            ctx.output = "looks fine"
            return True

    observer = RecordingObserver()
    assert await run_reporting(Judge("judge"), "x", observer)
    (end,) = finished(observer.events).values()
    assert (end.outcome, end.output) == ("accepted", "looks fine")


async def test_a_self_reporting_step_opens_no_node_of_its_own() -> None:
    from tui_assist.core.nodes import NodeScope

    class OwnNode(Step[int, int]):
        reports_itself = True

        async def run(self, input: int, ctx: WorkflowContext) -> int:
            assert ctx.observer is not None
            with NodeScope(ctx.observer, "generate", "generate", ctx.parent_id):
                return input

    observer = RecordingObserver()
    await run_reporting(a.then(OwnNode("own")), 1, observer)
    chain, leaf, own = started(observer.events)
    assert (own.node_kind, own.parent_id) == ("generate", chain.node_id)
    assert leaf.label == "a"


async def test_summaries_are_clipped() -> None:
    assert summarize("x" * 500) == "x" * 199 + "…"
    assert summarize(12) == "12"
    observer = RecordingObserver()
    await run_reporting(a, 1, observer)

    @step
    async def long(text: str) -> str:
        return text * 2

    await run_reporting(long, "y" * 300, observer)
    start = started(observer.events)[-1]
    assert len(start.detail) == 200
    assert len(finished(observer.events)[start.node_id].output) == 200


async def test_a_step_without_run_is_an_error() -> None:
    with pytest.raises(NotImplementedError):
        await run_reporting(Step[int, int]("abstract"), 1, None)
