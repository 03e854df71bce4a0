"""One fold of the event stream: every event is folded once into each `NodeLog` that models it.

A turn has the session's log (the store, the interrupted history and the spend read it) and one
log per host that shows it (the TUI screen's, the ACP updates', the headless progress'). Nothing
else folds: no widget, no store function, no host keeps a second model of the same events.
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.ui.helpers import FakeToolbox, make_app, settings, tool_use
from tui_assist.acp.updates import TurnUpdates
from tui_assist.core.conversation import TextBlock
from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
)
from tui_assist.core.tree import NodeLog, NodeRecord
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import ChatSession
from tui_assist.session.controller import TurnController
from tui_assist.session.headless import HeadlessHost
from tui_assist.ui.widgets.conversation import TurnView

Folds = dict[int, list[TurnEvent]]
"""`id(log)` -> the events applied to that log, in order."""


@pytest.fixture
def folds(monkeypatch: pytest.MonkeyPatch) -> Folds:
    seen: Folds = defaultdict(list)
    apply = NodeLog.apply

    def counted(self: NodeLog, event: TurnEvent) -> NodeRecord | None:
        seen[id(self)].append(event)
        return apply(self, event)

    monkeypatch.setattr(NodeLog, "apply", counted)
    return seen


def _script() -> list[Any]:
    return [tool_use("ls"), [TextBlock("One file: notes.txt.")]]


def _once_each(folds: Folds, logs: int) -> list[TurnEvent]:
    """Assert `logs` logs folded the same events, each event once; return the first one's.

    Text deltas are left out of the comparison: the TUI's bridge merges those that queue up.
    """
    assert len(folds) == logs, f"{len(folds)} logs folded the turn's events, not {logs}"
    runs = list(folds.values())
    for run in runs:
        assert len({id(e) for e in run}) == len(run), "an event was folded twice into one log"
        assert _shaping(run) == _shaping(runs[0])
    return runs[0]


def _shaping(events: list[TurnEvent]) -> list[int]:
    return [id(e) for e in events if not isinstance(e, TextDelta | ThinkingDelta)]


async def test_a_stored_headless_turn_is_folded_once_by_the_session_and_once_by_the_progress(
    folds: Folds, tmp_path: Path
) -> None:
    session = ChatSession(
        settings(tmp_path),
        provider_factory=lambda: ScriptedProvider(_script()),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        mode="bypass",
    )
    await session.load()
    host = HeadlessHost(progress=True, out=io.StringIO())
    controller = host.controller = TurnController(session, host)
    work = controller.submit("what is in here?")
    assert work is not None
    await work
    assert host.ended is not None and host.ended.outcome is not None and host.ended.outcome.saved
    assert session.store is not None
    stored = await session.store.turn_events(host.ended.outcome.result.turn_id)
    await session.aclose()

    events = _once_each(folds, logs=2)  # the session's (stored from it) and the progress lines'
    assert any(isinstance(e, ToolCallStarted) for e in events)
    assert [e.kind for e in stored if not isinstance(e, TextDelta)] == [
        e.kind for e in events if not isinstance(e, TextDelta)
    ]


async def test_the_tui_turn_view_reads_the_screens_log(folds: Folds) -> None:
    app = make_app(_script(), mode="bypass")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        folds.clear()
        await pilot.press(*"what is in here?", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = app.main_screen.conversation.query_one(TurnView)
        assert view.outcome == "answered"
        assert view._log is app.main_screen.log_model  # pyright: ignore[reportPrivateUsage]
        assert id(app.main_screen.log_model) in folds
    _once_each(folds, logs=2)  # the session's and the screen's: the view folds nothing


def test_acp_updates_fold_each_event_once(folds: Folds, tmp_path: Path) -> None:
    updates = TurnUpdates(tmp_path)
    events: list[TurnEvent] = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"),
        TextDelta(node_id="a", text="Looking."),
        ToolCallStarted(node_id="c", parent_id="a", call_id="u1", name="bash", input={"command": "ls"}),
        ToolCallFinished(node_id="c", call_id="u1", name="bash", output="notes.txt"),
        NodeFinished(node_id="a"),
        NodeFinished(node_id="t", outcome="answered"),
    ]
    for event in events:
        updates.updates(event)
    assert _once_each(folds, logs=1) == events
    assert updates.log.nodes["t"].status == "done"
