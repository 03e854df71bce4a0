from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.ui.helpers import FakeToolbox, screen_text
from tui_assist.config import Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.conversation import Notice, TurnBadge

ROOT = Path(__file__).resolve().parents[2]


def test_app_modules_do_not_import_anthropic_before_first_paint(monkeypatch) -> None:
    """The SDK (seconds to import) loads in the background, after the first frame."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    code = textwrap.dedent(
        """
        import asyncio, sys
        from tui_assist.config import Settings
        import tui_assist.ui.app as app_module
        from tui_assist.ui.screens.main import MainScreen
        assert "anthropic" not in sys.modules, "importing the app imported anthropic"
        seen = {}
        original = MainScreen._start_loading
        def start_loading(self):
            seen["at_first_paint"] = "anthropic" in sys.modules
            original(self)
        MainScreen._start_loading = start_loading
        async def main():
            app = app_module.TuiAssistApp(Settings(provider="anthropic"), use_store=False)
            async with app.run_test() as pilot:
                await asyncio.wait_for(app.session.wait_ready(), 30)
                await app.workers.wait_for_complete()
                await pilot.pause()
                seen["after_load"] = "anthropic" in sys.modules
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
    assert "'at_first_paint': False" in out.stdout
    assert "'after_load': True" in out.stdout
    assert "'provider': 'AnthropicProvider'" in out.stdout


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
