"""A resumed conversation goes on with its last turn's model in the TUI: `--resume ID` at start
(opened before the provider loads) and `/resume ID`. The status shows it and the next request
carries it; the real SDK against the loopback fake, a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.session.test_model_switch import open_session
from tests.ui.helpers import screen_text, wait_until
from tests.ui.test_app_sdk import make_app, settle, workdir  # noqa: F401  (a fixture)
from tui_assist.core.observer import NullObserver
from tui_assist.ui.screens.main import StartOptions
from tui_assist.ui.screens.resume import ResumeScreen

HAIKU = "claude-haiku-4-5"


async def switched_conversation(work: Path) -> str:
    """A stored conversation begun on the default model whose last turn ran on haiku; its id."""
    session = await open_session(work.parent / "data", work)
    try:
        await session.run_turn("first", NullObserver())
        session.set_model(HAIKU)
        await session.run_turn("second", NullObserver())
        assert session.conversation_id is not None
        return session.conversation_id
    finally:
        await session.aclose()


@pytest.mark.parametrize("how", ["--resume", "/resume"])
async def test_a_resumed_conversation_goes_on_with_its_last_turns_model(
    fake: FakeAnthropic,
    workdir: Path,  # noqa: F811 - the fixture
    how: str,
) -> None:
    fake.add(Reply("one"), Reply("two"), Reply("three"))
    conversation_id = await switched_conversation(workdir)
    start = StartOptions(resume=conversation_id) if how == "--resume" else None
    app = make_app(workdir)
    app.chat_start = start
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        if how == "/resume":
            assert app.session.model == "claude-sonnet-4-6"
            await pilot.press(*f"/resume {conversation_id}", "enter")  # the picker, found by its id
            await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen), timeout=10)
            await wait_until(pilot, lambda: conversation_id[:8] in screen_text(app), timeout=10)
            await pilot.press("enter")
        await wait_until(pilot, lambda: app.session.conversation_id == conversation_id, timeout=10)
        await settle(app, pilot)
        assert app.session.model == HAIKU and HAIKU in screen_text(app)  # the status names it
        await pilot.press(*"third", "enter")
        await wait_until(pilot, lambda: len(fake.requests) == 3, timeout=10)
    assert fake.requests[2].body["model"] == HAIKU
    assert "second" in fake.requests[2].all_text()  # the resumed history went with it
