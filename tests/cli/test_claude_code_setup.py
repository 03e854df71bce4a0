"""A Claude Code user's setup, as it is, under `tui-assist ask`: a project and a home directory
with settings (hooks, permissions), nested commands, an agent with an alias and Claude Code tool
names, a skill and a plugin installed from a local folder. A real subprocess, real hook scripts,
the real SDK and the loopback fake that records every request."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tui_assist.cli import main
from tui_assist.core.claude_names import MODEL_ALIASES

HOOK = """#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as log:
    log.write(json.dumps({"who": sys.argv[1], "event": data["hook_event_name"],
                          "tool_name": data.get("tool_name"), "tool_input": data.get("tool_input"),
                          "plugin_root": os.environ.get("CLAUDE_PLUGIN_ROOT")}) + "\\n")
"""

COMMAND = """---
description: Draft a commit message
argument-hint: KIND [NOTES]
allowed-tools: Bash(git status:*)
model: haiku
---
Write a $1 commit message. Notes: $ARGUMENTS
"""

AGENT = """---
name: reviewer
description: >-
  Reviews a change for bugs;
  never edits.
tools: Read, Grep, Glob
disallowedTools: [Write]
model: haiku
color: blue
---
You review code. REVIEWER-PROMPT
"""


def _write(path: Path, text: str, *, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _plugin(root: Path) -> Path:
    """A plugin in Claude Code's layout: a command, a skill, and a hook naming its own script."""
    _write(root / ".claude-plugin" / "plugin.json", json.dumps({"name": "greet", "version": "1.0.0"}))
    _write(root / "commands" / "hello.md", "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS\n")
    _write(
        root / "skills" / "tone" / "SKILL.md", "---\nname: tone\ndescription: House tone\n---\nTONE-BODY\n"
    )
    _write(root / "hook.py", HOOK, executable=True)
    hook = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hook.py plugin"}
    hooks = {"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [hook]}]}}
    _write(root / "hooks" / "hooks.json", json.dumps(hooks))
    return root


@pytest.fixture
def setup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    """The project `work`, the user's `~/.claude` (`$CLAUDE_CONFIG_DIR`), the plugin installed."""
    work = tmp_path / "work"
    claude_home = Path(os.environ["CLAUDE_CONFIG_DIR"])
    _write(work / ".claude" / "hooks" / "log.py", HOOK, executable=True)
    project_hook = {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/log.py project'}
    settings = {
        "permissions": {"deny": ["Bash(touch:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [project_hook]}]},
    }
    _write(work / ".claude" / "settings.json", json.dumps(settings))
    _write(work / ".claude" / "commands" / "git" / "commit-msg.md", COMMAND)
    _write(claude_home / "agents" / "review" / "reviewer.md", AGENT)
    source = _plugin(tmp_path / "greet-src")
    assert main(["plugin", "install", str(source), "--yes"]) == 0
    capsys.readouterr()
    return {"work": work, "log": tmp_path / "hooks.jsonl", "plugin": source}


def _runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _messages(fake: FakeAnthropic) -> list[Any]:
    return [r for r in fake.requests if r.path == "/v1/messages"]


def _text(request: Any) -> str:
    return json.dumps(request.messages[-1]["content"])


def test_a_nested_command_expands_on_its_model_and_hooks_see_claude_codes_input(
    fake: FakeAnthropic, setup: dict[str, Path]
) -> None:
    work, log = setup["work"], setup["log"]
    create = {"command": "create", "path": "MSG.txt", "file_text": "fix: typo\n"}
    fake.add(
        Reply([ToolUse("bash", {"command": "touch denied.txt"})]),
        Reply([ToolUse("str_replace_based_edit_tool", create)]),
        Reply("Drafted."),
    )
    env = {"HOOK_LOG": str(log)}
    proc = ask(
        "--json", "--yes", "--trust-project", '/commit-msg fix "be terse"', fake=fake, cwd=work, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Drafted."

    first = _messages(fake)[0]
    assert first.body["model"] == MODEL_ALIASES["haiku"]  # the command's `model: haiku`
    (prompt,) = [b["text"] for b in first.messages[0]["content"] if b.get("type") == "text"]
    assert prompt.startswith('Write a fix commit message. Notes: fix "be terse"')
    assert "---" not in prompt and "allowed-tools" not in prompt  # front matter is read, never sent

    # `.claude/settings.json`'s deny rule holds under --yes.
    assert not (work / "denied.txt").exists()
    assert (work / "MSG.txt").read_text() == "fix: typo\n"
    project, plugin = _runs(log)
    assert (project["who"], project["event"], project["tool_name"]) == ("project", "PreToolUse", "Write")
    assert project["tool_input"] == {"file_path": str(work / "MSG.txt"), "content": "fix: typo\n"}
    installed = Path(os.environ["TUI_ASSIST_HOME"]) / "plugins" / "installed" / "greet"
    assert (plugin["who"], plugin["event"], plugin["tool_name"]) == ("plugin", "PostToolUse", "Write")
    assert plugin["plugin_root"] == str(installed)


def test_a_plugin_command_a_skill_on_demand_and_a_sub_agent_on_its_model_and_tools(
    fake: FakeAnthropic, setup: dict[str, Path]
) -> None:
    work = setup["work"]
    fake.add(
        Reply([ToolUse("skill", {"name": "greet:tone"})]),
        Reply(
            [ToolUse("agent", {"description": "review", "prompt": "Review it", "subagent_type": "reviewer"})]
        ),
        Reply("Looks fine."),  # the sub-agent
        Reply("Hello, world!"),
    )
    proc = ask("--json", "/greet:hello world", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    main_first, main_second, sub, _ = _messages(fake)

    assert "Say hello to world" in _text(main_first)
    (skill_tool,) = [t for t in main_first.tools if t["name"] == "skill"]
    assert "- greet:tone: House tone" in skill_tool["description"]
    assert "TONE-BODY" not in json.dumps(main_first.body) and "TONE-BODY" in _text(main_second)

    (agent_tool,) = [t for t in main_first.tools if t["name"] == "agent"]
    assert "- reviewer: Reviews a change for bugs; never edits." in agent_tool["description"]
    assert sub.body["model"] == MODEL_ALIASES["haiku"]
    assert "REVIEWER-PROMPT" in json.dumps(sub.system)
    assert sorted(t["name"] for t in sub.tools) == ["glob", "grep", "str_replace_based_edit_tool"]
    assert "agent file" not in proc.stderr  # every key of the agent file was honoured


def test_a_disabled_plugin_brings_nothing(
    fake: FakeAnthropic, setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugin", "disable", "greet"]) == 0
    proc = ask("/greet:hello world", fake=fake, cwd=setup["work"])
    assert proc.returncode != 0 and "unknown command /greet:hello" in proc.stderr
    assert _messages(fake) == []
