"""The resume picker on a real store: the newest conversation preselected (one enter resumes it),
full-text search, turn counts and a preview, and renaming (f2 in the picker, `ChatSession.rename`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.helpers import FakeToolbox, screen_text, settings, wait_until
from tui_assist.core.observer import NullObserver
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import ChatSession
from tui_assist.session.factory import SetupError
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.screens.resume import RenameScreen, ResumeScreen
from tui_assist.ui.widgets.prompt import Prompt


def _app(tmp_path: Path, script: list[str]) -> TuiAssistApp:
    return TuiAssistApp(
        settings(tmp_path),
        provider_factory=lambda: ScriptedProvider(list(script)),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _two_conversations(tmp_path: Path) -> None:
    """`how do I rebase` (two turns), then the newer `deploy checklist` (one turn)."""
    app = _app(tmp_path, ["Use `git rebase -i`.", "Squash the fixups.", "Mention the flux capacitor."])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        for prompt in ("how do I rebase", "and the fixups?"):
            await pilot.press(*prompt, "enter")
            await _settle(app, pilot)
        await pilot.press("ctrl+n")
        await pilot.press(*"deploy checklist", "enter")
        await _settle(app, pilot)


async def _open_picker(app: TuiAssistApp, pilot) -> ResumeScreen:
    await _settle(app, pilot)
    app.query_one(Prompt).cursor_blink = False
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen))
    picker = app.screen
    assert isinstance(picker, ResumeScreen)
    await wait_until(pilot, lambda: len(picker.found) == 2)
    return picker


async def test_the_newest_is_preselected_with_its_turn_count_and_preview_and_one_enter_resumes_it(
    tmp_path: Path,
) -> None:
    await _two_conversations(tmp_path)
    app = _app(tmp_path, [])
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await _open_picker(app, pilot)
        assert picker.highlighted is not None and picker.highlighted.row.title == "deploy checklist"
        await wait_until(pilot, lambda: "Mention the flux capacitor." in screen_text(app))  # the preview
        text = screen_text(app)
        assert "deploy checklist  ·  1 turn" in text and "how do I rebase  ·  2 turns" in text

        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        await _settle(app, pilot)
        assert [m.text for m in app.session.conversation.messages] == [
            "deploy checklist",
            "Mention the flux capacitor.",
        ]


async def test_search_finds_a_conversation_by_what_was_said_in_it(tmp_path: Path) -> None:
    await _two_conversations(tmp_path)
    app = _app(tmp_path, [])
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await _open_picker(app, pilot)
        await pilot.press(*"fixups")  # in a later prompt and answer, not in any title
        await wait_until(pilot, lambda: [f.row.title for f in picker.found] == ["how do I rebase"])
        assert "[fixups]" in picker.found[0].snippet
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        await _settle(app, pilot)
        assert app.session.conversation.messages[0].text == "how do I rebase"

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.press(*"no such words anywhere")
        await wait_until(pilot, lambda: "no conversations found" in screen_text(app))


async def test_up_and_down_choose_without_leaving_the_search_box(tmp_path: Path) -> None:
    await _two_conversations(tmp_path)
    app = _app(tmp_path, [])
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await _open_picker(app, pilot)
        await pilot.press("down")
        assert picker.highlighted is not None and picker.highlighted.row.title == "how do I rebase"
        assert picker.focused is not None and picker.focused.id == "query"
        await pilot.press("up", "up")
        assert picker.highlighted.row.title == "deploy checklist"


async def test_f2_renames_the_highlighted_conversation(tmp_path: Path) -> None:
    await _two_conversations(tmp_path)
    app = _app(tmp_path, [])
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await _open_picker(app, pilot)
        await pilot.press("down", "f2")
        await wait_until(pilot, lambda: isinstance(app.screen, RenameScreen))
        await pilot.press("ctrl+a", "ctrl+k", *"git history clean-up", "enter")
        await wait_until(pilot, lambda: "git history clean-up  ·  2 turns" in screen_text(app))
        assert isinstance(app.screen, ResumeScreen)
        store = app.session.store
        assert store is not None
        titles = [row.title for row in await store.list_conversations(10, 0)]
        assert titles == ["deploy checklist", "git history clean-up"]
        assert picker.highlighted is not None


async def test_the_session_renames_its_conversation_before_and_after_the_first_turn(tmp_path: Path) -> None:
    app = _app(tmp_path, ["First answer."])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        session = app.session
        assert await session.rename("  release   notes  ") == "release notes"  # no turn yet: kept
        await pilot.press(*"what changed?", "enter")
        await _settle(app, pilot)
        store = session.store
        assert store is not None and session.conversation_id is not None
        row = await store.get_conversation(session.conversation_id)
        assert row is not None and row.title == "release notes"

        await session.rename("release notes for 2.0")
        row = await store.get_conversation(session.conversation_id)
        assert row is not None and row.title == "release notes for 2.0"
        with pytest.raises(ValueError):
            await session.rename("   ")


async def test_renaming_without_a_store_says_why() -> None:
    from tests.ui.helpers import make_app

    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        with pytest.raises(SetupError):
            await app.session.rename("anything")


async def _many_conversations(tmp_path: Path, count: int) -> None:
    """`count` one-turn conversations, all saying `needle`; the one numbered 17 also `zebra`."""
    provider = ScriptedProvider([f"answer {i}" for i in range(count)])
    session = ChatSession(
        settings(tmp_path, checkpoints=False),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )
    await session.load()
    try:
        for i in range(count):
            session.new_conversation()
            outcome = await session.run_turn(f"needle {i}" + (" zebra" if i == 17 else ""), NullObserver())
            assert outcome.saved
    finally:
        await session.aclose()


async def test_typing_shows_the_match_once_the_store_answers_a_few_queries_per_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _many_conversations(tmp_path, 40)
    app = _app(tmp_path, [])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        picker = app.screen
        assert isinstance(picker, ResumeScreen)
        await wait_until(pilot, lambda: len(picker.found) == 40)
        # Count what each search asks the store: a fixed few queries, not one per conversation found.
        store = picker.history._store
        calls: list[str] = []
        for name in ("search", "get_conversation", "get_conversations", "list_conversations"):
            method = getattr(store, name)

            async def counted(*args, _name=name, _method=method, **kwargs):
                calls.append(_name)
                return await _method(*args, **kwargs)

            monkeypatch.setattr(store, name, counted)
        await pilot.press(*"needle")  # matches all 40
        await wait_until(pilot, lambda: len(picker.found) == 40 and "[needle]" in picker.found[0].snippet)
        assert len(calls) <= 3 * calls.count("search")
        await pilot.press(*" zebra")
        await wait_until(pilot, lambda: [f.row.title for f in picker.found] == ["needle 17 zebra"])
        await wait_until(pilot, lambda: "needle 17 zebra" in screen_text(app))
        assert len(calls) <= 3 * calls.count("search")
