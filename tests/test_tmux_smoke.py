"""The real program in a real terminal: type a prompt, toggle Refine, read the tree off the screen."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.fake_anthropic import FakeAnthropic, Reply
from tests.tmux_harness import TmuxApp

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_refine_turn_in_tmux(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply("The answer is forty-two."), Reply("PASS\nGrounded."))
    work = tmp_path / "work"
    work.mkdir()
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
        app.key("C-r")
        app.wait_for("Refine ON", timeout=10)
        app.type("what is the answer?")
        app.key("Enter")
        screen = app.wait_for("round 1 · PASS", timeout=30)
        assert "Refine turn" in screen  # the flow panel names the turn; the tree shows its prompt
        assert "✓ what is the answer?" in screen
        assert "critic" in screen
        app.wait_for("forty-two", timeout=10)
        app.key("C-q")
    assert len(fake.requests) == 2 and fake.requests[1].body.get("tools") in (None, [])
