"""The headless host's progress lines, read off its `NodeLog`."""

from __future__ import annotations

import io

from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallStarted, TurnEvent
from tui_assist.session.headless import HeadlessObserver


def test_progress_lines_name_rounds_calls_compactions_and_blocking_hooks() -> None:
    out = io.StringIO()
    observer = HeadlessObserver(progress=True, out=out)
    events: list[TurnEvent] = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="k", parent_id="t", node_kind="compact", label="compact"),
        NodeFinished(node_id="k", output="compacted 12 messages"),
        NodeStarted(node_id="h", parent_id="t", node_kind="hook", label="PreToolUse: guard.sh"),
        NodeFinished(node_id="h", outcome="blocked"),
        NodeStarted(node_id="o", parent_id="t", node_kind="hook", label="Stop: fine.sh"),
        NodeFinished(node_id="o", outcome="done"),
        NodeStarted(node_id="r", parent_id="t", node_kind="round", label="round 1"),
        ToolCallStarted(node_id="c", parent_id="r", call_id="u", name="bash", input={"command": "ls  -la"}),
        NodeFinished(node_id="t", output="not a compaction"),
    ]
    for event in events:
        observer.on_event(event)
    assert out.getvalue().splitlines() == [
        "  ⇣ compacted 12 messages",
        "  ⊘ PreToolUse: guard.sh: blocked",
        "── round 1",
        "  → bash ls -la",
    ]


def test_quiet_progress_folds_nothing() -> None:
    observer = HeadlessObserver(progress=False, out=io.StringIO())
    observer.on_event(NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"))
    assert not observer.log.nodes
