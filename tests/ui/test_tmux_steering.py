"""Steering in the real program: a correction typed during a multi-call turn joins the turn's next
model request, changes what the agent does next, and the pane shows where it joined."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, RecordedRequest, Reply, Text, ToolUse
from tests.tmux_harness import TmuxApp
from tests.wait import wait_until_sync

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CORRECTION = "name it b.txt instead"


def write_as_told(request: RecordedRequest) -> Reply:
    """The model's second call: it writes the file the user's latest words name."""
    name = "b.txt" if CORRECTION in request.all_text() else "a.txt"
    return Reply([ToolUse("bash", {"command": f"echo hi > {name}"})])


def test_a_correction_typed_mid_turn_joins_its_next_request_and_changes_the_next_call(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    first = Reply([Text("Looking first."), ToolUse("bash", {"command": "echo looked"})], hold_after=3)
    fake.add(first, write_as_told, Reply("Wrote the file."))
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
        app.type("write hi to a.txt")
        app.key("Enter")
        wait_until_sync(first.held.is_set, 20, what="the first model call streams")
        app.type(CORRECTION)
        app.key("Enter")
        app.wait_for(f"queued · {CORRECTION}", timeout=10)
        first.release()
        screen = app.wait_for("Wrote the file.", timeout=20)
        assert f"↳ joined · {CORRECTION}" in screen
        assert f"queued · {CORRECTION}" not in screen
        app.key("C-q")
    first_text, second, third = (r.all_text() for r in fake.requests)
    assert CORRECTION not in first_text
    assert CORRECTION in second  # joined the turn's next request, after the tool's result
    assert fake.requests[1].messages[-1]["content"][0]["type"] == "tool_result"
    assert CORRECTION in third and len(fake.requests) == 3  # no turn of its own
    assert (work / "b.txt").read_text() == "hi\n" and not (work / "a.txt").exists()
