"""Resuming a long conversation shows its newest turns first and loads earlier ones on demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.helpers import FakeToolbox, settings, wait_until
from tests.ui.long_conversation import seed
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import RESUME_TURNS
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import StartOptions
from tui_assist.ui.widgets.conversation import Conversation, TurnView

TURNS = 300


@pytest.fixture
async def stored(tmp_path: Path) -> str:
    return await seed(tmp_path / "data", tmp_path, TURNS)


def _app(tmp_path: Path, conversation_id: str) -> TuiAssistApp:
    return TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False),
        provider_factory=lambda: ScriptedProvider(["A new answer."]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        chat_start=StartOptions(resume=conversation_id),
    )


def _seqs(app: TuiAssistApp) -> list[int | None]:
    return [view.seq for view in app.query(TurnView)]


async def test_resuming_300_turns_mounts_a_page_and_scrolling_up_loads_earlier_ones_in_order(
    tmp_path: Path, stored: str
) -> None:
    app = _app(tmp_path, stored)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        conversation = app.query_one(Conversation)
        # The last answer is on screen, and only one page of turns is mounted.
        await wait_until(pilot, lambda: "That is all for step 299" in _visible(app))
        assert _seqs(app) == list(range(TURNS - RESUME_TURNS + 1, TURNS + 1))
        assert len(app.query(TurnView)) <= 20
        assert len(app.session.conversation.messages) > 2 * TURNS  # the history sent is whole

        # Scrolling to the top mounts the page before, above, in order; twice.
        for pages in (2, 3):
            conversation.scroll_home(animate=False, immediate=True)
            await wait_until(pilot, lambda pages=pages: len(_seqs(app)) == pages * RESUME_TURNS)
            assert _seqs(app) == list(range(TURNS - pages * RESUME_TURNS + 1, TURNS + 1))
            # The view stays where it was: the newly loaded turns are above it, not on screen.
            await pilot.pause()
            assert conversation.scroll_y > 0
        assert conversation.has_earlier


async def test_moving_the_cursor_up_past_the_first_message_loads_earlier_turns(
    tmp_path: Path, stored: str
) -> None:
    app = _app(tmp_path, stored)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        conversation = app.query_one(Conversation)
        conversation.focus()
        await pilot.press("home")  # the first message shown
        await pilot.press("up")
        await wait_until(pilot, lambda: len(_seqs(app)) == 2 * RESUME_TURNS)
        assert _seqs(app)[0] == TURNS - 2 * RESUME_TURNS + 1


def _visible(app: TuiAssistApp) -> str:
    """The text of every answer whose region is on screen."""
    conversation = app.query_one(Conversation)
    shown = conversation.scrollable_content_region
    parts: list[str] = []
    for view in app.query(TurnView):
        if view.region.overlaps(shown):
            parts.append(view.answer)
    return "\n".join(parts)


async def test_short_turns_that_do_not_fill_the_pane_load_earlier_ones_by_themselves(tmp_path: Path) -> None:
    from tui_assist.core.observer import NullObserver
    from tui_assist.session.chat import ChatSession

    session = ChatSession(
        settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False),
        provider_factory=lambda: ScriptedProvider([f"Short answer {i}." for i in range(20)]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )
    await session.load()
    for i in range(20):
        await session.run_turn(f"question {i}", NullObserver())
    await session.aclose()
    assert session.conversation_id is not None
    app = _app(tmp_path, session.conversation_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        conversation = app.query_one(Conversation)

        def filled() -> bool:
            overflows = conversation.virtual_size.height > conversation.scrollable_content_region.height
            return len(_seqs(app)) > RESUME_TURNS and (overflows or len(_seqs(app)) == 20)

        await wait_until(pilot, filled)
        seqs = _seqs(app)
        assert seqs == list(range(21 - len(seqs), 21))
