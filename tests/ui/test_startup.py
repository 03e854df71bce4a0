from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.ui.helpers import FakeToolbox, screen_text
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import ChatSession
from tui_assist.session.config import Settings
from tui_assist.session.config_source import ConfigSource
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.turn_parts import Notice, TurnBadge

ROOT = Path(__file__).resolve().parents[2]


def test_neither_the_sdk_nor_pydantic_loads_before_the_first_frame(monkeypatch, tmp_path) -> None:
    """The SDK (seconds to import) and settings validation (pydantic) load after the first frame.

    So do the permission rules (with their shell parser), compaction and the agent loop; the agent
    loop is loaded once the session has, so that the first prompt doesn't wait for it. The core's
    events, the node log and the widgets of a turn (Markdown among them) are not imported for the
    empty first screen either, nor the command table and its slash commands (the screen's keys
    are bound from `ui/command_bindings.py` alone), nor the flows, nor `json` (no state file was saved yet).
    """
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("TUI_ASSIST_HOME", str(tmp_path / "data"))  # no state file saved yet
    code = textwrap.dedent(
        """
        import asyncio, sys
        from tui_assist.session.config_source import ConfigSource
        import tui_assist.ui.app as app_module
        from tui_assist.ui.screens.main import MainScreen
        assert "anthropic" not in sys.modules, "importing the app imported anthropic"
        LATE = {
            "anthropic", "pydantic", "tui_assist.core.permissions", "tui_assist.session.context",
            "tui_assist.core.agent", "tui_assist.turns.agent",
        }
        TURN = {
            "tui_assist.core.events", "tui_assist.core.tree", "tui_assist.core.conversation",
            "tui_assist.ui.bridge", "tui_assist.ui.screens.main_host", "tui_assist.ui.widgets.turn_view",
            "tui_assist.ui.widgets.streaming_markdown", "tui_assist.session.meter",
            "tui_assist.session.commands", "tui_assist.session.slash_commands",
            "tui_assist.ui.screens.main_flows", "json",
        }
        seen = {}
        original = MainScreen._after_first_frame
        def after_first_frame(self):
            seen["at_first_paint"] = sorted(LATE & set(sys.modules))
            seen["turn_at_first_paint"] = sorted(TURN & set(sys.modules))
            original(self)
        MainScreen._after_first_frame = after_first_frame
        async def main():
            source = ConfigSource.read({"provider": "anthropic"})
            app = app_module.TuiAssistApp(source, use_store=False)
            async with app.run_test() as pilot:
                await asyncio.wait_for(app.session.wait_ready(), 30)
                await app.workers.wait_for_complete()
                await pilot.pause()
                seen["after_load"] = sorted(LATE & set(sys.modules))
                seen["provider"] = type(app.session.provider).__name__
                seen["problem"] = app.session.provider_problem
        asyncio.run(main())
        print(seen)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "'at_first_paint': []" in out.stdout
    assert "'turn_at_first_paint': []" in out.stdout
    # Compaction loads with the first turn.
    after_load = "['anthropic', 'pydantic', 'tui_assist.core.agent', 'tui_assist.core.permissions', 'tui_assist.turns.agent']"
    assert f"'after_load': {after_load}" in out.stdout
    assert "'provider': 'AnthropicProvider'" in out.stdout


async def test_invalid_settings_open_the_app_and_say_what_to_fix(tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("rounds = 99\n", encoding="utf-8")
    source = ConfigSource.read({"provider": "scripted", "workdir": str(tmp_path)}, path=config)
    app = TuiAssistApp(source, toolbox_factory=lambda: FakeToolbox(tmp_path), use_store=False)
    async with app.run_test(size=(110, 36)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.session.provider is None
        notice = app.query_one(Notice).source
        assert "invalid setting rounds" in notice
        assert str(config) in notice
        assert "Your settings are invalid" in screen_text(app)
        await pilot.press(*"hello", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.query_one(TurnBadge).render().plain == "not sent"


async def test_validated_settings_replace_the_preview_but_not_what_the_user_changed(tmp_path) -> None:
    # `refine = 1` is valid (true) but not a shape the preview reads: it previews as off.
    source = ConfigSource({"refine": 1, "rounds": 4, "workdir": str(tmp_path)}, tmp_path / "config.toml")
    untouched = ChatSession(source, provider_factory=lambda: ScriptedProvider([]), use_store=False)
    changed = ChatSession(source, provider_factory=lambda: ScriptedProvider([]), use_store=False)
    assert (untouched.refine, untouched.rounds) == (False, 4)
    changed.rounds = 2  # as the palette's "set rounds" does before the settings have loaded

    await untouched.load()
    await changed.load()

    assert (untouched.refine, untouched.rounds) == (True, 4)
    assert (changed.refine, changed.rounds) == (True, 2)


async def test_without_credentials_the_app_opens_and_explains_setup(tmp_path) -> None:
    app = TuiAssistApp(
        Settings(provider="anthropic", workdir=tmp_path),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        use_store=False,
    )
    async with app.run_test(size=(110, 36)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        notice = app.query_one(Notice)
        assert "ANTHROPIC_API_KEY" in notice.source
        assert "--provider scripted --script FILE" in notice.source
        assert app.session.provider is None
        text = screen_text(app)
        assert "No model provider is configured yet." in text
        await pilot.press(*"hello", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.query_one(TurnBadge).render().plain == "not sent"


async def test_scripted_provider_without_script_explains_itself(tmp_path) -> None:
    app = TuiAssistApp(Settings(provider="scripted", workdir=tmp_path), use_store=False)
    async with app.run_test(size=(110, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "--script FILE" in app.query_one(Notice).source


async def test_a_config_file_that_is_not_utf8_opens_the_app_and_says_so(tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(b'model = "caf\xe9"\n')
    source = ConfigSource.read({"workdir": str(tmp_path)}, path=config)
    app = TuiAssistApp(source, toolbox_factory=lambda: FakeToolbox(tmp_path), use_store=False)
    async with app.run_test(size=(110, 36)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.session.provider is None
        assert "is not UTF-8 text" in app.query_one(Notice).source
    assert config.read_bytes() == b'model = "caf\xe9"\n'


async def test_a_data_dir_that_is_a_file_opens_the_app_and_says_history_is_not_saved(tmp_path) -> None:
    data = tmp_path / "data-file"
    data.write_text("mine")
    settings = Settings(provider="scripted", workdir=tmp_path, data_dir=data)
    app = TuiAssistApp(
        settings,
        provider_factory=lambda: ScriptedProvider(["hi"]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )
    async with app.run_test(size=(110, 36)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        notices = [n.source for n in app.query(Notice)]
        assert any("history is not saved" in n and "is a file, not a folder" in n for n in notices), notices
    assert data.read_text() == "mine"
