"""The real program in a real terminal: a dev server started in the background keeps running while
the agent edits and tests, shows above the status bar, and is gone (by PID) after quit."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.tmux_harness import TmuxApp
from tests.tools.processes import process_alive
from tests.wait import wait_until_sync

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SERVER = "echo $$ > server.pid; while true; do echo dev-server-ready; sleep 0.2; done"


def test_a_background_dev_server_outlives_the_turn_and_not_the_program(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(
        Reply([ToolUse("bash", {"command": SERVER, "run_in_background": True})]),
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "app.py", "file_text": "x = 1\n"},
                )
            ]
        ),
        Reply([ToolUse("bash", {"command": "test -f app.py && echo tests-pass"})]),
        Reply("The server runs and the tests pass."),
    )
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "TUI_ASSIST_HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
    }
    command = f"{sys.executable} -m tui_assist --workdir {work} --mode bypass"
    with TmuxApp(command, width=120, height=36, env=env) as app:
        app.wait_for("Refine OFF", timeout=30)
        app.type("start the server, then edit and test")
        app.key("Enter")
        app.wait_for("tests pass.", timeout=30)
        pid = int((work / "server.pid").read_text())
        screen = app.wait_for("dev-server-ready", timeout=10)
        assert "⚙ bash_1" in screen and process_alive(pid)  # after the turn: still running
        app.key("C-q")
        wait_until_sync(app.pane_dead, 30, what="the program exited")
    assert not process_alive(pid)
