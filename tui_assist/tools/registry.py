"""The toolbox of one agent run, and the factory that makes a fresh one per turn or round.

A `Toolset` owns a persistent shell, so it is not shared: the factory builds a new one each
call, which is what anchors every refine round in the workdir with a clean shell.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, runtime_checkable

from tui_assist.core.tooling import Diagnostics, SubagentSpec, Tool, ToolboxFactory
from tui_assist.tools.background import BackgroundShells, background_tools
from tui_assist.tools.files import TextEditorTool
from tui_assist.tools.sandbox import Sandbox
from tui_assist.tools.search import GlobTool, GrepTool
from tui_assist.tools.shell import BashTool
from tui_assist.tools.skill import SkillEntry, SkillTool
from tui_assist.tools.subagent import AgentTool
from tui_assist.tools.todo import TodoWriteTool

if TYPE_CHECKING:
    from typing_extensions import Unpack

ExtraTools = Sequence[Tool] | Callable[[], Sequence[Tool]]
"""Tools to offer after the built-in ones, or a callable read each time a toolbox is made (so
tools that appear later, such as those of MCP servers started after the factory was built, are
offered from the next turn on). They are shared between toolboxes: a `Toolset` closes only those
with an `aclose()`, so shared tools must not have one."""


Subagents = Sequence[SubagentSpec] | Callable[[], Sequence[SubagentSpec]]
"""Custom sub-agents, or a callable read each time a toolbox is made (a project trusted later)."""


Skills = Sequence[SkillEntry] | Callable[[], Sequence[SkillEntry]]
"""Skills, or a callable read each time a toolbox is made (a project trusted later)."""


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


class Toolset:
    """A `Toolbox`: the tools of one agent run, anchored in one workdir."""

    def __init__(self, workdir: Path, tools: Sequence[Tool]) -> None:
        """Group tools for one run.

        Args:
            workdir: The anchored working directory.
            tools: The tools, in the order they are offered; names must be unique.

        Raises:
            ValueError: if two tools share a name.
        """
        names = [tool.spec.name for tool in tools]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {', '.join(duplicates)}")
        self._workdir = workdir
        self._tools = tuple(tools)
        self._by_name = {tool.spec.name: tool for tool in self._tools}

    @property
    def workdir(self) -> Path:
        """The anchored working directory."""
        return self._workdir

    @property
    def tools(self) -> Sequence[Tool]:
        """The tools, in the order they are offered."""
        return self._tools

    def get(self, name: str) -> Tool | None:
        """Look a tool up by the name the model used.

        Args:
            name: The tool name from a `tool_use` block.

        Returns:
            The tool, or None if there is no such tool.
        """
        return self._by_name.get(name)

    async def aclose(self) -> None:
        """Release every tool's resources (kills the shell and what it started)."""
        for tool in self._tools:
            if isinstance(tool, _Closable):
                await tool.aclose()

    async def __aenter__(self) -> Toolset:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class ToolboxOptions(TypedDict, total=False):
    """How the standard tools are set up; every key may be left out (its default applies)."""

    bash_timeout: float
    """Per-command timeout of the shell, in seconds (120)."""
    max_output_chars: int
    """Longer tool output is truncated with a marker (30,000)."""
    extra_tools: ExtraTools
    """More tools (e.g. `McpManager.current_tools`), or a callable returning them, read each time."""
    pass_env: Sequence[str]
    """Environment variables the shell gets even though their names look like secrets
    (`Settings.tools.bash.pass_env`)."""
    key_variables: Sequence[str]
    """The providers' configured key variables, never passed to the shell (see `tools/environment.py`)."""
    sandbox: Sandbox | None
    """Run `bash` in this OS sandbox (`choose_sandbox(...).sandbox`); None: unsandboxed."""
    subagents: Subagents
    """The custom sub-agents the `agent` tool offers, or a callable read each time."""
    skills: Skills
    """The skills the `skill` tool offers (no tool when there are none), or a callable read each time."""
    diagnostics: Diagnostics | None
    """Checks each file the editor writes (the session's language servers); None: no checks."""
    background: BackgroundShells | None
    """The session's background shells (`bash` with `run_in_background`, `bash_output`,
    `kill_shell`); None: none offered."""


def default_toolbox(workdir: Path, **options: Unpack[ToolboxOptions]) -> Toolset:
    """The standard tools: `bash`, the editor, `glob`, `grep`, `agent`, `todo_write`, then extras.

    With `background`, `bash_output` and `kill_shell` follow `bash`.

    Args:
        workdir: The anchored working directory; the shell starts there and the editor is
            confined to it.
        **options: See `ToolboxOptions`.

    Returns:
        A fresh toolset with a shell that is not started yet.

    Raises:
        ValueError: if an extra tool's name is already taken.
    """
    workdir = workdir.resolve()
    extra_tools = options.get("extra_tools", ())
    extras = extra_tools() if callable(extra_tools) else extra_tools
    max_output_chars = options.get("max_output_chars", 30_000)
    subagents = options.get("subagents", ())
    skills = options.get("skills", ())
    skills = skills() if callable(skills) else skills
    background = options.get("background")
    return Toolset(
        workdir,
        [
            BashTool(
                workdir,
                timeout=options.get("bash_timeout", 120.0),
                max_output_chars=max_output_chars,
                pass_env=options.get("pass_env", ()),
                sandbox=options.get("sandbox"),
                key_variables=options.get("key_variables", ()),
                background=background,
            ),
            *background_tools(background, max_output_chars=max_output_chars),
            TextEditorTool(
                workdir, max_output_chars=max_output_chars, diagnostics=options.get("diagnostics")
            ),
            GlobTool(workdir),
            GrepTool(workdir),
            AgentTool(subagents() if callable(subagents) else subagents),
            TodoWriteTool(),
            *([SkillTool(skills)] if skills else []),
            *extras,
        ],
    )


def toolbox_factory(workdir: Path, **options: Unpack[ToolboxOptions]) -> ToolboxFactory:
    """A factory that makes a fresh default toolbox (`default_toolbox`) on each call.

    Args:
        workdir: The anchored working directory.
        **options: See `ToolboxOptions`; `extra_tools` given as a callable is read on each call.

    Returns:
        A callable that returns a new `Toolset` each time.
    """
    frozen = ToolboxOptions(**options)
    if "pass_env" in frozen:
        frozen["pass_env"] = tuple(frozen["pass_env"])
    if "key_variables" in frozen:
        frozen["key_variables"] = tuple(frozen["key_variables"])
    return functools.partial(default_toolbox, workdir, **frozen)
