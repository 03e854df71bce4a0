"""`/model` and the spend cap in the real program: `/model` switches mid-conversation (the next
request carries the new id), and after `/budget 0.01` a conversation that has spent more stops
its next turn before any request goes out."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Usage
from tests.tmux_harness import TmuxApp

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

COSTLY = Usage(input_tokens=20_000, output_tokens=0, cache_creation_input_tokens=0, cache_read_input_tokens=0)
"""More than a cent at any known model's price."""


def test_model_switches_mid_conversation_and_a_cent_cap_stops_the_next_turn(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(Reply("First answer."), Reply("Second answer.", usage=COSTLY))
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "TUI_ASSIST_HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
    }
    command = f"{sys.executable} -m tui_assist --workdir {work} --model claude-sonnet-4-6"
    with TmuxApp(command, width=120, height=36, env=env) as app:
        app.wait_for("Refine OFF", timeout=30)
        app.type("first")
        app.key("Enter")
        app.wait_for("First answer.", timeout=20)
        app.type("/model claude-haiku-4-5")
        app.key("Escape")  # close the completions, keep the text
        app.key("Enter")
        app.wait_for("Model: claude-haiku-4-5", timeout=10)
        app.type("second")
        app.key("Enter")
        app.wait_for("Second answer.", timeout=20)
        app.type("/budget 0.01")
        app.key("Escape")
        app.key("Enter")
        app.type("third")
        app.key("Enter")
        app.wait_for("spend cap reached", timeout=20)
        app.key("C-q")
    sent = [r.body["model"] for r in fake.requests if r.path == "/v1/messages"]  # not the models list
    assert sent == ["claude-sonnet-4-6", "claude-haiku-4-5"]  # and none for the capped turn
