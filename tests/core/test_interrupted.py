"""The history an interrupted turn leaves, rebuilt from its events: valid, and faithful to what ran."""

from __future__ import annotations

from tui_assist.core.conversation import ToolResultBlock, ToolUseBlock, Usage
from tui_assist.core.events import (
    NodeStarted,
    StreamRetried,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageRecorded,
)
from tui_assist.core.interrupted import INTERRUPTED_MARKER, interrupted_history


def started(node: str, parent: str | None, kind: str = "agent") -> NodeStarted:
    return NodeStarted(node_id=node, parent_id=parent, node_kind=kind, label=kind)  # type: ignore[arg-type]


def call(node: str, call_id: str, command: str, agent: str = "a") -> ToolCallStarted:
    return ToolCallStarted(
        node_id=node, parent_id=agent, call_id=call_id, name="bash", input={"command": command}
    )


def done(node: str, call_id: str, output: str) -> ToolCallFinished:
    return ToolCallFinished(node_id=node, call_id=call_id, name="bash", output=output)


def test_finished_calls_stay_an_unfinished_call_goes_and_the_partial_text_is_closed() -> None:
    events = [
        started("t", None, "turn"),
        started("a", "t"),
        TextDelta(node_id="a", text="Let me look."),
        UsageRecorded(node_id="a", usage=Usage(1, 1)),
        call("c1", "toolu_1", "ls"),
        done("c1", "toolu_1", "a.txt"),
        UsageRecorded(node_id="a", usage=Usage(1, 1)),
        call("c2", "toolu_2", "cat a.txt"),
        done("c2", "toolu_2", "hello"),
        call("c3", "toolu_3", "sleep 100"),  # cut before it finished
        TextDelta(node_id="x", text="not ours"),
    ]
    messages = interrupted_history("look around", events, "t")
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert messages[1].text == "Let me look." and [u.id for u in messages[1].tool_uses] == ["toolu_1"]
    assert [u.id for u in messages[3].tool_uses] == ["toolu_2"]  # toolu_3 never finished
    assert isinstance(messages[4].content[0], ToolResultBlock) and messages[4].content[0].content == "hello"
    assert messages[5].text == INTERRUPTED_MARKER


def test_a_retried_stream_voids_its_text_and_a_refine_turn_keeps_its_latest_generator() -> None:
    events = [
        started("t", None, "turn"),
        started("r1", "t", "round"),
        started("g1", "r1", "generate"),
        TextDelta(node_id="g1", text="round one answer"),
        UsageRecorded(node_id="g1", usage=Usage(1, 1)),
        started("r2", "t", "round"),
        started("g2", "r2", "generate"),
        TextDelta(node_id="g2", text="broken"),
        StreamRetried(node_id="g2", attempt=1, error="cut"),
        TextDelta(node_id="g2", text="Second try so far"),
    ]
    messages = interrupted_history("fix it", events, "t")
    assert [(m.role, m.text) for m in messages] == [
        ("user", "fix it"),
        ("assistant", f"Second try so far\n\n{INTERRUPTED_MARKER}"),
    ]


def test_an_answer_finished_just_before_the_stop_gets_the_marker_in_the_same_message() -> None:
    events = [
        started("t", None, "turn"),
        started("a", "t"),
        TextDelta(node_id="a", text="All done."),
        UsageRecorded(node_id="a", usage=Usage(1, 1)),
    ]
    messages = interrupted_history("q", events, "t")
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].text == f"All done.{INTERRUPTED_MARKER}"
    assert not any(isinstance(b, ToolUseBlock) for b in messages[1].content)


def test_a_stop_before_anything_streamed_keeps_the_prompt_and_the_marker() -> None:
    messages = interrupted_history("q", [started("t", None, "turn"), started("a", "t")], "t")
    assert [(m.role, m.text) for m in messages] == [("user", "q"), ("assistant", INTERRUPTED_MARKER)]


def test_the_usage_of_a_cut_call_does_not_end_its_response() -> None:
    """A cancelled call reports what it spent (`cut`); its partial text is still the partial answer."""
    events = [
        started("t", None, "turn"),
        started("a", "t"),
        TextDelta(node_id="a", text="Working through it"),
        UsageRecorded(node_id="a", usage=Usage(120, 1), cut=True),
    ]
    [prompt, partial] = interrupted_history("long task", events, "t")
    assert prompt.text == "long task"
    assert partial.text == f"Working through it\n\n{INTERRUPTED_MARKER}"
