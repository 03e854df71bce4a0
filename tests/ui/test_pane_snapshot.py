"""A conversation left at its end in the TUI comes back, on `--resume ID` or `--continue`, in the first frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import Static

from tests.ui.helpers import FakeToolbox, settings, wait_until
from tests.ui.long_conversation import resumed_app, seed
from tui_assist.paths import latest_kept, resume_screen_path
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.store.db import Store
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.pane_snapshot import recall, remember
from tui_assist.ui.screens.main import StartOptions
from tui_assist.ui.screens.main_kept_pane import KEEP_AFTER
from tui_assist.ui.screens.main_start import StartUp
from tui_assist.ui.textual_private import render_alone
from tui_assist.ui.widgets.conversation import Conversation

SIZE = (100, 30)
LAST_LINE = "That is all for step 11"


@pytest.fixture
async def stored(tmp_path: Path) -> str:
    return await seed(tmp_path / "data", tmp_path, 12)


@pytest.fixture
def first_frames(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The rows of each app's first frame, as they show before the session, the store or the turn
    views load."""
    frames: list[list[str]] = []
    after_first_frame = StartUp.after_first_frame

    def recording(self: StartUp) -> None:
        frames.append(_texts(self._screen.app.screen._compositor.render_strips()))
        after_first_frame(self)

    monkeypatch.setattr(StartUp, "after_first_frame", recording)
    return frames


def _kept_path(tmp_path: Path, conversation_id: str) -> Path:
    """Where the pane of `conversation_id` is kept, in the data dir `resumed_app` uses."""
    path = resume_screen_path(tmp_path / "data", conversation_id)
    assert path is not None
    return path


def _texts(lines: list[Strip]) -> list[str]:
    return [line.text for line in lines]


async def _resume_and_quit(tmp_path: Path, conversation_id: str, *, scroll_back: bool = False) -> list[Strip]:
    """Resume the conversation, wait until it is all drawn, quit; what the pane showed."""
    app = resumed_app(tmp_path, conversation_id)
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        pane = app.query_one(Conversation)
        await wait_until(pilot, lambda: pane.children and LAST_LINE in "".join(_texts(render_alone(pane))))
        if scroll_back:
            pane.scroll_to(y=0, animate=False, immediate=True)
            await pilot.pause()
            # (Kept a moment after the resume, at its end: what follows is the quit's.)
            _kept_path(tmp_path, conversation_id).unlink(missing_ok=True)
        shown = render_alone(pane)
        app.exit()
    return shown


async def test_a_conversation_left_at_its_end_is_drawn_in_its_resumes_first_frame_as_it_was_left(
    tmp_path: Path, stored: str, first_frames: list[list[str]]
) -> None:
    left = await _resume_and_quit(tmp_path, stored)
    assert _kept_path(tmp_path, stored).exists()
    first_frames.clear()
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(Conversation)
        region = pane.region
        assert [row[region.x : region.right] for row in first_frames[0][region.y : region.bottom]] == _texts(
            left
        )
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: bool(pane.children))
        await pilot.pause()
        # The real turns took its place with no visible change: the same characters, the same styles.
        assert render_alone(pane) == left
        assert pane._snapshot is None


async def test_the_pane_is_kept_a_moment_after_each_run_ends_with_no_quitting(
    tmp_path: Path, stored: str
) -> None:
    """(A terminal closed with the app in it does not quit the app.)"""
    path = _kept_path(tmp_path, stored)
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await wait_until(pilot, path.exists)  # after the resume at start
        await pilot.press(*"q", "enter")
        await wait_until(pilot, lambda: not path.exists())  # the turn began: forgotten
        await wait_until(pilot, path.exists)  # and kept once it ended
        assert "A new answer." in path.read_text()


async def test_continue_draws_the_kept_pane_while_its_conversation_is_the_latest(
    tmp_path: Path, stored: str, first_frames: list[list[str]]
) -> None:
    data = tmp_path / "data"
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await wait_until(pilot, lambda: latest_kept(data) == stored)

    async def first_frame_of_continue() -> str:
        first_frames.clear()
        app = TuiAssistApp(
            settings(tmp_path, data_dir=data, checkpoints=False),
            toolbox_factory=lambda: FakeToolbox(tmp_path),
            chat_start=StartOptions(continue_latest=True),
        )
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: bool(first_frames))
            app.exit()
        return "".join(first_frames[0])

    assert LAST_LINE in await first_frame_of_continue()
    # Another conversation begun (in any process) is the latest now: its name is gone.
    store = await Store.open(data)
    try:
        await store.create_conversation(title="another", model="m", workdir=str(tmp_path))
    finally:
        await store.close()
    assert latest_kept(data) is None
    assert LAST_LINE not in await first_frame_of_continue()


async def test_a_kept_pane_is_not_drawn_once_the_conversation_changes_or_at_another_size(
    tmp_path: Path, stored: str
) -> None:
    data = tmp_path / "data"
    await _resume_and_quit(tmp_path, stored)
    path = _kept_path(tmp_path, stored)
    assert path.exists()
    assert recall(data, stored, Size(*SIZE), "textual-dark") is None  # another theme
    app = resumed_app(tmp_path, stored)
    theme = app.theme
    assert recall(data, stored, Size(*SIZE), theme) is not None
    assert recall(data, stored, Size(101, 30), theme) is None
    # A rewind in any process forgets it (here one straight in the store)...
    store = await Store.open(data)
    try:
        (last,) = await store.turns_page(stored, limit=1)
        await store.rewind_conversation(last.id)
        assert not path.exists()
        assert recall(data, stored, Size(*SIZE), theme) is None
        # ...and so does a turn begun in it.
        path.parent.mkdir(exist_ok=True)
        path.write_text("{}")
        await store.begin_turn(conversation_id=stored, turn_id="t-new", strategy="single", prompt="more")
        assert not path.exists()
    finally:
        await store.close()


async def test_what_overlays_the_pane_is_not_kept(tmp_path: Path, stored: str) -> None:
    """(A notification, a tooltip: drawn over the pane, they are not the conversation.)"""
    app = resumed_app(tmp_path, stored)
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        pane = app.query_one(Conversation)
        await wait_until(pilot, lambda: LAST_LINE in "".join(_texts(render_alone(pane))))
        over = Static("AN OVERLAY")
        over.styles.overlay = "screen"
        over.styles.position = "absolute"
        over.styles.offset = (4, 2)
        over.styles.width = 20
        await app.screen.mount(over)
        await pilot.pause()
        region = pane.region
        screen = _texts(app.screen._compositor.render_strips())
        assert "AN OVERLAY" in "".join(
            row[region.x : region.right] for row in screen[region.y : region.bottom]
        )
        assert "AN OVERLAY" not in "".join(_texts(render_alone(pane)))


async def test_a_conversation_scrolled_back_when_left_keeps_no_pane(tmp_path: Path, stored: str) -> None:
    await _resume_and_quit(tmp_path, stored, scroll_back=True)
    assert not _kept_path(tmp_path, stored).exists()


async def test_a_conversation_that_does_not_fill_the_pane_keeps_none(tmp_path: Path) -> None:
    """(Live it is drawn at the pane's top, resumed at its bottom: kept, it would jump.)"""
    app = TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False),
        provider_factory=lambda: ScriptedProvider(["A short answer."]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"q", "enter")
        await wait_until(pilot, lambda: app.session.conversation_id is not None and not app.screen.running)
        await pilot.pause(KEEP_AFTER + 0.5)  # (past the keeping after the turn)
        conversation_id = app.session.conversation_id
        app.exit()
    assert conversation_id is not None
    assert not _kept_path(tmp_path, conversation_id).exists()


async def test_a_kept_file_cannot_write_to_the_terminal_and_a_malformed_one_is_not_drawn(
    tmp_path: Path, stored: str
) -> None:
    data = tmp_path / "data"
    await _resume_and_quit(tmp_path, stored)
    path = _kept_path(tmp_path, stored)
    theme = resumed_app(tmp_path, stored).theme
    document = json.loads(path.read_text())
    width = document["pane"][0]
    injected = "\x1b]52;c;aGk=\x07"  # (would set the clipboard)
    document["lines"][0] = [[injected + " " * (width - len(injected)), len(document["styles"])]]
    document["styles"].append("bold link https://example.com/\x1b]52;c;aGk=\x07")
    document["lines"][1] = [[" " * width, len(document["styles"])]]
    document["styles"].append("italic link https://example.com/")
    path.write_text(json.dumps(document))
    kept = recall(data, stored, Size(*SIZE), theme)
    assert kept is not None
    assert not any(ord(c) < 32 or c == "\x7f" for line in kept[1] for c in line.text)
    assert not any(segment.style and segment.style.link for line in kept[1] for segment in line)
    assert [segment.style for segment in kept[1][1]] == [Style(italic=True)]
    document["lines"][0][0][0] += "x"  # one cell too wide
    path.write_text(json.dumps(document))
    assert recall(data, stored, Size(*SIZE), theme) is None
    document["lines"][0][0][0] = document["lines"][0][0][0][:-1]
    document["styles"][-1] = "bold nonsense"
    path.write_text(json.dumps(document))
    assert recall(data, stored, Size(*SIZE), theme) is None
    path.write_text("{not json")
    assert recall(data, stored, Size(*SIZE), theme) is None
    assert resume_screen_path(data, "../escape") is None


async def test_a_kept_pane_at_another_pane_size_draws_nothing(tmp_path: Path) -> None:
    app = TuiAssistApp(settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False))
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        pane = app.query_one(Conversation)
        empty = render_alone(pane)
        pane.show_snapshot(Size(pane.outer_size.width - 1, pane.outer_size.height), [])
        await pilot.pause()
        assert render_alone(pane) == empty
        remember(pane, tmp_path / "elsewhere", "../x", app.theme)  # not a plain id: nothing written
        assert not (tmp_path / "elsewhere").exists()
