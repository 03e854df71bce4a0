"""Steering in the TUI, through the real SDK against the loopback fake: a prompt typed during a
multi-call turn joins its next request and shows where it joined; `tab` keeps one for after."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply, Text
from tests.ui.helpers import screen_text, wait_until
from tests.ui.test_app_sdk import bash, make_app, settle, workdir  # noqa: F401  (a fixture)
from tui_assist.ui.widgets.conversation import TurnView
from tui_assist.ui.widgets.queued_prompt import JoinedPrompt, QueuedPrompt


async def test_a_prompt_typed_during_the_turn_joins_its_next_request_and_tab_holds_one(
    fake: FakeAnthropic,
    workdir: Path,  # noqa: F811 - the fixture
) -> None:
    first = Reply([Text("Looking."), bash("echo one")], hold_after=3)
    fake.add(first, Reply("Used two, as asked."), Reply("Three done."))
    app = make_app(workdir, approval="allow")
    async with app.run_test(size=(110, 34)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"count for me", "enter")
        await wait_until(pilot, first.held.is_set, timeout=10)
        await pilot.press(*"use two instead", "enter", *"then three", "tab")
        await wait_until(pilot, lambda: len(app.query(QueuedPrompt)) == 2)
        shown = screen_text(app)
        assert "queued · use two instead" in shown and "after the turn · then three" in shown

        first.release()
        await wait_until(pilot, lambda: len(fake.requests) >= 3, timeout=10)
        await settle(app, pilot)

        steered = fake.requests[1].messages[-1]["content"]
        assert steered[0]["type"] == "tool_result" and "one" in json.dumps(steered[0])
        assert steered[-1]["type"] == "text" and "use two instead" in steered[-1]["text"]
        assert "then three" not in json.dumps(fake.requests[1].messages)
        assert fake.requests[2].messages[-1]["content"][0]["text"] == "then three"
        turn = app.query(TurnView).first()
        assert [j.text for j in turn.query(JoinedPrompt)] == ["use two instead"]
        assert "↳ joined · use two instead" in screen_text(app)
        assert not app.query(QueuedPrompt)
        store, conversation_id = app.session.store, app.session.conversation_id
        assert store is not None and conversation_id is not None
        stored = await store.load_history(conversation_id)
        assert any("use two instead" in m.text for m in stored)
