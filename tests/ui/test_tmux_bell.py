"""The notification in the real program: a turn that ends while the terminal is unfocused rings
tmux's bell (tmux marks the window), one that ends while it is focused does not."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.tmux_harness import TmuxApp
from tests.wait import wait_until_sync

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def prompt_border(app: TmuxApp) -> str:
    """The prompt box's top edge as drawn, colours included: it shows whether the prompt has focus."""
    return next(line for line in app.screen(styled=True).splitlines() if "▔▔▔" in line)


def test_a_turn_ending_unfocused_rings_and_one_ending_focused_does_not(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    away = Reply("Done while you were away.", hold_after=3)
    fake.add(Reply("Done while you looked."), away)
    work, config = tmp_path / "work", tmp_path / "config" / "tui-assist"
    work.mkdir()
    config.mkdir(parents=True)
    # the bell whatever terminal runs the tests (`auto` picks OSC 9 under iTerm2, even through tmux)
    (config / "config.toml").write_text('notify = "bell"\n')
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "TUI_ASSIST_HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
    }
    command = f"{sys.executable} -m tui_assist --workdir {work}"
    with TmuxApp(command, width=120, height=36, env=env) as app:
        app.wait_for("Refine OFF", timeout=30)
        app.type("first")
        app.key("Enter")
        app.wait_for("Done while you looked.", timeout=20)
        wait_until_sync(lambda: app.display("#{pane_title}") == "tui-assist · idle", 10, what="idle")

        app.type("second")  # a key press tells the app it has focus, so the focus leaves after it
        app.key("Enter")
        wait_until_sync(away.held.is_set, 20, what="the second turn streams")
        assert app.display("#{pane_title}") == "tui-assist · running"
        assert app.display("#{window_bell_flag}") == "0"  # the turn that ended focused rang nothing
        focused = prompt_border(app)
        app.focus(False)  # the user switched to another window
        wait_until_sync(lambda: prompt_border(app) != focused, 10, what="the app drew itself unfocused")
        away.release()
        wait_until_sync(lambda: app.display("#{window_bell_flag}") == "1", 20, what="the bell")
        assert app.display("#{pane_title}") == "tui-assist · done"
        app.focus(True)
        wait_until_sync(lambda: app.display("#{pane_title}") == "tui-assist · idle", 10, what="idle again")
        app.key("C-q")
