"""Claude Code hooks as a Claude Code user has them: `.claude/settings*.json`, through `tui-assist ask`.

A real subprocess, real hook scripts, the real SDK and the loopback fake; the hooks speak Claude
Code's vocabulary and their JSON output decides.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse

MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"

HOOK = """#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as log:
    log.write(json.dumps({"mode": sys.argv[1], "payload": data,
                          "project_dir": os.environ.get("CLAUDE_PROJECT_DIR")}) + "\\n")
mode = sys.argv[1]
if mode == "deny-bash" and data["tool_name"] == "Bash":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                      "permissionDecisionReason": "no shell in this repo: use the editor"}}))
elif mode == "stop-once" and not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests first"}))
elif mode == "allow":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                      "decision": {"behavior": "allow"}}}))
"""


def ask(*args: str, fake: FakeAnthropic, cwd: Path, log: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "HOOK_LOG": str(log),
    }
    return subprocess.run(
        [sys.executable, "-m", "tui_assist", "ask", *args, "--workdir", str(cwd)],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )


def hook_script(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hook.py"
    path.write_text(HOOK)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def claude_settings(path: Path, hooks: dict[str, list[dict[str, Any]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}, indent=2))


def group(command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    """One Claude Code matcher group holding one command handler."""
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


def runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_a_project_pre_tool_use_deny_stops_bash_and_edits_are_seen_as_claude_code_names(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    hook_script(work / ".claude" / "hooks")
    project_hook = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/hook.py'
    claude_settings(
        work / ".claude" / "settings.json",
        {
            "PreToolUse": [
                group(f"{project_hook} deny-bash", "Bash", timeout=10, statusMessage="checking the command"),
                group(f"{project_hook} log", "Edit|MultiEdit|Write"),
            ]
        },
    )
    (work / "notes.txt").write_text("colour\n")
    fake.add(
        Reply([ToolUse("bash", {"command": "touch made.txt"})]),
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "str_replace", "path": "notes.txt", "old_str": "colour", "new_str": "color"},
                )
            ]
        ),
        Reply("Done."),
    )
    log = tmp_path / "hooks.jsonl"
    proc = ask("--yes", "--trust-project", "fix the spelling", fake=fake, cwd=work, log=log)
    assert proc.returncode == 0, proc.stderr
    assert "Done." in proc.stdout

    # The deny stopped bash even under --yes; the model got the hook's reason as the tool result.
    assert not (work / "made.txt").exists()
    result = fake.requests[1].messages[-1]["content"][0]
    assert result.get("is_error") is True
    assert "no shell in this repo: use the editor" in json.dumps(result["content"])
    assert (work / "notes.txt").read_text() == "color\n"

    bash_run, edit_run = runs(log)
    assert bash_run["payload"]["tool_name"] == "Bash"
    assert bash_run["payload"]["tool_input"] == {"command": "touch made.txt"}
    assert edit_run["mode"] == "log"
    assert edit_run["payload"]["tool_name"] == "Edit"
    assert edit_run["payload"]["tool_input"] == {
        "file_path": str(work / "notes.txt"),
        "old_string": "colour",
        "new_string": "color",
        "replace_all": False,
    }
    assert bash_run["project_dir"] == str(work) and edit_run["project_dir"] == str(work)
    assert "statusMessage" not in proc.stderr  # a key that needs nothing loads silently


def test_a_stop_hook_block_makes_the_model_go_on_with_its_reason(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    hook_script(work / ".claude" / "hooks")
    claude_settings(
        work / ".claude" / "settings.local.json",
        {"Stop": [group('"$CLAUDE_PROJECT_DIR"/.claude/hooks/hook.py stop-once')]},
    )
    fake.add(Reply("Finished."), Reply("Tests pass; finished."))
    log = tmp_path / "hooks.jsonl"
    proc = ask("--json", "--trust-project", "do it", fake=fake, cwd=work, log=log)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Tests pass; finished."
    requests = [r for r in fake.requests if r.path == "/v1/messages"]
    assert len(requests) == 2
    assert requests[1].messages[-1]["content"][0]["text"] == "run the tests first"
    assert [run["payload"]["stop_hook_active"] for run in runs(log)] == [False, True]


def test_untrusted_project_claude_settings_hooks_do_not_run(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    claude_settings(work / ".claude" / "settings.json", {"Stop": [group(f"touch {work / 'pwned'}")]})
    fake.add(Reply("Hi."))
    proc = ask("hi", fake=fake, cwd=work, log=tmp_path / "hooks.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert not (work / "pwned").exists()
    assert "this project's hooks, MCP servers and agents did not run: it is not trusted" in proc.stderr


def test_user_claude_hooks_match_task_webfetch_and_mcp_tools(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    hook = hook_script(tmp_path / "scripts")
    claude_settings(
        tmp_path / "claude-home" / "settings.json",  # the user's own ~/.claude: no trust needed
        {
            "PreToolUse": [
                group(f"{hook} Task", "Task"),
                group(f"{hook} WebFetch", "WebFetch"),
                group(f"{hook} mcp", "mcp__.*"),
            ],
            "PostToolUseFailure": [group(f"{hook} failed", "WebFetch")],
            "SubagentStart": [group(f"{hook} subagent-start", "general-purpose")],
            "SubagentStop": [group(f"{hook} subagent-stop")],
            "SessionEnd": [group(f"{hook} end")],
        },
    )
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"[mcpServers.srv]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(MCP_SERVER))}]\n"
    )
    fake.add(
        Reply([ToolUse("agent", {"description": "look", "prompt": "look around"})]),
        Reply("Nothing there."),
        Reply([ToolUse("web_fetch", {"url": "http://127.0.0.1:9/page"})]),
        Reply([ToolUse("srv__echo", {"text": "hi"})]),
        Reply("All done."),
    )
    log = tmp_path / "hooks.jsonl"
    proc = ask("--yes", "go", fake=fake, cwd=work, log=log)
    assert proc.returncode == 0, proc.stderr
    seen = [
        (run["mode"], run["payload"]["hook_event_name"], run["payload"].get("tool_name")) for run in runs(log)
    ]
    assert seen == [
        ("Task", "PreToolUse", "Task"),
        ("subagent-start", "SubagentStart", None),
        ("subagent-stop", "SubagentStop", None),
        ("WebFetch", "PreToolUse", "WebFetch"),
        ("failed", "PostToolUseFailure", "WebFetch"),
        ("mcp", "PreToolUse", "mcp__srv__echo"),
        ("end", "SessionEnd", None),
    ]
    task = runs(log)[0]["payload"]
    assert task["tool_input"] == {"description": "look", "prompt": "look around"}
    assert runs(log)[1]["payload"]["agent_type"] == "general-purpose"
    assert runs(log)[5]["payload"]["tool_input"] == {"text": "hi"}


def test_a_permission_request_hook_answers_for_the_person_and_notification_fires_otherwise(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    hook = hook_script(tmp_path / "scripts")
    claude_settings(
        tmp_path / "claude-home" / "settings.json",
        {
            "PermissionRequest": [group(f"{hook} allow", "Bash")],
            "Notification": [group(f"{hook} notify", "permission_prompt")],
        },
    )
    fake.add(
        Reply([ToolUse("bash", {"command": "touch allowed.txt"})]),
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "asked.txt", "file_text": "x"},
                )
            ]
        ),
        Reply("Done."),
    )
    log = tmp_path / "hooks.jsonl"
    proc = ask("go", fake=fake, cwd=work, log=log)  # headless without --yes: nobody to ask
    assert proc.returncode == 0, proc.stderr
    assert (work / "allowed.txt").exists()
    assert not (work / "asked.txt").exists()
    seen = [
        (run["mode"], run["payload"]["tool_name"] if "tool_name" in run["payload"] else None)
        for run in runs(log)
    ]
    assert seen == [("allow", "Bash"), ("notify", None)]  # the matcher kept the edit from the allow hook
    note = runs(log)[1]["payload"]
    assert (note["notification_type"], note["message"]) == (
        "permission_prompt",
        "tui-assist needs your permission to use Write",
    )
