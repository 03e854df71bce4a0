"""NodeLog's queries: the one fold of the event stream, read by the history, the store and the views."""

from __future__ import annotations

from tui_assist.core.conversation import Usage
from tui_assist.core.events import (
    NodeFinished,
    NodeKind,
    NodeStarted,
    StreamRetried,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
)
from tui_assist.core.tree import NodeLog, build_tree


def started(node: str, parent: str | None, kind: NodeKind) -> NodeStarted:
    return NodeStarted(node_id=node, parent_id=parent, node_kind=kind, label=kind)


def call(node: str, parent: str) -> ToolCallStarted:
    return ToolCallStarted(node_id=node, parent_id=parent, call_id=f"id-{node}", name="bash", input={})


def done(node: str, output: str, *, is_error: bool = False) -> ToolCallFinished:
    return ToolCallFinished(node_id=node, call_id=f"id-{node}", name="bash", output=output, is_error=is_error)


def refine_turn() -> list[TurnEvent]:
    return [
        started("t", None, "turn"),
        started("r1", "t", "round"),
        started("g1", "r1", "generate"),
        TextDelta(node_id="g1", text="draft "),
        TextDelta(node_id="g1", text="one"),
        UsageRecorded(node_id="g1", usage=Usage(10, 2)),
        call("c1", "g1"),
        started("sub", "c1", "agent"),  # a sub-agent under a tool call: not a main generator
        UsageRecorded(node_id="sub", usage=Usage(5, 1)),
        call("c2", "sub"),
        done("c2", "inner"),
        NodeFinished(node_id="sub"),
        done("c1", "outer", is_error=True),
        started("k1", "r1", "critic"),
        UsageRecorded(node_id="k1", usage=Usage(3, 1)),
        NodeFinished(node_id="k1"),
        started("r2", "t", "round"),
        started("g2", "r2", "generate"),
        call("c3", "g2"),  # cut: never finished
        UsageRecorded(node_id="g2", usage=Usage(7, 0), cut=True),
    ]


def test_main_generators_are_the_rounds_generators_not_sub_agents_or_critics() -> None:
    log = NodeLog.of(refine_turn())
    assert [r.node_id for r in log.main_generators("t")] == ["g1", "g2"]
    assert not log.is_main_generator("sub") and not log.is_main_generator("k1")
    agent = NodeLog.of([started("t", None, "turn"), started("a", "t", "agent")])
    assert [r.node_id for r in agent.main_generators("t")] == ["a"]
    assert agent.main_generators("unknown") == []


def test_usage_sums_every_call_under_the_node_cut_ones_included() -> None:
    log = NodeLog.of(refine_turn())
    assert log.usage("t") == Usage(25, 4)
    assert log.usage("r2") == Usage(7, 0)
    assert log.usage("nothing") == Usage()


def test_tool_calls_come_in_finish_order_then_the_unfinished_with_their_round() -> None:
    log = NodeLog.of(refine_turn())
    calls = log.tool_calls("t")
    assert [(start.node_id, record.status, record.output) for start, record in calls] == [
        ("c2", "done", "inner"),
        ("c1", "failed", "outer"),
        ("c3", "running", ""),
    ]
    assert [log.round_of(start.parent_id) for start, _ in calls] == [1, 1, 2]
    assert log.rounds_started("t") == 2


def test_streamed_merges_deltas_keeps_voided_text_and_folds_into_the_same_tree() -> None:
    events = [
        started("t", None, "turn"),
        started("a", "t", "agent"),
        TextDelta(node_id="a", text="cut "),
        TextDelta(node_id="a", text="short"),
        StreamRetried(node_id="a", attempt=1, error="broken"),
        TextDelta(node_id="a", text="the "),
        TextDelta(node_id="a", text="answer"),
        NodeFinished(node_id="a"),
        NodeFinished(node_id="t"),
    ]
    log = NodeLog.of(events)
    streamed = log.streamed("t")
    assert [e for e in streamed if isinstance(e, TextDelta)] == [
        TextDelta(node_id="a", text="cut short"),  # as it streamed: the retry after it voids it again
        TextDelta(node_id="a", text="the answer"),
    ]
    assert log.nodes["a"].text == "the answer"
    assert build_tree(streamed) == build_tree(events)


def todo_call(node: str, parent: str, *statuses: str) -> ToolCallStarted:
    todos = [{"content": f"step {i}", "status": s} for i, s in enumerate(statuses, 1)]
    return ToolCallStarted(
        node_id=node, parent_id=parent, call_id=f"id-{node}", name="todo_write", input={"todos": todos}
    )


def test_an_agents_plan_is_its_last_todo_write_that_did_not_fail() -> None:
    log = NodeLog.of(
        [
            started("t", None, "turn"),
            started("a", "t", "agent"),
            todo_call("p1", "a", "in_progress", "pending"),
            ToolCallFinished(node_id="p1", call_id="id-p1", name="todo_write", output="ok"),
            call("c1", "a"),
            started("sub", "c1", "agent"),
            todo_call("p2", "sub", "completed"),  # the sub-agent's own plan
            todo_call("p3", "a", "in_progress", "in_progress"),
            ToolCallFinished(node_id="p3", call_id="id-p3", name="todo_write", output="bad", is_error=True),
        ]
    )
    plan = log.plan("a")
    assert plan is not None and [i.status for i in plan] == ["in_progress", "pending"]
    sub = log.plan("sub")  # still running: it counts already
    assert sub is not None and [i.status for i in sub] == ["completed"]
    assert log.plan("t") is None and log.plan("unknown") is None
