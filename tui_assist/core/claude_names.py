"""Claude Code's names for this program's tools and their inputs, in one place.

Claude Code users write hooks, permission rules and agent front matter against Claude Code's
tools: `Bash`, `Read`, `Write`, `Edit`, `Glob`, `Task`, `mcp__SERVER__TOOL`, ... with inputs such
as `file_path` and `old_string`. This module translates both ways, so a hook script written for
Claude Code sees the same `tool_name` and `tool_input` here, and what it hands back
(`updatedInput`) becomes this program's input again.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

EDITOR_TOOL: Final = "str_replace_based_edit_tool"
MCP_PREFIX: Final = "mcp__"

CLAUDE_CODE_NAMES: Final[Mapping[str, str]] = {
    "bash": "Bash",
    "bash_output": "BashOutput",
    "kill_shell": "KillShell",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "agent": "Task",
    "glob": "Glob",
    "grep": "Grep",
    "skill": "Skill",
    "todo_write": "TodoWrite",
}
"""This program's tool -> Claude Code's tool, for every tool with one name (the editor has several)."""

EDITOR_NAMES: Final[Mapping[str, str]] = {"view": "Read", "create": "Write"}
"""The editor's command -> Claude Code's tool; every other command (`str_replace`, `insert`) is `Edit`."""

OUR_NAMES: Final[Mapping[str, str]] = {
    **{claude: ours for ours, claude in CLAUDE_CODE_NAMES.items()},
    "Read": EDITOR_TOOL,
    "Write": EDITOR_TOOL,
    "Edit": EDITOR_TOOL,
    "MultiEdit": EDITOR_TOOL,
    "NotebookEdit": EDITOR_TOOL,
}
"""Claude Code's tool -> this program's (MCP names aside: see `mcp_parts`)."""

READ_ONLY_CLAUDE_TOOLS: Final = frozenset({"Read", "Glob", "Grep"})
"""Claude Code tools that only read (the editor's `view` for `Read`)."""

CLAUDE_CODE_MODES: Final[Mapping[str, str]] = {
    "default": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "bypass": "bypassPermissions",
}
"""This program's approval mode -> Claude Code's `permission_mode`."""


def claude_code_name(
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    mcp_server: str | None = None,
    mcp_tool: str | None = None,
) -> str:
    """What Claude Code calls this call's tool; a tool it lacks keeps its name here.

    Args:
        tool_name: The tool's name here.
        tool_input: The call's input (the editor's `command` decides between Read, Write and Edit).
        mcp_server: For an MCP tool: its server's name.
        mcp_tool: For an MCP tool: its name on the server.
    """
    if mcp_server is not None and mcp_tool is not None:
        return f"{MCP_PREFIX}{mcp_server}__{mcp_tool}"
    if tool_name == EDITOR_TOOL:
        return EDITOR_NAMES.get(str(tool_input.get("command")), "Edit")
    return CLAUDE_CODE_NAMES.get(tool_name, tool_name)


def claude_code_aliases(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    """Further Claude Code names a matcher may use for the call (an edit is `MultiEdit` too)."""
    if tool_name == EDITOR_TOOL and claude_code_name(tool_name, tool_input) == "Edit":
        return ("MultiEdit",)
    return ()


def our_tool_name(claude_name: str) -> str | None:
    """This program's tool for a Claude Code tool name (None: none, or an MCP name, see `mcp_parts`)."""
    return OUR_NAMES.get(claude_name)


def mcp_parts(claude_name: str) -> tuple[str, str | None] | None:
    """`mcp__SERVER__TOOL` as (server, tool), `mcp__SERVER` as (server, None); None for other names."""
    if not claude_name.startswith(MCP_PREFIX):
        return None
    server, _, tool = claude_name.removeprefix(MCP_PREFIX).partition("__")
    if not server:
        return None
    return server, tool or None


def tool_input_for_hooks(tool_name: str, tool_input: Mapping[str, Any], workdir: Path) -> dict[str, Any]:
    """The call's input with Claude Code's field names, as a hook script expects it.

    The editor's fields become `file_path` (absolute, as Claude Code gives it), `content`,
    `old_string`/`new_string`, `offset`/`limit`; other tools' inputs already use Claude Code's
    names (`command`, `url`, `pattern`, `prompt`, ...) and pass as they are.
    """
    if tool_name != EDITOR_TOOL:
        return dict(tool_input)
    path = tool_input.get("path")
    shown: dict[str, Any] = {}
    if isinstance(path, str):
        shown["file_path"] = str(workdir / path)
    match tool_input.get("command"):
        case "view":
            view_range = tool_input.get("view_range")
            if isinstance(view_range, list | tuple) and len(view_range) == 2:  # pyright: ignore[reportUnknownArgumentType]
                first, last = view_range  # pyright: ignore[reportUnknownVariableType]
                shown["offset"] = first
                if isinstance(last, int) and isinstance(first, int) and last >= first:
                    shown["limit"] = last - first + 1
        case "create":
            shown["content"] = tool_input.get("file_text", "")
        case "str_replace":
            shown |= {
                "old_string": tool_input.get("old_str", ""),
                "new_string": tool_input.get("new_str", ""),
                "replace_all": False,
            }
        case "insert":
            new = tool_input.get("insert_text", tool_input.get("new_str", ""))
            shown |= {"old_string": "", "new_string": new, "insert_line": tool_input.get("insert_line")}
        case _:
            pass
    return shown


def tool_input_from_hooks(
    tool_name: str, original: Mapping[str, Any], updated: Mapping[str, Any], workdir: Path
) -> dict[str, Any]:
    """The input a hook's `updatedInput` (in Claude Code's field names) asks for, in this tool's names.

    Fields the hook left out keep their original values, so a hook may send only what it changes.
    """
    if tool_name != EDITOR_TOOL:
        return {**original, **updated}
    merged = dict(original)
    for claude, ours in (("content", "file_text"), ("old_string", "old_str")):
        if claude in updated:
            merged[ours] = updated[claude]
    if "new_string" in updated:
        merged["insert_text" if original.get("command") == "insert" else "new_str"] = updated["new_string"]
    if isinstance(file_path := updated.get("file_path"), str):
        path = Path(file_path)
        merged["path"] = str(path.relative_to(workdir)) if path.is_relative_to(workdir) else file_path
    if isinstance(offset := updated.get("offset"), int):
        limit = updated.get("limit")
        merged["view_range"] = [offset, offset + limit - 1 if isinstance(limit, int) else -1]
    return merged
