"""A turn that ends while the terminal is unfocused notifies it; the title follows the state.
Through the real SDK against the loopback fake; focus as Textual's `AppBlur`/`AppFocus` set it."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.ui.helpers import wait_until
from tests.ui.test_meter import _settle, workdir  # noqa: F401 - the fixture
from tui_assist.core.terminal_signals import title_sequence
from tui_assist.session.config import Settings
from tui_assist.ui.app import TuiAssistApp


async def test_a_turn_ending_unfocused_notifies_and_focus_restores_the_title(
    fake: FakeAnthropic,
    workdir: Path,  # noqa: F811
) -> None:
    reply = Reply("The answer is 42.", hold_after=3)
    fake.add(reply)
    app = TuiAssistApp(Settings(provider="anthropic", workdir=workdir, notify="osc9"))
    written: list[str] = []
    app.terminal_signals.write = written.append
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"hi", "enter")
        await wait_until(pilot, lambda: title_sequence("running") in "".join(written), timeout=10)
        app.post_message(events.AppBlur())  # the user switched to another window
        await wait_until(pilot, lambda: not app.app_focus, timeout=5)
        reply.release()
        notified = "\x1b]9;tui-assist: done: The answer is 42.\x07"
        await wait_until(pilot, lambda: notified in "".join(written), timeout=10)
        assert title_sequence("done") in "".join(written)
        app.post_message(events.AppFocus())
        await wait_until(pilot, lambda: written[-1] == title_sequence("idle"), timeout=5)
        assert sum("\x1b]9;" in w for w in written) == 1
