"""Claude Code's names for this program's tools, inputs and models: one table, both ways.

Claude Code users write hooks, permission rules, agent and command front matter against Claude
Code's tools: `Bash`, `Read`, `Write`, `Edit`, `Glob`, `Task`, `mcp__SERVER__TOOL`, ... with
inputs such as `file_path` and `old_string`, and models as `sonnet`. `CLAUDE_TOOLS` is the one
table of their tools and ours. A hook script written for Claude Code sees the same `tool_name`
(`claude_code_name`) and `tool_input` (`tool_input_for_hooks`) here, and what it hands back
(`updatedInput`) becomes this program's input again; a matcher matches either name; an agent's
`tools`/`disallowedTools` and a command's `allowed-tools` resolve to tools here (`resolve_tools`).

A tool name resolves to a *pattern*: a tool's name here, `SERVER__*` for every tool of one MCP
server (`mcp__SERVER`; MCP tools are named `SERVER__TOOL` here, see `tools.mcp.config`), or
`NAME(read)` for a tool given only to read with: `Read` is the editor, whose writes are refused
unless `Edit`, `Write` or `MultiEdit` is named too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

EDITOR_TOOL: Final = "str_replace_based_edit_tool"
MCP_PREFIX: Final = "mcp__"
READING: Final = "(read)"
"""A pattern's suffix for a tool given only to read with: `Read` is the editor, for `view` only."""
WRITING: Final = "(write)"
"""A disallowed pattern's suffix for a tool's writes alone: `disallowedTools: Write` leaves `Read`."""
WRITE_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit"})
"""The editor's writing names: disallowing one takes away the editor's writes, not its reads."""
WEB_SEARCH: Final = "web_search"
"""The API's web search: a server tool the provider offers (`[tools.web] search`), not a tool of
the toolbox; an agent naming it keeps whatever the session offers."""

CLAUDE_TOOLS: Final[Mapping[str, str]] = {
    "Bash": "bash",
    "Read": EDITOR_TOOL,
    "Write": EDITOR_TOOL,
    "Edit": EDITOR_TOOL,
    "MultiEdit": EDITOR_TOOL,
    "Glob": "glob",
    "Grep": "grep",
    "WebFetch": "web_fetch",
    "WebSearch": WEB_SEARCH,
    "Task": "agent",
    "Skill": "skill",
    "TodoWrite": "todo_write",
    "BashOutput": "bash_output",
    "KillShell": "kill_shell",
    # Older or other spellings of the same tools (the names above are what hooks are told).
    "LS": "glob",
    "Agent": "agent",
    "KillBash": "kill_shell",
}
"""THE table: Claude Code's tool (as Claude Code spells it) -> the tool here that does its work."""

EDITOR_NAMES: Final[Mapping[str, str]] = {"view": "Read", "create": "Write"}
"""The editor's command -> Claude Code's tool; every other command (`str_replace`, `insert`) is `Edit`."""

CLAUDE_CODE_NAMES: Final[Mapping[str, str]] = {
    ours: claude
    for claude, ours in reversed(CLAUDE_TOOLS.items())
    if ours != EDITOR_TOOL  # the editor has several names: `EDITOR_NAMES`
}
"""This program's tool -> Claude Code's (the first name `CLAUDE_TOOLS` gives it)."""

READ_ONLY_CLAUDE_TOOLS: Final = frozenset({"Read", "Glob", "Grep", "LS"})
"""Claude Code tools that only read (`Read` gives the editor for `view` only)."""

NOT_BUILT: Final[Mapping[str, str]] = {
    "NotebookRead": "notebooks are not supported",
    "NotebookEdit": "notebooks are not supported",
    "SlashCommand": "the model cannot run slash commands",
    "ExitPlanMode": "plan mode is switched by the user here",
}
"""Claude Code tools this build does not have, and why (an agent or command naming one is warned)."""

OWN_TOOLS: Final = frozenset(
    {
        "bash",
        EDITOR_TOOL,
        "agent",
        "web_fetch",
        WEB_SEARCH,
        "glob",
        "grep",
        "skill",
        "todo_write",
        "bash_output",
        "kill_shell",
    }
)
"""The built-in tools' names here: a file may use them as they are."""

MODEL_ALIASES: Final[Mapping[str, str]] = {
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-6",
    "haiku": "claude-haiku-4-5",
}
"""Claude Code's model aliases and the ids they stand for (ids anthropic 2.14.0 knows)."""

INHERIT: Final = "inherit"

CLAUDE_CODE_MODES: Final[Mapping[str, str]] = {
    "default": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "bypass": "bypassPermissions",
}
"""This program's approval mode -> Claude Code's `permission_mode`."""

_CLAUDE_BY_LOWER: Final = {name.lower(): name for name in CLAUDE_TOOLS}
"""Files write `read` or `bash` as often as `Read`: the names are matched ignoring case."""
_MCP_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
"""As `tools.mcp.config` names MCP tools (`UNSAFE_NAME_CHARS`)."""


# -- our names to Claude Code's: what hooks are told and matchers match


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
    return CLAUDE_TOOLS.get(claude_name)


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


# -- Claude Code's names to ours: agents' and commands' tools, models


@dataclass(frozen=True, slots=True)
class ToolNames:
    """The tools a list of names in Claude Code's (or our) spelling stands for."""

    patterns: tuple[str, ...]
    """Tool names here, `SERVER__*` for all of an MCP server's tools, and `NAME(read)` for a
    tool given only to read with; no duplicates."""
    problems: tuple[str, ...] = ()
    """One line per name that stands for nothing here, saying why."""


def resolve_tools(names: Iterable[str], *, disallowing: bool = False) -> ToolNames:
    """The tools `names` stand for (`Read`, `Bash(git:*)`, `mcp__github`, `bash`...).

    A rule's specifier (`Bash(git status:*)`) is dropped here: the tool is what is named. With
    `disallowing` (an agent's `disallowedTools`), `Write`, `Edit` and `MultiEdit` stand for the
    editor's writes only (`EDITOR(write)`), so a read-only agent keeps `Read`.
    """
    patterns: list[str] = []
    problems: list[str] = []
    for raw in names:
        name = raw.strip().split("(", 1)[0].strip()
        if not name:
            continue
        claude = _CLAUDE_BY_LOWER.get(name.lower())
        if claude in NOT_BUILT:
            problems.append(f"{claude}: {NOT_BUILT[claude]}")
        elif claude is not None:
            suffix = READING if claude == "Read" and not disallowing else ""
            suffix = WRITING if claude in WRITE_TOOLS and disallowing else suffix
            patterns.append(CLAUDE_TOOLS[claude] + suffix)
        elif name in OWN_TOOLS:
            patterns.append(name)
        elif name.startswith(MCP_PREFIX) and len(name) > len(MCP_PREFIX):
            server, sep, tool = name[len(MCP_PREFIX) :].partition("__")
            safe = _MCP_UNSAFE.sub("_", server)
            patterns.append(f"{safe}__{_MCP_UNSAFE.sub('_', tool)}" if sep and tool else f"{safe}__*")
        elif name in NOT_BUILT:
            problems.append(f"{name}: {NOT_BUILT[name]}")
        elif "__" in name:  # an MCP tool as it is named here (`server__tool`)
            patterns.append(name)
        else:
            problems.append(f"{name}: no such tool here")
    return ToolNames(tuple(dict.fromkeys(patterns)), tuple(problems))


def matches(pattern: str, tool_name: str) -> bool:
    """Whether `tool_name` is the tool `pattern` names (`SERVER__*`: any tool of that server)."""
    pattern = pattern.removesuffix(READING).removesuffix(WRITING)
    if pattern.endswith("__*"):
        return tool_name.startswith(pattern[:-1])
    return tool_name == pattern


def reads_only(patterns: Iterable[str], tool_name: str) -> bool:
    """Whether `patterns` give `tool_name` only to read with (`Read` without `Edit` or `Write`)."""
    allowing = [p for p in patterns if matches(p, tool_name)]
    return bool(allowing) and all(p.endswith(READING) for p in allowing)


def resolve_model(name: str | None) -> str | None:
    """The model id a file's `model` asks for; None for the session's (`inherit`, or none given).

    `sonnet`, `opus` and `haiku` become current ids (`MODEL_ALIASES`); a full id stays as written.
    """
    if name is None or not name.strip() or name.strip().lower() == INHERIT:
        return None
    name = name.strip()
    return MODEL_ALIASES.get(name.lower(), name)
