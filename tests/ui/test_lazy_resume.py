"""Resuming a long conversation shows its newest turns first and loads earlier ones on demand."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.helpers import FakeToolbox, settings, wait_until
from tests.ui.long_conversation import resumed_app, seed
from tui_assist.core.conversation import Message
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import RESUME_TURNS
from tui_assist.store.db import Store
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.widgets.conversation import MAX_TURN_VIEWS, Conversation, TurnView

TURNS = 300


@pytest.fixture
async def stored(tmp_path: Path) -> str:
    return await seed(tmp_path / "data", tmp_path, TURNS)


async def _ask(app: TuiAssistApp, pilot: Pilot[int], turns: int) -> None:
    """Send `q0`, `q1`... one at a time, each once the one before has run."""
    await app.session.wait_ready()
    for i in range(turns):
        await pilot.press(*f"q{i}", "enter")
        await app.workers.wait_for_complete()
    await pilot.pause()


def _seqs(app: TuiAssistApp) -> list[int | None]:
    return [view.seq for view in app.query(TurnView)]


async def test_resuming_300_turns_mounts_a_page_and_scrolling_up_loads_earlier_ones_in_order(
    tmp_path: Path, stored: str
) -> None:
    app = resumed_app(tmp_path, stored)
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
            await wait_until(pilot, lambda: conversation.scroll_y > 0)
            assert _seqs(app)[0] == TURNS - pages * RESUME_TURNS + 1  # and loaded no further page
        assert conversation.has_earlier


async def test_moving_the_cursor_up_past_the_first_message_loads_earlier_turns(
    tmp_path: Path, stored: str
) -> None:
    app = resumed_app(tmp_path, stored)
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
    app = resumed_app(tmp_path, session.conversation_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        conversation = app.query_one(Conversation)

        def filled() -> bool:
            overflows = conversation.virtual_size.height > conversation.scrollable_content_region.height
            return len(_seqs(app)) > RESUME_TURNS and (overflows or len(_seqs(app)) == 20)

        await wait_until(pilot, filled)
        seqs = _seqs(app)
        assert seqs == list(range(21 - len(seqs), 21))


async def test_the_last_answer_shows_before_the_whole_history_is_read(
    tmp_path: Path, stored: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page shown is read first; the whole history (what the next turn sends) after it."""
    release = asyncio.Event()
    reading = asyncio.Event()
    load_history = Store.load_history

    async def held(self: Store, conversation_id: str) -> list[Message]:
        reading.set()
        await release.wait()
        return await load_history(self, conversation_id)

    monkeypatch.setattr(Store, "load_history", held)
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, reading.is_set)
        await wait_until(pilot, lambda: "That is all for step 299" in _visible(app))
        # Nothing of this conversation is sent yet: it is opened once its history is read.
        assert app.session.conversation_id is None
        assert app.session.conversation.messages == []
        release.set()
        await app.session.wait_ready()
        assert app.session.conversation_id == stored
        assert len(app.session.conversation.messages) > 2 * TURNS


async def test_the_agent_tree_of_a_resumed_conversation_is_built_after_its_last_answer_shows(
    tmp_path: Path, stored: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown_first: list[bool] = []
    apply_to_panels = MainScreen.apply_to_panels

    def recording(self: MainScreen, *args: Any) -> None:
        if not shown_first:
            shown_first.append("That is all for step 299" in _visible(self.app))
        apply_to_panels(self, *args)

    monkeypatch.setattr(MainScreen, "apply_to_panels", recording)
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await wait_until(pilot, lambda: len(app.screen.log_model.turns) == RESUME_TURNS)
        assert shown_first == [True]
        # ...and the tree has the redrawn turns all the same.
        assert len(app.screen.agent_tree.root.children) == RESUME_TURNS


async def test_the_last_answer_shows_before_the_turn_controller_is_built_and_a_turn_runs_after(
    tmp_path: Path, stored: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The redraw reads the session alone: building the controller (its modules) held the paint back."""
    shown_when_built: list[bool] = []
    connect = TuiAssistApp._connect

    def recording(self: TuiAssistApp, *args: Any) -> Any:
        shown_when_built.append("That is all for step 299" in _visible(self))
        return connect(self, *args)

    monkeypatch.setattr(TuiAssistApp, "_connect", recording)
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await _ask(app, pilot, 1)
        assert shown_when_built == [True]  # built once, after the last answer showed
        assert app.screen.session is app.session
        await wait_until(pilot, lambda: "A new answer." in _visible(app))


async def test_a_long_session_keeps_few_turns_mounted_and_reads_the_others_again_on_scrolling_up(
    tmp_path: Path,
) -> None:
    turns = MAX_TURN_VIEWS + 6
    app = TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False),
        provider_factory=lambda: ScriptedProvider([f"Answer {i}." for i in range(turns)]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await _ask(app, pilot, turns)
        prompts = [view.prompt for view in app.query(TurnView)]
        assert len(prompts) == MAX_TURN_VIEWS
        assert prompts == [f"q{i}" for i in range(turns - MAX_TURN_VIEWS, turns)]
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert len(screen.log_model.turns) <= MAX_TURN_VIEWS  # the tree and the flow panel's turns too

        # Scrolling to the top reads the removed turns back from the store, above, in order.
        conversation = app.query_one(Conversation)
        for _ in range(10):
            if not conversation.has_earlier:
                break
            count = len(app.query(TurnView))
            conversation.scroll_home(animate=False, immediate=True)
            await wait_until(pilot, lambda count=count: len(app.query(TurnView)) > count)
            # The view stays where it was (the loaded turns above it) before the next scroll up.
            await wait_until(pilot, lambda: conversation.scroll_y > 0 or not conversation.has_earlier)
        assert [view.prompt for view in app.query(TurnView)] == [f"q{i}" for i in range(turns)]
        assert [view.answer for view in app.query(TurnView)][:2] == ["Answer 0.", "Answer 1."]


async def test_without_a_store_the_pane_keeps_turns_it_could_not_read_back(tmp_path: Path) -> None:
    turns = MAX_TURN_VIEWS + 3
    app = TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False),
        provider_factory=lambda: ScriptedProvider([f"Answer {i}." for i in range(turns)]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        use_store=False,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await _ask(app, pilot, turns)
        assert [view.prompt for view in app.query(TurnView)] == [f"q{i}" for i in range(turns)]
