"""`/model ` completes the provider's models (read from the API once), and an alias switches."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.ui.helpers import wait_until
from tests.ui.test_slash_commands import _settle, sdk_workdir  # noqa: F401 - the fixture
from tui_assist.session.config import Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.completion import CompletionList
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.status_bar import StatusBar


async def test_model_completes_the_providers_list(fake: FakeAnthropic, sdk_workdir: Path) -> None:  # noqa: F811
    fake.models = ["claude-opus-4-6", "claude-haiku-4-5", "claude-sonnet-4-6", "claude-future-9"]
    app = TuiAssistApp(Settings(provider="anthropic", workdir=sdk_workdir))
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        completions = app.query_one(CompletionList)
        await pilot.press(*"/model ")
        await wait_until(pilot, lambda: app.session.model_choices.listed is not None, timeout=10)
        await pilot.press("f")  # asked again, now with the provider's list
        await wait_until(pilot, lambda: [i.label for i in completions.items] == ["claude-future-9"])
        await pilot.press("tab")
        assert app.query_one(Prompt).text == "/model claude-future-9"
        app.query_one(Prompt).load_text("/model haiku")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.session.model == "claude-haiku-4-5" == app.query_one(StatusBar).model
