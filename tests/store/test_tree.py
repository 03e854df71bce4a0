from __future__ import annotations

from pathlib import Path

from tui_assist.core.conversation import Usage
from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    StreamRetried,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageRecorded,
    VerdictReached,
)
from tui_assist.core.tree import NodeRecord, build_tree
from tui_assist.store import Store
from tui_assist.store.event_log import coalesce_text

from .helpers import REFINE_ANSWER, run_agent_turn, run_refine


def _shape(node: NodeRecord) -> tuple:
    return (
        node.kind,
        node.label,
        node.status,
        node.outcome,
        node.verdict,
        [_shape(c) for c in node.children],
    )


async def test_stored_events_rebuild_the_live_tree(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    run = await run_refine(store, tmp_path, conversation_id, "r1")
    stored = await store.turn_events("r1")
    live_tree = build_tree(run.live)
    assert build_tree(stored) == live_tree
    assert len(stored) < len(run.live)  # streamed deltas were merged, the tree is the same

    [turn] = live_tree
    assert _shape(turn) == (
        "turn",
        "refine turn (≤3 rounds)",
        "done",
        "answered",
        None,
        [
            (
                "round",
                "round 1",
                "done",
                "revise",
                "revise",
                [
                    (
                        "generate",
                        "generate",
                        "done",
                        "answered",
                        None,
                        [
                            ("tool", "echo", "done", None, None, []),
                        ],
                    ),
                    ("critic", "critic", "done", "revise", "revise", []),
                ],
            ),
            (
                "round",
                "round 2",
                "done",
                "pass",
                "pass",
                [
                    (
                        "generate",
                        "generate",
                        "done",
                        "answered",
                        None,
                        [
                            (
                                "tool",
                                "agent",
                                "done",
                                None,
                                None,
                                [
                                    ("agent", "count", "done", "answered", None, []),
                                ],
                            ),
                        ],
                    ),
                    ("critic", "critic", "done", "pass", "pass", []),
                ],
            ),
        ],
    )
    assert turn.output == REFINE_ANSWER
    critic = turn.children[0].children[1]
    assert critic.feedback == "Add the numbers."
    # A round carries its critic's verdict and feedback, and knows its place in the turn.
    assert [(r.round_index, r.verdict, r.feedback) for r in turn.children] == [
        (1, "revise", "Add the numbers."),
        (2, "pass", turn.children[1].children[1].feedback),
    ]
    generate = turn.children[1].children[0]
    assert generate.text.endswith(REFINE_ANSWER)
    assert generate.children[0].tool_input == {"description": "count", "prompt": "count to 3"}


async def test_agent_turn_tree_round_trips(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    run = await run_agent_turn(store, tmp_path, conversation_id, "a1", "what?", "that.")
    assert build_tree(await store.turn_events("a1")) == build_tree(run.live)


def test_build_tree_folds_tools_verdicts_retries_and_failures() -> None:
    events = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="g", parent_id="t", node_kind="agent", label="agent"),
        TextDelta(node_id="g", text="lost"),
        StreamRetried(node_id="g", attempt=1, error="cut"),
        TextDelta(node_id="g", text="kept"),
        UsageRecorded(node_id="g", usage=Usage(3, 1)),
        UsageRecorded(node_id="g", usage=Usage(2, 1)),
        ToolCallStarted(node_id="x", parent_id="g", call_id="c", name="bash", input={"command": "false"}),
        ToolCallFinished(node_id="x", call_id="c", name="bash", output="exit 1", is_error=True, duration=0.5),
        NodeStarted(node_id="c", parent_id="t", node_kind="critic", label="critic"),
        VerdictReached(node_id="c", round=1, verdict="revise", feedback="try again"),
        NodeFinished(node_id="c", outcome="revise"),
        NodeFinished(node_id="g", status="failed", outcome="error", error="boom"),
        NodeFinished(node_id="ghost"),  # unknown node: ignored
        NodeStarted(node_id="o", parent_id="missing", node_kind="step", label="orphan"),
    ]
    roots = build_tree(events)
    assert [r.node_id for r in roots] == ["t", "o"]
    turn = roots[0]
    agent, critic = turn.children
    assert turn.status == "running"
    assert (agent.status, agent.error, agent.text, agent.usage) == ("failed", "boom", "kept", Usage(5, 2))
    [tool] = agent.children
    assert (tool.kind, tool.status, tool.output, tool.duration) == ("tool", "failed", "exit 1", 0.5)
    assert (critic.verdict, critic.feedback, critic.status) == ("revise", "try again", "done")
    assert [n.node_id for n in turn.walk()] == ["t", "g", "x", "c"]


def test_a_retry_voids_only_the_text_of_the_call_it_retried() -> None:
    events = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="g", parent_id="t", node_kind="generate", label="generate"),
        TextDelta(node_id="g", text="first call. "),
        UsageRecorded(node_id="g", usage=Usage(1, 1)),
        ToolCallStarted(node_id="x", parent_id="g", call_id="c", name="bash", input={"command": "ls"}),
        ToolCallFinished(node_id="x", call_id="c", name="bash", output="a", is_error=False, duration=0.1),
        TextDelta(node_id="g", text="cut"),
        StreamRetried(node_id="g", attempt=1, error="cut"),
        TextDelta(node_id="g", text="second call."),
    ]
    [turn] = build_tree(events)
    [generate] = turn.children
    assert generate.text == "first call. second call."


def test_coalescing_keeps_retries_and_node_boundaries() -> None:
    turn = NodeStarted(node_id="a", parent_id=None, node_kind="turn", label="turn")
    b = NodeStarted(node_id="b", parent_id="a", node_kind="agent", label="agent")
    events = [
        turn,
        TextDelta(node_id="a", text="1"),
        TextDelta(node_id="a", text="2"),
        StreamRetried(node_id="a", attempt=1, error="e"),
        TextDelta(node_id="a", text="3"),
        b,
        TextDelta(node_id="b", text="4"),
        TextDelta(node_id="b", text="5"),
        TextDelta(node_id="x", text="a node never started: not in the log"),
    ]
    assert coalesce_text(events) == [
        turn,
        TextDelta(node_id="a", text="12"),
        StreamRetried(node_id="a", attempt=1, error="e"),
        TextDelta(node_id="a", text="3"),
        b,
        TextDelta(node_id="b", text="45"),
    ]
