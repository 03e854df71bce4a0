"""How the background shells are shown: one line each (status, runtime, command, last line).

The TUI's tasks view and `/tasks` list, and `/tasks` without a screen (ACP), draw the same lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_assist.core.text import clip

if TYPE_CHECKING:
    from tui_assist.tools.background import BackgroundShells, ShellInfo

__all__ = ["runtime_text", "task_line", "tasks_markdown"]

_COMMAND_CHARS = 40
_LAST_LINE_CHARS = 60


def runtime_text(seconds: float) -> str:
    """`42s`, `3m05s`, `1h02m`."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def _status_text(info: ShellInfo) -> str:
    if info.status in ("completed", "failed"):
        return f"exit {info.exit_code}"
    return info.status


def task_line(info: ShellInfo) -> str:
    """`bash_1  running  3m05s  npm run dev  │ ready on :3000`."""
    command = clip(" ".join(info.command.split()), _COMMAND_CHARS)
    line = f"{info.shell_id}  {_status_text(info):<8} {runtime_text(info.runtime):>6}  {command}"
    return f"{line}  │ {clip(info.last_line, _LAST_LINE_CHARS)}" if info.last_line else line


def tasks_markdown(shells: BackgroundShells | None) -> str:
    """`/tasks` without a screen: every background shell of the session, one line each."""
    infos = shells.infos() if shells is not None else []
    if not infos:
        return "No background shells (the model starts one with bash's `run_in_background`)."
    body = "\n".join(task_line(info) for info in infos)
    return f"**Background shells**\n\n```text\n{body}\n```"
