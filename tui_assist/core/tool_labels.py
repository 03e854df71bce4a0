"""What a tool call does, in words a reader knows: `edit app.py (+1 −1)`, `bash: pytest -q`.

One place computes a call's title from its name, input and (once it ran) its file diff, so the
conversation, the agent tree, the exports and the ACP host all say the same thing.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Any

from tui_assist.core.events import FileDiff
from tui_assist.core.plan import TODO_TOOL, plan_of, plan_progress

__all__ = ["BASH_TOOL", "EDITOR_TOOL", "diff_counts", "key_argument", "tool_title", "unified_diff"]

_AGENT_TOOL = "agent"
BASH_TOOL = "bash"
EDITOR_TOOL = "str_replace_based_edit_tool"
"""The contract names of the built-in shell and editor tools (`core.permissions` re-exports them)."""


def key_argument(name: str, tool_input: dict[str, Any]) -> str:
    """The one argument that says what a tool call does (a command, a path, a description).

    Args:
        name: The tool's name.
        tool_input: The input the model gave.

    Returns:
        The argument, or "" when the input has no string value.
    """
    for key in ("command", "path", "description", "prompt", "query", "url"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            if key == "command" and name != BASH_TOOL and isinstance(tool_input.get("path"), str):
                return f"{value} {tool_input['path']}"
            return value
    for value in tool_input.values():
        if isinstance(value, str):
            return value
    return ""


def _lines(text: str | None) -> list[str]:
    return (text or "").splitlines()


@lru_cache(maxsize=256)
def diff_counts(diff: FileDiff) -> tuple[int, int]:
    """Lines added and removed by a write (cached: titles are drawn again on every refresh).

    Args:
        diff: The file's text before and after.

    Returns:
        `(added, removed)`.
    """
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, _lines(diff.old_text), _lines(diff.new_text), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def unified_diff(diff: FileDiff, name: str, *, context: int = 3) -> str:
    """A write as a unified diff (`--- a/NAME`, `+++ b/NAME`, hunks), for Markdown and logs.

    Args:
        diff: The file's text before and after.
        name: How to name the file in the header (relative to the workdir, usually).
        context: Unchanged lines around each change.

    Returns:
        The diff, without a trailing newline; "" when nothing changed.
    """
    before = "/dev/null" if diff.old_text is None else f"a/{name}"
    lines = difflib.unified_diff(
        _lines(diff.old_text), _lines(diff.new_text), before, f"b/{name}", n=context, lineterm=""
    )
    return "\n".join(lines)


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    more = " …" if len(lines) > 1 else ""
    return (lines[0] if lines else "") + more


def tool_title(name: str, tool_input: dict[str, Any], diff: FileDiff | None = None) -> str:
    """A call's title as an action: `view app.py`, `edit app.py (+1 −1)`, `agent: reviewer`.

    Args:
        name: The tool's name.
        tool_input: The input the model gave.
        diff: What the call wrote, once it ran (editor writes only).

    Returns:
        One line (long commands are the host's to clip).
    """
    path = tool_input.get("path")
    if name == EDITOR_TOOL and isinstance(path, str):
        command = tool_input.get("command")
        counts = ""
        if diff is not None:
            added, removed = diff_counts(diff)
            counts = f" (+{added} −{removed})"
        if command == "view":
            return f"view {path}"
        if command == "create":
            return f"create {path}{counts}"
        if command in ("str_replace", "insert"):
            return f"edit {path}{counts}"
    if name == BASH_TOOL:
        command = tool_input.get("command")
        if isinstance(command, str) and command.strip():
            where = " (background)" if tool_input.get("run_in_background") is True else ""
            return f"bash{where}: {_first_line(command)}"
        return "bash: restart" if tool_input.get("restart") else "bash"
    if name == TODO_TOOL:  # the tree and the exports say where the plan stands
        items = plan_of(tool_input)
        current = next((item.label for item in items if item.status == "in_progress"), "")
        return f"plan {plan_progress(items)}" + (f": {_first_line(current)}" if current else "")
    if name == _AGENT_TOOL:
        who = tool_input.get("subagent_type") or tool_input.get("description")
        if isinstance(who, str) and who.strip():
            return f"agent: {_first_line(who)}"
        return "agent"
    argument = key_argument(name, tool_input)
    return f"{name} {_first_line(argument)}" if argument else name
