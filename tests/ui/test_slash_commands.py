"""The built-in and custom slash commands in the TUI: real store, real SDK against the fake."""

from __future__ import annotations

import contextlib
import json
import stat
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Usage
from tests.ui.helpers import FakeToolbox, make_app, screen_text, settings, wait_until
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.config import Price, Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.resume import ResumeScreen
from tui_assist.ui.widgets.conversation import TurnView
from tui_assist.ui.widgets.prompt import Prompt, PromptError
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.turn_parts import Notice


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _run(app: TuiAssistApp, pilot, text: str) -> None:
    app.query_one(Prompt).load_text(text)  # typed at once: these tests are about the command
    await pilot.press("enter")
    await _settle(app, pilot)


def _last_notice(app: TuiAssistApp) -> str:
    return app.query(Notice).last().source


def _error(app: TuiAssistApp) -> str:
    line = app.query_one(PromptError)
    return str(line.render()) if line.has_class("-shown") else ""


def _stored_app(tmp_path: Path, provider: ScriptedProvider, **overrides: object) -> TuiAssistApp:
    """A scripted model, with the real store under a tmp data dir."""
    return TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data", **overrides),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )


@pytest.fixture
def sdk_workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


async def test_model_lists_the_models_and_switches_the_next_requests(
    fake: FakeAnthropic, sdk_workdir: Path
) -> None:
    fake.add(Reply("From sonnet."), Reply("From haiku."))
    app = TuiAssistApp(
        Settings(
            provider="anthropic",
            workdir=sdk_workdir,
            prices={"claude-sonnet-4-6": Price(), "claude-haiku-4-5": Price(input=1, output=5)},
        )
    )
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/model")
        listed = _last_notice(app)
        assert "`claude-sonnet-4-6`  (in use)" in listed and "`claude-haiku-4-5`" in listed
        await _run(app, pilot, "first")
        await _run(app, pilot, "/model claude-haiku-4-5")
        assert app.query_one(StatusBar).model == "claude-haiku-4-5"
        await _run(app, pilot, "second")
        sent = [r for r in fake.requests if r.path == "/v1/messages"]  # `/model` also asked for the list
        assert [r.body["model"] for r in sent] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
        # The conversation goes on: the second request carries the first exchange.
        assert [m["role"] for m in sent[1].messages] == ["user", "assistant", "user"]
        await _run(app, pilot, "/cost")
        cost = _last_notice(app)
        assert "| `claude-sonnet-4-6` | input |" in cost and "| `claude-haiku-4-5` | output |" in cost
        assert "cache read" in cost and "cache write" in cost and "**total**" in cost


async def test_cost_splits_tokens_by_kind_with_their_prices(fake: FakeAnthropic, sdk_workdir: Path) -> None:
    fake.add(
        Reply(
            "Cached.", usage=Usage(1_000, 200, cache_creation_input_tokens=0, cache_read_input_tokens=4_000)
        )
    )
    price = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
    app = TuiAssistApp(
        Settings(provider="anthropic", workdir=sdk_workdir, prices={"claude-sonnet-4-6": price})
    )
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/cost")
        assert "no model calls" in _last_notice(app)
        await _run(app, pilot, "hello")
        await _run(app, pilot, "/cost")
        table = _last_notice(app)
        assert "| `claude-sonnet-4-6` | input | 1,000 | $0.0030 |" in table
        assert "| `claude-sonnet-4-6` | output | 200 | $0.0030 |" in table
        assert "| `claude-sonnet-4-6` | cache read | 4,000 | $0.0012 |" in table
        assert "| `claude-sonnet-4-6` | cache write | 0 | $0.0000 |" in table


async def test_a_custom_command_sends_its_file_with_the_arguments(
    fake: FakeAnthropic, sdk_workdir: Path, tmp_path: Path
) -> None:
    folder = sdk_workdir / ".tui-assist" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("# Review a file for bugs\nReview $ARGUMENTS carefully.\n")
    user = tmp_path / "xdg_config_home" / "tui-assist" / "commands"  # the autouse XDG_CONFIG_HOME
    user.mkdir(parents=True)
    (user / "standup.md").write_text("Write my standup.")
    fake.add(Reply("Reviewed."))
    app = TuiAssistApp(Settings(provider="anthropic", workdir=sdk_workdir))
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("/", "r", "e", "v")
        from tui_assist.ui.widgets.completion import CompletionList

        items = app.query_one(CompletionList).items
        assert [(i.label, i.description) for i in items] == [
            ("/review [ARGS]", "Review a file for bugs (project)")
        ]
        await pilot.press("tab", *"src/app.py", "enter")
        await _settle(app, pilot)
        assert fake.requests[-1].messages[-1]["content"][0]["text"] == (
            "# Review a file for bugs\nReview src/app.py carefully."
        )
        await _run(app, pilot, "/help")
        assert "/standup [ARGS]" in _last_notice(app) and "(user)" in _last_notice(app)


async def test_refine_and_rounds_change_the_session() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/refine on")
        assert app.session.refine and app.query_one(StatusBar).refine
        await _run(app, pilot, "/refine on")
        assert app.session.refine
        await _run(app, pilot, "/refine")
        assert not app.session.refine
        await _run(app, pilot, "/refine maybe")
        assert "usage: /refine [on|off]" in _error(app)
        await pilot.press("ctrl+u")
        await _run(app, pilot, "/rounds 7")
        assert app.session.rounds == 7 and app.query_one(StatusBar).rounds == 7
        await _run(app, pilot, "/rounds 99")
        assert "from 1 to 20" in _error(app) and app.session.rounds == 7


async def test_new_starts_over_and_resume_opens_the_picker_with_the_query(tmp_path: Path) -> None:
    provider = ScriptedProvider(["About rebasing.", "About cooking."])
    app = _stored_app(tmp_path, provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "how do I rebase")
        first = app.session.conversation_id
        await _run(app, pilot, "/new")
        assert app.session.conversation_id is None and not app.query(TurnView)
        await _run(app, pilot, "what should I cook")
        await _run(app, pilot, "/resume rebase")
        picker = app.screen
        assert isinstance(picker, ResumeScreen)
        await wait_until(pilot, lambda: bool(picker.found))
        await app.workers.wait_for_complete()
        from textual.widgets import Input, OptionList

        assert picker.query_one("#query", Input).value == "rebase"
        results = picker.query_one(OptionList)
        await wait_until(pilot, lambda: results.option_count == 1)
        await pilot.press("enter", "enter")  # from the search field to the list, then pick
        await _settle(app, pilot)
        assert app.session.conversation_id == first
        assert [m.text for m in app.session.conversation.messages] == ["how do I rebase", "About rebasing."]


async def test_export_writes_markdown_and_json_from_the_store(tmp_path: Path) -> None:
    app = _stored_app(tmp_path, ScriptedProvider(["The answer is 42."]))
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/export")
        assert "nothing to export yet" in _error(app)
        await pilot.press("ctrl+u")
        await _run(app, pilot, "what is the answer")
        await _run(app, pilot, "/export md notes/chat.md")
        await _run(app, pilot, "/export json")
        await _run(app, pilot, "/export yaml out.txt")
        assert "usage: /export" in _error(app)
    markdown = (tmp_path / "notes" / "chat.md").read_text()
    assert "what is the answer" in markdown and "The answer is 42." in markdown
    [exported] = list((tmp_path / "data" / "exports").glob("conversation-*.json"))
    data = json.loads(exported.read_text())
    assert data["turns"][0]["prompt"] == "what is the answer"
    assert data["turns"][0]["answer"] == "The answer is 42."


async def test_theme_lists_and_switches_and_names_the_closest_theme() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/theme")
        assert "`tui-dark`  (in use)" in _last_notice(app)
        await _run(app, pilot, "/theme tui-light")
        assert app.theme == "tui-light"
        await _run(app, pilot, "/theme tui-lite")
        assert "did you mean tui-light?" in _error(app) and app.theme == "tui-light"


async def test_memory_lists_the_instruction_files_and_opens_one_in_the_editor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    (workdir / ".git").mkdir()
    (workdir / "AGENTS.md").write_text("Use tabs.\n")
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "edited by the editor" >> "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    app = TuiAssistApp(
        settings(workdir),
        provider_factory=lambda: ScriptedProvider([]),
        toolbox_factory=lambda: FakeToolbox(workdir),
        use_store=False,
    )
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/memory")
        assert f"1. `{workdir / 'AGENTS.md'} (10 bytes)`" in _last_notice(app)
        await _run(app, pilot, "/memory 1")
        # A test has no terminal to hand over: Textual's headless driver can't suspend.
        assert "cannot open an editor here" in _error(app)
        await pilot.press("ctrl+u")
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        await _run(app, pilot, "/memory 1")
    assert (workdir / "AGENTS.md").read_text() == "Use tabs.\nedited by the editor\n"


async def test_quit_exits() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "/quit")
        assert app._exit  # the app is on its way out


async def test_commands_run_at_once_during_a_turn_and_model_waits_for_its_end() -> None:
    import asyncio

    from tests.ui.helpers import BlockingProvider

    provider = BlockingProvider("Busy")
    app = make_app(provider=provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"long task", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        app.query_one(Prompt).load_text("/rounds 9")
        await pilot.press("enter")
        await pilot.pause()
        assert app.session.rounds == 9  # not queued: a command runs at once
        app.query_one(Prompt).load_text("/model other")
        await pilot.press("enter")
        await pilot.pause()
        assert "a turn is running" in _error(app) and provider.model == "blocking"
        provider.release.set()
        await _settle(app, pilot)


async def test_help_opens_at_its_start_and_the_next_turn_is_followed_again() -> None:
    """/help is taller than a 140x42 screen: its list of commands shows from the top."""
    app = make_app(["An earlier answer.", "The next answer."])
    async with app.run_test(size=(140, 42)) as pilot:
        await _settle(app, pilot)
        await _run(app, pilot, "an earlier prompt")
        await _run(app, pilot, "/help")
        await pilot.pause()
        shown = screen_text(app)
        assert "Commands" in shown and "/help " in shown and "/new " in shown, shown
        conversation = app.query_one("#conversation")
        assert conversation.max_scroll_y > 0  # it is taller than the screen: the test means something
        await _run(app, pilot, "one more prompt")
        await wait_until(pilot, lambda: "The next answer." in screen_text(app))
