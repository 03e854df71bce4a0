"""The status line command: the state on stdin, its first line back, failures as one line, and
never set by a project's files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tui_assist.session import status_line
from tui_assist.session.config_source import ConfigSource
from tui_assist.session.status_line import StatusLineError, StatusState, run_status_line

STATE = StatusState(
    conversation_id="c1",
    model="claude-sonnet-4-6",
    workdir=Path("/tmp"),
    state="idle",
    mode="default",
    refine=False,
    cost_usd=0.25,
    max_budget_usd=1.0,
    input_tokens=10,
    output_tokens=2,
    context=0.1,
    version="1",
)


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "line.py"
    path.write_text(body)
    return f"{sys.executable} {path}"


async def test_the_command_reads_the_state_and_its_first_line_is_shown(tmp_path: Path) -> None:
    command = script(
        tmp_path,
        "import json, os, sys\n"
        "s = json.load(sys.stdin)\n"
        "print(f\"{s['model']['display_name']} ${s['cost']['total_cost_usd']} \\x1b[31m{os.environ.get('ANTHROPIC_API_KEY')}\")\n"
        "print('second line')\n",
    )
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    line = await run_status_line(command, STATE.to_json(), cwd=tmp_path, env=env)
    assert line == "claude-sonnet-4-6 $0.25 None"  # no key; colours dropped


def test_the_state_is_claude_codes_shape() -> None:
    data = json.loads(STATE.to_json())
    assert data["model"] == {"id": "claude-sonnet-4-6", "display_name": "claude-sonnet-4-6"}
    assert data["workspace"]["current_dir"] == "/tmp" and data["session_id"] == "c1"


async def test_a_failing_command_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StatusLineError, match="exit status 3: broken"):
        await run_status_line(
            script(tmp_path, "import sys\nprint('broken', file=sys.stderr)\nsys.exit(3)\n"),
            "{}",
            cwd=tmp_path,
            env=dict(os.environ),
        )


async def test_a_hanging_command_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status_line, "TIMEOUT", 0.5)
    with pytest.raises(StatusLineError, match="took over"):
        await run_status_line("sleep 30", "{}", cwd=tmp_path, env=dict(os.environ))


def test_a_project_cannot_set_it(tmp_path: Path) -> None:
    """Only the user's config file sets it: a project's settings files are not read for it."""
    work = tmp_path / "work"
    (work / ".tui-assist").mkdir(parents=True)
    (work / ".tui-assist" / "settings.toml").write_text('[status_line]\ncommand = "touch pwned"\n')
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text('{"statusLine": {"type": "command", "command": "x"}}')
    user = tmp_path / "config.toml"
    assert ConfigSource.read({"workdir": str(work)}, path=user).settings().status_line.command is None
    user.write_text('[status_line]\ncommand = "echo mine"\n')
    assert ConfigSource.read({"workdir": str(work)}, path=user).settings().status_line.command == "echo mine"
