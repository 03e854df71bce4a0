"""The notification in the real program: a turn that took over `notify_after` seconds rings tmux's
bell (tmux marks the window), a quick one ending while the terminal is focused does not.

The unfocused case is `tests/ui/test_terminal_signals_ui.py` (Pilot): in tmux, under load, the app
sometimes never took the focus-out report the test wrote to its pane."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.tmux_harness import TmuxApp
from tests.wait import wait_until_sync

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_a_long_turn_rings_and_a_quick_focused_one_does_not(fake: FakeAnthropic, tmp_path: Path) -> None:
    away = Reply("Done while you were away.", hold_after=3)
    fake.add(Reply("Done while you looked."), away)
    work, config = tmp_path / "work", tmp_path / "config" / "tui-assist"
    work.mkdir()
    config.mkdir(parents=True)
    # the bell whatever terminal runs the tests (`auto` picks OSC 9 under iTerm2, even through tmux)
    (config / "config.toml").write_text('notify = "bell"\nnotify_after = 5\n')
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

        app.type("second")
        app.key("Enter")
        wait_until_sync(away.held.is_set, 20, what="the second turn streams")
        assert app.display("#{pane_title}") == "tui-assist · running"
        assert app.display("#{window_bell_flag}") == "0"  # the quick turn that ended focused rang nothing
        time.sleep(5.5)  # the user waits past `notify_after` (the point of the test, not a sync)
        away.release()
        wait_until_sync(lambda: app.display("#{window_bell_flag}") == "1", 20, what="the bell")
        app.key("C-q")
