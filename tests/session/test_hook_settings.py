"""Reading hooks in Claude Code's shape (JSON and TOML) and this program's, and the warnings for what cannot be honoured."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tui_assist.core.claude_names import (
    claude_code_name,
    mcp_parts,
    our_tool_name,
    tool_input_for_hooks,
    tool_input_from_hooks,
)
from tui_assist.core.hooks import HookedCall
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.config_source import ConfigSource
from tui_assist.session.extensions import load_extensions
from tui_assist.session.hooks import HookDefinition, SessionHooks, claude_settings_hooks, parse_hooks

NESTED_TOML = """
[[hooks.PreToolUse]]
matcher = "Bash"
hooks = [{ type = "command", command = "check.sh", timeout = 5 }]

[[hooks.PostToolUse]]
command = "fmt.sh"
matcher = "Edit"
"""


def test_claude_codes_nested_shape_loads_from_json(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(npm test)"]},
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Edit|Write",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "a.sh",
                                    "timeout": 30,
                                    "statusMessage": "Linting",
                                },
                                {"type": "command", "command": "b.sh"},
                            ],
                        }
                    ],
                    "SessionEnd": [{"hooks": [{"type": "command", "command": "bye.sh"}]}],
                },
            }
        )
    )
    hooks, warnings, has_hooks = claude_settings_hooks(path, "project")
    assert warnings == [] and has_hooks
    assert hooks == [
        HookDefinition("PreToolUse", "a.sh", "Edit|Write", 30.0, "project", path),
        HookDefinition("PreToolUse", "b.sh", "Edit|Write", 60.0, "project", path),
        HookDefinition("SessionEnd", "bye.sh", "", 60.0, "project", path),
    ]


def test_both_shapes_load_from_toml() -> None:
    origin = Path("/home/u/.config/tui-assist/config.toml")
    hooks, warnings = parse_hooks(tomllib.loads(NESTED_TOML)["hooks"], "user", origin)
    assert warnings == []
    assert [(h.event, h.command, h.matcher, h.timeout) for h in hooks] == [
        ("PreToolUse", "check.sh", "Bash", 5.0),
        ("PostToolUse", "fmt.sh", "Edit", 60.0),
    ]


def test_each_entry_that_cannot_be_honoured_is_one_warning_and_the_rest_loads(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    table = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Is this safe?"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "if": "Bash(git *)"}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "late.sh", "asyncRewake": True}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "odd.sh", "colour": "red"}]},
            {"matcher": "(", "hooks": [{"type": "command", "command": "bad-matcher.sh"}]},
            {"matcher": "Read", "hooks": [{"type": "command"}]},
            {"matcher": "Read", "hooks": [{"type": "command", "command": "ok.sh"}]},
        ],
        "TeammateIdle": [{"hooks": [{"type": "command", "command": "x.sh"}]}],
    }
    path.write_text(json.dumps({"hooks": table}))
    hooks, warnings, _ = claude_settings_hooks(path, "user")
    assert [h.command for h in hooks] == ["late.sh", "odd.sh", "ok.sh"]
    assert warnings == [
        f'{path}: hooks.PreToolUse[0].hooks[0]: "type": "prompt" hooks are not supported here (only "command"); ignored',
        f"{path}: hooks.PreToolUse[1].hooks[0] (guard.sh): `if` conditions are not supported here; ignored",
        f"{path}: hooks.PreToolUse[2].hooks[0] (late.sh): `asyncRewake` is not supported: it runs in line",
        f"{path}: hooks.PreToolUse[3].hooks[0] (odd.sh): unknown key 'colour' ignored",
        f"{path}: hooks.PreToolUse[4]: matcher '(' is not a regular expression (missing ), unterminated subpattern at position 0); ignored",
        f"{path}: hooks.PreToolUse[5].hooks[0]: command: field required; ignored",
        f"{path}: unknown hook event 'TeammateIdle' (one of SessionStart, SessionEnd, UserPromptSubmit, PreToolUse, "
        "PermissionRequest, PostToolUse, PostToolUseFailure, Notification, SubagentStart, SubagentStop, Stop, "
        "PreCompact); ignored",
    ]


def test_a_broken_json_file_is_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {')
    hooks, warnings, has_hooks = claude_settings_hooks(path, "project")
    assert hooks == [] and not has_hooks
    assert warnings == [
        f"{path}: not valid JSON (line 1: Expecting property name enclosed in double quotes); its hooks are ignored"
    ]


def test_a_claude_shaped_entry_in_the_users_toml_neither_breaks_the_config_nor_is_lost(
    tmp_path: Path,
) -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(NESTED_TOML + '\n[[hooks.Stop]]\nhooks = [{ type = "prompt", prompt = "done?" }]\n')
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "local.sh"}]}]}})
    )
    settings = ConfigSource.read({"workdir": str(work), "data_dir": str(tmp_path / "data")}).settings()
    found = load_extensions(settings, config.parent, tmp_path / "data")
    assert [(h.event, h.command, h.source) for h in found.hooks] == [
        ("PreToolUse", "check.sh", "user"),
        ("PostToolUse", "fmt.sh", "user"),
        ("Stop", "local.sh", "project"),
    ]
    assert found.warnings == [
        f'{config}: hooks.Stop[0].hooks[0]: "type": "prompt" hooks are not supported here (only "command"); ignored'
    ]
    # The project's Claude Code settings wait for trust, and trust covers the file.
    assert found.trust == "untrusted" and found.project_files == [work / ".claude" / "settings.local.json"]
    assert [h.command for h in found.active_hooks()] == ["check.sh", "fmt.sh"]


def test_the_users_claude_settings_are_read_unless_import_user_is_off(tmp_path: Path) -> None:
    user = tmp_path / "claude-home" / "settings.json"  # $CLAUDE_CONFIG_DIR in the tests
    user.parent.mkdir(parents=True)
    user.write_text(
        json.dumps({"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "ding"}]}]}})
    )
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    flags = {"workdir": str(tmp_path), "data_dir": str(tmp_path / "data")}
    found = load_extensions(ConfigSource.read(flags).settings(), config.parent, tmp_path / "data")
    assert [(h.event, h.command, h.source, h.origin) for h in found.hooks] == [
        ("Notification", "ding", "user", user)
    ]
    config.write_text("[claude]\nimport_user = false\n")
    found = load_extensions(ConfigSource.read(flags).settings(), config.parent, tmp_path / "data")
    assert found.hooks == []


def test_claude_code_names_and_inputs_both_ways(tmp_path: Path) -> None:
    editor = "str_replace_based_edit_tool"
    assert claude_code_name(editor, {"command": "view"}) == "Read"
    assert claude_code_name(editor, {"command": "create"}) == "Write"
    assert claude_code_name(editor, {"command": "insert"}) == "Edit"
    assert [
        claude_code_name(n, {}) for n in ("bash", "web_fetch", "agent", "glob", "grep", "skill", "todo_write")
    ] == [
        "Bash",
        "WebFetch",
        "Task",
        "Glob",
        "Grep",
        "Skill",
        "TodoWrite",
    ]
    assert claude_code_name("srv__echo", {}, mcp_server="srv", mcp_tool="echo") == "mcp__srv__echo"
    assert [our_tool_name(n) for n in ("Read", "Bash", "Task", "WebFetch", "Nope")] == [
        editor,
        "bash",
        "agent",
        "web_fetch",
        None,
    ]
    assert mcp_parts("mcp__github__create_issue") == ("github", "create_issue")
    assert mcp_parts("mcp__github") == ("github", None)

    create = {"command": "create", "path": "src/a.py", "file_text": "x = 1\n"}
    shown = tool_input_for_hooks(editor, create, tmp_path)
    assert shown == {"file_path": str(tmp_path / "src/a.py"), "content": "x = 1\n"}
    assert tool_input_for_hooks(editor, {"command": "view", "path": "a", "view_range": [3, 7]}, tmp_path) == {
        "file_path": str(tmp_path / "a"),
        "offset": 3,
        "limit": 5,
    }
    # A hook's updatedInput (Claude Code's names) becomes the editor's input again.
    back = tool_input_from_hooks(
        editor, create, {"file_path": str(tmp_path / "src/b.py"), "content": "y\n"}, tmp_path
    )
    assert back == {"command": "create", "path": "src/b.py", "file_text": "y\n"}
    assert tool_input_from_hooks("bash", {"command": "ls"}, {"command": "ls -a"}, tmp_path) == {
        "command": "ls -a"
    }


async def test_json_output_decides_a_pre_tool_use_call(tmp_path: Path) -> None:
    def hook(reply: dict[str, object], matcher: str = "") -> HookDefinition:
        return HookDefinition("PreToolUse", f"echo '{json.dumps(reply)}'", matcher)

    def specific(**fields: object) -> dict[str, object]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}

    call = HookedCall("bash", {"command": "ls"}, "n1")
    observer = RecordingObserver()

    allow = SessionHooks([hook(specific(permissionDecision="allow"))], tmp_path)
    assert (await allow.before_tool(call, observer)).permission == "allow"
    ask = SessionHooks(
        [hook(specific(permissionDecision="allow")), hook(specific(permissionDecision="ask"))], tmp_path
    )
    assert (await ask.before_tool(call, observer)).permission == "ask"
    updated = SessionHooks([hook(specific(updatedInput={"command": "ls -la"}))], tmp_path)
    assert (await updated.before_tool(call, observer)).updated_input == {"command": "ls -la"}
    block = SessionHooks(
        [hook({"decision": "block", "reason": "not today"}), hook({"never": "runs"})], tmp_path
    )
    assert (await block.before_tool(call, observer)).refusal == "Blocked by a PreToolUse hook: not today"
    said = SessionHooks([hook({"systemMessage": "careful: ls is watched"})], tmp_path)
    assert (await said.before_tool(call, observer)).refusal is None
    assert said.take_warnings() == ["PreToolUse hook: careful: ls is watched"]
    # A matcher for another tool keeps the hook from running.
    other = SessionHooks([hook(specific(permissionDecision="deny"), matcher="Edit")], tmp_path)
    assert (await other.before_tool(call, observer)).refusal is None


async def test_a_plugin_hook_gets_its_root_and_every_hook_the_project_dir(tmp_path: Path) -> None:
    plugin = tmp_path / "plugins" / "fmt"
    (plugin / "hooks").mkdir(parents=True)
    (plugin / "hooks" / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {
                            "matcher": "startup",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": 'echo "${CLAUDE_PLUGIN_ROOT}|$CLAUDE_PROJECT_DIR"',
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    hooks, warnings, _ = claude_settings_hooks(plugin / "hooks" / "hooks.json", "user", plugin_root=plugin)
    assert warnings == [] and hooks[0].plugin_root == plugin
    session = SessionHooks(hooks, tmp_path)
    assert await session.session_start(RecordingObserver(), "startup") == f"{plugin}|{tmp_path}"
    assert await session.session_start(RecordingObserver(), "resume") == ""  # the matcher is the source
