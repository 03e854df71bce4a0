"""The same scripted turn through the headless host (what `ask` runs) and through the TUI gives the
same meter: tokens, cache, cost and context fill are fed by the controller, not by a screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.helpers import FakeToolbox, make_app, settings, tool_use
from tui_assist.core.conversation import TextBlock
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import ChatSession
from tui_assist.session.controller import TurnController
from tui_assist.session.headless import HeadlessHost
from tui_assist.ui.widgets.status_bar import StatusBar

PROMPT = "what is in here?"


def _script() -> list[Any]:
    return [tool_use("ls"), [TextBlock("One file: notes.txt.")]]


async def _headless_meter() -> tuple[Any, Any, Any]:
    session = ChatSession(
        settings(),
        provider_factory=lambda: ScriptedProvider(_script()),
        toolbox_factory=lambda: FakeToolbox(Path("/work/project")),
        use_store=False,
        mode="bypass",
    )
    await session.load()
    host = HeadlessHost(progress=False)
    controller = host.controller = TurnController(session, host)
    work = controller.submit(PROMPT)
    assert work is not None
    await work
    assert host.ended is not None and host.ended.outcome is not None
    assert host.ended.outcome.result.outcome == "answered"
    await session.aclose()
    return session.meter.usage, session.meter.cost, session.context_fill


async def test_ask_and_the_tui_meter_the_same_turn_alike() -> None:
    headless = await _headless_meter()

    app = make_app(_script(), mode="bypass")
    async with app.run_test(size=(120, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press(*PROMPT, "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = app.query_one(StatusBar)
        shown = (status.usage, status.cost, status.context)
        session = (app.session.meter.usage, app.session.meter.cost, app.session.context_fill)

    assert headless[0].output_tokens > 0 and headless[0].input_tokens > 0
    assert shown == session == headless
