"""ToolCallScope pairs every ToolCallStarted with exactly one ToolCallFinished, however the call ends."""

from __future__ import annotations

import asyncio

import pytest

from tui_assist.core.events import ToolCallFinished, ToolCallStarted
from tui_assist.core.nodes import ToolCallScope
from tui_assist.core.observer import RecordingObserver


def _pair(observer: RecordingObserver) -> tuple[ToolCallStarted, ToolCallFinished]:
    start, end = observer.events
    assert isinstance(start, ToolCallStarted) and isinstance(end, ToolCallFinished)
    assert (end.node_id, end.call_id, end.name) == (start.node_id, start.call_id, start.name)
    return start, end


def test_a_call_that_returns_reports_its_result() -> None:
    observer = RecordingObserver()
    with ToolCallScope(observer, "agent", "toolu_1", "bash", {"command": "ls"}) as scope:
        assert observer.kinds == ["tool_call_started"]
        scope.finish("a.txt")
    start, end = _pair(observer)
    assert (start.parent_id, start.input) == ("agent", {"command": "ls"})
    assert (end.output, end.is_error) == ("a.txt", False)
    assert end.duration >= 0.0 and scope.duration == end.duration


def test_an_error_result_and_a_raising_call_both_finish_as_errors() -> None:
    observer = RecordingObserver()
    with ToolCallScope(observer, "agent", "toolu_1", "bash", {}) as scope:
        scope.finish("no such file", is_error=True)
    assert (_pair(observer)[1].output, _pair(observer)[1].is_error) == ("no such file", True)

    observer = RecordingObserver()
    with pytest.raises(RuntimeError), ToolCallScope(observer, "agent", "toolu_2", "bash", {}):
        raise RuntimeError("depth limit reached")
    _, end = _pair(observer)
    assert (end.output, end.is_error) == ("depth limit reached", True)


async def test_a_cancelled_call_finishes_once_as_cancelled() -> None:
    observer = RecordingObserver()
    entered = asyncio.Event()

    async def slow_tool() -> None:
        with ToolCallScope(observer, "agent", "toolu_1", "bash", {}, node_id="n1") as scope:
            entered.set()
            await asyncio.sleep(60)
            scope.finish("never")

    task = asyncio.create_task(slow_tool())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    start, end = _pair(observer)
    assert start.node_id == "n1"
    assert (end.output, end.is_error) == ("cancelled", True)
