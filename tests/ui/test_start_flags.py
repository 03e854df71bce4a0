"""Starting where you left off: `tui-assist "PROMPT"`, `--continue`, `--resume [ID]` (real store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ui.helpers import FakeToolbox, settings, wait_until
from tui_assist.cli.main import main
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import StartOptions
from tui_assist.ui.screens.resume import ResumeScreen
from tui_assist.ui.widgets.conversation import TurnView
from tui_assist.ui.widgets.turn_parts import Notice


def _app(tmp_path: Path, provider: ScriptedProvider, start: StartOptions | None = None) -> TuiAssistApp:
    return TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data"),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        chat_start=start,
    )


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _earlier_conversations(tmp_path: Path) -> list[str]:
    """Two stored conversations, the second the latest; their ids."""
    ids = []
    for prompt, answer in (("about rebasing", "Rebase answer."), ("about cooking", "Cooking answer.")):
        app = _app(tmp_path, ScriptedProvider([answer]), StartOptions(prompt=prompt))
        async with app.run_test(size=(100, 30)) as pilot:
            await _settle(app, pilot)
            assert app.session.conversation_id is not None
            ids.append(app.session.conversation_id)
    return ids


def _prompts_shown(app: TuiAssistApp) -> list[str]:
    return [view.prompt for view in app.query(TurnView)]


async def test_a_prompt_on_the_command_line_is_sent_at_start(tmp_path: Path) -> None:
    provider = ScriptedProvider(["Hello from the start."])
    app = _app(tmp_path, provider, StartOptions(prompt="fix the test"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert [m.text for m in app.session.conversation.messages] == [
            "fix the test",
            "Hello from the start.",
        ]
        assert _prompts_shown(app) == ["fix the test"]


async def test_a_command_on_the_command_line_runs_as_a_command(tmp_path: Path) -> None:
    provider = ScriptedProvider([])
    app = _app(tmp_path, provider, StartOptions(prompt="/rounds 6"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert app.session.rounds == 6 and provider.requests == []


async def test_continue_opens_the_latest_conversation_and_sends_the_prompt_into_it(tmp_path: Path) -> None:
    _, latest = await _earlier_conversations(tmp_path)
    provider = ScriptedProvider(["More cooking."])
    app = _app(tmp_path, provider, StartOptions(prompt="and dessert?", continue_latest=True))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert app.session.conversation_id == latest
        assert _prompts_shown(app) == ["about cooking", "and dessert?"]
        assert [m.text for m in provider.requests[0].messages] == [
            "about cooking",
            "Cooking answer.",
            "and dessert?",
        ]


async def test_continue_without_any_conversation_starts_a_new_one(tmp_path: Path) -> None:
    app = _app(tmp_path, ScriptedProvider([]), StartOptions(continue_latest=True))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert app.session.conversation_id is None and not app.query(TurnView)


async def test_resume_id_opens_that_conversation_by_a_prefix(tmp_path: Path) -> None:
    first, _ = await _earlier_conversations(tmp_path)
    app = _app(tmp_path, ScriptedProvider([]), StartOptions(resume=first[:6]))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert app.session.conversation_id == first
        assert _prompts_shown(app) == ["about rebasing"]


async def test_resume_an_unknown_id_says_so_and_starts_fresh(tmp_path: Path) -> None:
    await _earlier_conversations(tmp_path)
    app = _app(tmp_path, ScriptedProvider([]), StartOptions(resume="zz-no-such"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert app.session.conversation_id is None
        assert "Cannot open the conversation" in app.query(Notice).last().source


@pytest.mark.parametrize("found", [True, False])
async def test_a_resumed_prompt_gets_its_completions_and_history_once_the_conversation_shows(
    tmp_path: Path, found: bool
) -> None:
    """The prompt is equipped after the redraw (not before it), whether the conversation opened or not."""
    first, _ = await _earlier_conversations(tmp_path)
    app = _app(tmp_path, ScriptedProvider([]), StartOptions(resume=first if found else "zz-no-such"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        prompt = app.main_screen.prompt
        await wait_until(pilot, lambda: prompt.completions is not None and prompt.completions.is_attached)
        assert prompt.prompt_history is not None and prompt.sources
        assert _prompts_shown(app) == (["about rebasing"] if found else [])


async def test_resume_without_an_id_opens_the_picker(tmp_path: Path) -> None:
    first, _ = await _earlier_conversations(tmp_path)
    provider = ScriptedProvider(["Rebase again."])
    app = _app(tmp_path, provider, StartOptions(prompt="one more", resume=""))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        from textual.widgets import OptionList

        # The picker's list may not be built yet: look for it, don't demand it.
        await wait_until(pilot, lambda: [o.option_count for o in app.screen.query(OptionList)] == [2])
        await pilot.press("down", "enter")  # the newest is highlighted: down to the older one
        await _settle(app, pilot)
        assert app.session.conversation_id == first
        assert _prompts_shown(app) == ["about rebasing", "one more"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["fix the test"], StartOptions(prompt="fix the test")),
        (["--continue"], StartOptions(continue_latest=True)),
        (["--resume"], StartOptions(resume="")),
        (["--resume", "abc123"], StartOptions(resume="abc123")),
        (["--continue", "and then?"], StartOptions(prompt="and then?", continue_latest=True)),
    ],
)
def test_the_command_line_reaches_the_tui(
    argv: list[str], expected: StartOptions, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tui_assist.ui.app as app_module

    seen: dict[str, Any] = {}

    def run(source: object, *, screen: str = "chat", chat: StartOptions | None = None) -> int:
        seen.update(screen=screen, chat=chat)
        return 0

    monkeypatch.setattr(app_module, "run", run)
    assert main([*argv, "--workdir", str(tmp_path)]) == 0
    assert seen == {"screen": "chat", "chat": expected}
