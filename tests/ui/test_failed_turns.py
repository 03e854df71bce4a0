"""A failed turn shows its error once, where it happened; its prompt goes back in the input, and f6
sends it again. Through the real SDK against the loopback fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, Reply
from tests.ui.helpers import make_app as make_offline_app
from tests.ui.helpers import screen_text
from tui_assist.core.model import ModelRequest, ModelResponse, StreamSink
from tui_assist.session.config import Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.turn_parts import TurnBadge


@pytest.fixture
def workdir(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


def _errors_notified(app: TuiAssistApp) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "error"]


async def test_a_failed_turn_shows_its_error_once_and_f6_sends_the_prompt_again(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Error(400, message="prompt is too long"), Reply("Shorter now, and answered."))
    app = TuiAssistApp(Settings(provider="anthropic", workdir=workdir))
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"summarise the repo", "enter")
        await _settle(app, pilot)

        text = screen_text(app)
        assert text.count("prompt is too long") == 1  # inline, once: no toast repeats it
        assert _errors_notified(app) == []
        badge = app.query_one(TurnBadge)
        assert badge.has_class("-error")
        assert "The prompt is back in the input; f6 sends it again." in text
        assert app.query_one(Prompt).text == "summarise the repo"
        assert "f6" in text and "Retry" in text  # offered in the footer
        assert app.session.conversation.messages == []  # a failed turn leaves the history intact

        await pilot.press("f6")
        await _settle(app, pilot)
        assert "Shorter now, and answered." in screen_text(app)
        assert app.query_one(Prompt).text == ""
        assert [m.text for m in app.session.conversation.messages] == [
            "summarise the repo",
            "Shorter now, and answered.",
        ]
        assert not app.screen.check_action("retry_turn", ())  # nothing to retry any more


async def test_text_typed_since_the_failure_is_kept_and_the_retry_still_sends_the_failed_prompt(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Error(400, message="bad request"), Reply("Answered."))
    app = TuiAssistApp(Settings(provider="anthropic", workdir=workdir))
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"first", "enter")
        await _settle(app, pilot)
        editor = app.query_one(Prompt)
        editor.clear()
        await pilot.press(*"draft")
        await pilot.press("f6")
        await _settle(app, pilot)
        assert editor.text == "draft"
        assert fake.requests[-1].messages[-1]["content"][0]["text"] == "first"


class _BrokenProvider:
    """A provider with a bug: not a provider error, an exception the app did not expect."""

    name = "broken"
    model = "broken"

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        raise RuntimeError("boom in the provider")

    async def aclose(self) -> None:
        return None


async def test_an_unexpected_exception_is_one_inline_error_too() -> None:
    app = make_offline_app(provider=_BrokenProvider())
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"hello", "enter")
        await _settle(app, pilot)
        pane = app.query_one(Conversation)
        shown = [line for line in screen_text(app).splitlines() if "boom in the provider" in line]
        # Once in the conversation (the agent tree marks the failed nodes, beside it).
        assert len([line for line in shown if "✗ error: boom in the provider" in line]) == 1
        assert [n for n in pane.query(TurnBadge) if "boom" in str(n.render())] != []
        assert _errors_notified(app) == []
        assert app.query_one(Prompt).text == "hello"
        assert app.screen.check_action("retry_turn", ())
