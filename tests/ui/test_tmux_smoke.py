"""The real program in a real terminal: type a prompt, toggle Refine, read the tree off the screen."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply
from tests.tmux_harness import TmuxApp
from tests.wait import wait_until_sync

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


def _recorded(path: Path) -> list[dict[str, Any]]:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):  # not written yet, or being written
        return []


def test_typing_during_a_slow_turn_queues_the_prompt_whole(tmp_path: Path) -> None:
    """The real program, the fake as a process: text typed and pasted while an answer streams
    arrives whole, as the next request; then ctrl+c twice quits."""
    steps = tmp_path / "steps.json"
    slow = "Streaming slowly, word by word, so there is time to type. " * 2
    steps.write_text(
        json.dumps([{"reply": [{"text": slow, "deltas": 40}], "delay": 0.1}, {"reply": "Got both parts."}])
    )
    record, port_file = tmp_path / "requests.json", tmp_path / "port"
    root = Path(__file__).resolve().parents[2]
    fake = subprocess.Popen(
        [sys.executable, str(root / "tests" / "fakes" / "anthropic.py"), "--script", str(steps)]
        + ["--record", str(record), "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_until_sync(lambda: port_file.exists() or fake.poll() is not None, 30, what="the fake started")
        assert fake.poll() is None, "the fake did not start"
        work = tmp_path / "work"
        work.mkdir()
        env = {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port_file.read_text()}",
            "TUI_ASSIST_HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "TERM": "xterm-256color",
        }
        with TmuxApp(
            f"{sys.executable} -m tui_assist --workdir {work}", width=110, height=32, env=env
        ) as app:
            app.wait_for("idle", timeout=30)
            app.type("first part")
            app.key("Enter")
            app.type(" second part")  # at once, while the first answer starts streaming
            app.paste("\nand a pasted line\nand another")
            app.key("Enter")
            app.wait_for("queued · second part", timeout=10)
            assert len(_recorded(record)) <= 1  # still streaming the first answer
            wait_until_sync(lambda: len(_recorded(record)) >= 2, 30, what="the second request")
            app.wait_for("Got both parts.", timeout=10)
            app.wait_for("○ idle", timeout=10)  # the turn is stored (and snapshotted), not just shown
            app.key("C-c")
            app.wait_for("again to quit", timeout=5)
            app.key("C-c")
            wait_until_sync(app.pane_dead, 10, what="ctrl+c twice quitting")
    finally:
        fake.terminate()
        fake.wait(10)
    first, second = _recorded(record)
    assert first["body"]["messages"][-1]["content"][0]["text"] == "first part"
    sent = [m["content"][0]["text"] for m in second["body"]["messages"]]
    assert sent == ["first part", slow, "second part\nand a pasted line\nand another"]


def test_a_bang_command_runs_in_the_shell_and_is_context_for_the_next_prompt(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(Reply("It printed the marker."))
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "config" / "tui-assist").mkdir(parents=True)
    (tmp_path / "config" / "tui-assist" / "config.toml").write_text(
        'sandbox = "off"\n[permissions]\nallow = ["bash(echo *)"]\n'
    )
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
        app.type("!echo bang-$((6*7))")
        app.key("Enter")
        app.wait_for("Allow bash?", timeout=30)  # the rules can't vouch for $((...)): the same dialog
        app.key("a")
        screen = app.wait_for("bang-42", timeout=30)
        assert "bash: echo bang-$((6*7))" in screen
        assert fake.requests == []  # no model call
        app.type("what did it print?")
        app.key("Enter")
        app.wait_for("It printed the marker.", timeout=30)
        app.key("C-q")
    assert len(fake.requests) == 1
    assert "<bash-input>echo bang-$((6*7))</bash-input>" in fake.requests[0].all_text()
    assert "bang-42" in fake.requests[0].all_text()
