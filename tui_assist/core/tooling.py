"""What the agent loop needs from tools, without importing any tool.

`tui_assist.tools` implements these; the core only sees the protocol, so a test can run the
loop with a toolbox of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tui_assist.core.events import FileDiff
from tui_assist.core.model import ToolSpec


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's answer, as the model will see it."""

    content: str
    is_error: bool = False
    diff: FileDiff | None = None
    """For a file write: the file's text before and after (hosts show it; the model does not)."""


@dataclass(frozen=True, slots=True)
class CodeDiagnostic:
    """An error a language server found in a file."""

    line: int
    """1-based."""
    column: int
    """1-based."""
    message: str
    code: str | None = None
    """The checker's rule, e.g. `F821`."""


LSP_PREFIX = "LSP: "
"""How a language server's error starts its line in a tool result."""


def diagnostic_line(display: str, error: CodeDiagnostic) -> str:
    """`LSP: path:line:col: message [code]`: one error as the model, the critic and the user read it."""
    code = f" [{error.code}]" if error.code else ""
    return f"{LSP_PREFIX}{display}:{error.line}:{error.column}: {error.message}{code}"


def keep_diagnostic_lines(shown: str, whole: str) -> str:
    """`shown` (a cut of `whole`) with the `LSP:` lines the cut dropped after it, so they stay in sight."""
    lost = [line for line in whole.splitlines() if line.startswith(LSP_PREFIX) and line not in shown]
    return "\n".join([shown, *lost]) if lost else shown


class Diagnostics(Protocol):
    """Checks a file after an editor write (the session's language servers)."""

    async def after_write(self, path: Path, before: str | None, after: str) -> Sequence[CodeDiagnostic]:
        """The errors the write of `after` (over `before`, None for a new file) introduced.

        Returns within the checker's own wait, with none when it has no answer; never raises.
        """
        ...


class ToolInputError(Exception):
    """The model's input for a tool is invalid; the message goes back to the model."""


@dataclass(frozen=True, slots=True)
class SubagentSpec:
    """A custom sub-agent the user defined (a Markdown file with front matter)."""

    name: str
    description: str
    system_prompt: str
    """The file's body: the sub-agent's system prompt."""
    tools: tuple[str, ...] | None = None
    """The tools it may use (None: all of them): names, or `SERVER__*` for an MCP server's."""
    model: str | None = None
    """The model its requests ask for (None: the session's)."""
    disallowed_tools: tuple[str, ...] = ()
    """Tools it may not use even when `tools` allows them (same patterns)."""

    def allows(self, tool_name: str) -> bool:
        """Whether this sub-agent may use the tool named `tool_name`."""
        from tui_assist.core.claude_names import WRITING, matches

        barred = [p for p in self.disallowed_tools if not p.endswith(WRITING)]  # writes: `reads_only`
        if any(matches(pattern, tool_name) for pattern in barred):
            return False
        return self.tools is None or any(matches(pattern, tool_name) for pattern in self.tools)

    def reads_only(self, tool_name: str) -> bool:
        """Whether it may use `tool_name` only to read with (`Read` alone, or `Write` disallowed)."""
        from tui_assist.core.claude_names import WRITING, matches, reads_only

        if any(p.endswith(WRITING) and matches(p, tool_name) for p in self.disallowed_tools):
            return True
        return self.tools is not None and reads_only(self.tools, tool_name)


class RunSubagent(Protocol):
    """Runs a sub-agent under the calling tool's node and returns its final answer."""

    def __call__(self, description: str, prompt: str, agent: SubagentSpec | None = None) -> Awaitable[str]:
        """Run `prompt` as a sub-agent (a custom one when `agent` is given), labelled `description`."""
        ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may use."""

    workdir: Path
    node_id: str
    run_subagent: RunSubagent


class Tool(Protocol):
    """One tool the model can call."""

    @property
    def spec(self) -> ToolSpec:
        """The name, description and input schema offered to the model."""
        ...

    def parse(self, raw: dict[str, Any]) -> Any:
        """Validate the model's input.

        Raises:
            ToolInputError: with a message for the model.
        """
        ...

    def side_effecting(self, args: Any) -> bool:
        """Whether this call changes anything (and so needs approval)."""
        ...

    def summary(self, args: Any) -> str:
        """What the call will do, exactly, for an approval prompt."""
        ...

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        """Execute the call. Failures are returned as error outputs, not raised."""
        ...


class Toolbox(Protocol):
    """The tools of one agent run (a round has its own, so state never leaks between rounds)."""

    @property
    def workdir(self) -> Path:
        """The anchored working directory."""
        ...

    @property
    def tools(self) -> Sequence[Tool]:
        """The tools, in the order they are offered."""
        ...

    async def aclose(self) -> None:
        """Release resources (the persistent shell)."""
        ...


ToolboxFactory = Callable[[], Toolbox]
"""Makes a fresh toolbox: each turn, and each refine round, gets a new one."""
