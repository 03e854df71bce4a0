"""`ask` with a plan and a background shell: `todo` and `shell` lines; ask waits for no shell, kills them at exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.tools.processes import process_alive


def test_ask_kills_its_background_shells_at_exit_and_streams_them(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = "echo $$ > server.pid; while true; do echo serving; sleep 0.05; done"
    plan = {"todos": [{"content": "Start the server", "status": "in_progress"}]}
    fake.add(
        Reply([ToolUse("todo_write", plan)]),
        Reply([ToolUse("bash", {"command": server, "run_in_background": True})]),
        Reply([ToolUse("bash_output", {"shell_id": "bash_1"})]),
        Reply("The server runs."),
    )
    env = dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    done = subprocess.run(
        [sys.executable, "-m", "tui_assist", "ask", "--workdir", str(work), "--yes"]
        + ["--output-format", "stream-json", "start the server"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    shells = [(line["shell_id"], line["status"]) for line in lines if line["type"] == "shell"]
    assert shells == [("bash_1", "running"), ("bash_1", "killed")]
    assert lines[-1]["type"] == "result" and lines[-1]["answer"] == "The server runs."
    [todo] = [line for line in lines if line["type"] == "todo"]
    assert todo["todos"] == plan["todos"] and todo["call_id"]
    results = [line["output"] for line in lines if line["type"] == "tool_result"]
    assert "bash_1" in results[1] and "bash_1: running" in results[2]
    assert not process_alive(int((work / "server.pid").read_text()))
