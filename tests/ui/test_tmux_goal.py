"""A goal in a real terminal: `/goal` with a pytest check ends achieved on the attempt that fixes it."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.test_ask_goal import FIX, PYTEST, repo
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.tmux_harness import TmuxApp

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_goal_in_tmux(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = repo(tmp_path)
    fake.add(
        Reply("It looks right to me."),
        Reply("PASS\nfine"),  # overruled: the check still fails
        Reply([ToolUse("bash", {"command": FIX})]),
        Reply("add() adds now."),
        Reply("PASS\n[check 1] exited 0"),
    )
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "TUI_ASSIST_HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
    }
    command = f"{shlex.quote(sys.executable)} -m tui_assist --mode bypass --workdir {shlex.quote(str(work))}"
    with TmuxApp(command, width=130, height=40, env=env) as app:
        app.wait_for("Refine OFF", timeout=30)
        app.type(f'/goal make the tests pass --check "{PYTEST}"')
        app.key("Enter")
        screen = app.wait_for("attempt 2 · PASS", timeout=60)
        assert "attempt 1 · REVISE" in screen and "Goal turn" in screen
        assert "check 1 exited 1" in screen  # the failing check, in the tree
        app.key("C-q")
    assert "a + b" in (work / "calc.py").read_text()
    assert len(fake.requests) == 5
