"""Claude Code's names for tools and models, read as this program's.

Agent and command files written for Claude Code name tools as `Read`, `Bash`, `WebFetch` or
`mcp__github__create_issue`, and models as `sonnet`; this module is the one table that turns
those names into the tools and model ids here. (The hooks lane keeps the opposite direction, our
names to Claude Code's, for what hooks are told; the two tables are meant to become one.)

A tool name resolves to a *pattern*: a tool's name here, `SERVER__*` for every tool of one MCP
server (`mcp__SERVER`; MCP tools are named `SERVER__TOOL` here, see `tools.mcp.config`), or
`NAME(read)` for a tool given only to read with: `Read` is the editor, whose writes are refused
unless `Edit`, `Write` or `MultiEdit` is named too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

EDITOR: Final = "str_replace_based_edit_tool"
READING: Final = "(read)"
"""A pattern's suffix for a tool given only to read with: `Read` is the editor, for `view` only."""
WEB_SEARCH: Final = "web_search"
"""The API's web search: a server tool the provider offers (`[tools.web] search`), not a tool of
the toolbox; an agent naming it keeps whatever the session offers."""

CLAUDE_TOOLS: Final[dict[str, tuple[str, ...]]] = {
    "Bash": ("bash",),
    "Read": (EDITOR + READING,),
    "Edit": (EDITOR,),
    "Write": (EDITOR,),
    "MultiEdit": (EDITOR,),
    "Glob": ("glob",),
    "Grep": ("grep",),
    "LS": ("glob",),
    "WebFetch": ("web_fetch",),
    "WebSearch": (WEB_SEARCH,),
    "Task": ("agent",),
    "Agent": ("agent",),
    "Skill": ("skill",),
    "TodoWrite": ("todo_write",),
    "BashOutput": ("bash_output",),
    "KillShell": ("kill_shell",),
    "KillBash": ("kill_shell",),
}
"""Claude Code's tool names (as Claude Code spells them) and the tools here that do their work."""

NOT_BUILT: Final[dict[str, str]] = {
    "NotebookRead": "notebooks are not supported",
    "NotebookEdit": "notebooks are not supported",
    "SlashCommand": "the model cannot run slash commands",
    "ExitPlanMode": "plan mode is switched by the user here",
}
"""Claude Code tools this program does not have, and why (the warning says it)."""

OWN_TOOLS: Final = frozenset(
    {
        "bash",
        EDITOR,
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

MODEL_ALIASES: Final[dict[str, str]] = {
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-6",
    "haiku": "claude-haiku-4-5",
}
"""Claude Code's model aliases and the ids they stand for (ids anthropic 2.14.0 knows)."""

INHERIT: Final = "inherit"

_CLAUDE_BY_LOWER: Final = {name.lower(): name for name in CLAUDE_TOOLS}
"""Files write `read` or `bash` as often as `Read`: the names are matched ignoring case."""

MCP_PREFIX: Final = "mcp__"
_MCP_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
"""As `tools.mcp.config` names MCP tools (`UNSAFE_NAME_CHARS`)."""


@dataclass(frozen=True, slots=True)
class ToolNames:
    """The tools a list of names in Claude Code's (or our) spelling stands for."""

    patterns: tuple[str, ...]
    """Tool names here, `SERVER__*` for all of an MCP server's tools, and `NAME(read)` for a
    tool given only to read with; no duplicates."""
    problems: tuple[str, ...] = ()
    """One line per name that stands for nothing here, saying why."""


def resolve_tools(names: Iterable[str]) -> ToolNames:
    """The tools `names` stand for (`Read`, `Bash(git:*)`, `mcp__github`, `bash`...).

    A rule's specifier (`Bash(git status:*)`) is dropped here: the tool is what is named.
    """
    patterns: list[str] = []
    problems: list[str] = []
    for raw in names:
        name = raw.strip().split("(", 1)[0].strip()
        if not name:
            continue
        claude = _CLAUDE_BY_LOWER.get(name.lower())
        if claude is not None:
            patterns.extend(CLAUDE_TOOLS[claude])
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
    pattern = pattern.removesuffix(READING)
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
