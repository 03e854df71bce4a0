"""Custom sub-agents: Markdown files with front matter, in Claude Code's format.

A file in `.tui-assist/agents/` or `.claude/agents/` (the project's: run only once the project is
trusted) or in the user config dir's `agents/` defines one sub-agent:

    ---
    name: reviewer
    description: Reviews a diff for bugs
    tools: bash, str_replace_based_edit_tool
    model: claude-sonnet-4-6
    ---
    You are a careful code reviewer...

The body is its system prompt; `tools` (comma-separated, or a `[a, b]` list) is the subset of
tools it may use (all when absent; Claude Code's `Read`, `Edit`, `Write`, `MultiEdit` mean the
editor, `Bash` the shell, `Task` the `agent` tool); `model` (`inherit`: the session's) is the
model its requests ask for. The model picks one with the `agent` tool's `subagent_type`. Front
matter is read as simple `key: value` lines (no YAML library: these four keys are all it needs).
When two files define the same name, the project's win over the user's, and `.tui-assist/` over
`.claude/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tui_assist.core.rule_files import PROJECT_DIR
from tui_assist.core.tooling import SubagentSpec

if TYPE_CHECKING:
    from tui_assist.session.trust import ProjectFiles

AGENTS_DIR: Final = "agents"
CLAUDE_AGENTS_DIR: Final = Path(".claude") / "agents"
MAX_FILE_BYTES: Final = 256_000
"""Larger agent files are refused (a system prompt is not a book)."""

_TOOL_ALIASES: Final = {
    "bash": "bash",
    "read": "str_replace_based_edit_tool",
    "edit": "str_replace_based_edit_tool",
    "write": "str_replace_based_edit_tool",
    "multiedit": "str_replace_based_edit_tool",
    "task": "agent",
}
"""Claude Code's tool names, and ours, lower-cased, to ours."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """A custom sub-agent and the file it came from."""

    spec: SubagentSpec
    path: Path
    project: bool
    """From the project folder (gated by trust) rather than the user config dir."""

    def describe(self) -> str:
        """One line for `/agents` and the trust dialog."""
        tools = ", ".join(self.spec.tools) if self.spec.tools is not None else "all tools"
        model = f", model {self.spec.model}" if self.spec.model else ""
        return f"{self.spec.name}: {self.spec.description} ({tools}{model}) · {self.path}"


def agent_folders(workdir: Path, config_dir: Path) -> list[tuple[Path, bool]]:
    """Where agent files are looked for, lowest precedence first, each with whether it is the project's."""
    return [
        (config_dir / AGENTS_DIR, False),
        (workdir / CLAUDE_AGENTS_DIR, True),
        (workdir / PROJECT_DIR / AGENTS_DIR, True),
    ]


def parse_agent_file(text: str, fallback_name: str) -> SubagentSpec:
    """The sub-agent a file defines.

    Raises:
        ValueError: when it has no front matter, no description or an empty body.
    """
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("it does not start with front matter (a line `---`)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError("its front matter is not closed (a second line `---`)") from None
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t", "#")):
            fields[key.strip().lower()] = value.strip().strip("\"'")
    body = "\n".join(lines[end + 1 :]).strip()
    name = fields.get("name") or fallback_name
    if not fields.get("description"):
        raise ValueError("its front matter has no description")
    if not body:
        raise ValueError("its body (the system prompt) is empty")
    tools: tuple[str, ...] | None = None
    if fields.get("tools"):
        words = [w.strip().strip("\"'") for w in fields["tools"].strip("[]").split(",")]
        tools = tuple(dict.fromkeys(_TOOL_ALIASES.get(w.lower(), w) for w in words if w))
    model = fields.get("model") or None
    if model is not None and model.lower() == "inherit":
        model = None
    return SubagentSpec(
        name=name, description=fields["description"], system_prompt=body, tools=tools, model=model
    )


def load_agents(
    folders: list[tuple[Path, bool]], snapshot: ProjectFiles | None = None
) -> tuple[list[AgentDefinition], list[str]]:
    """The agents in `folders` (later folders win a name), and one warning per file that is not valid.

    `snapshot`: the project's files as the trust digest reads them (a project folder's agent
    files are read through it, so what is parsed is what is digested).
    """
    by_name: dict[str, AgentDefinition] = {}
    warnings: list[str] = []
    for folder, project in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    raise ValueError(f"it is larger than {MAX_FILE_BYTES // 1000} KB")
                read = snapshot.text if project and snapshot is not None else _read_text
                spec = parse_agent_file(read(path), path.stem)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                warnings.append(f"agent file {path} is ignored: {exc}")
                continue
            by_name[spec.name] = AgentDefinition(spec, path, project)
    return sorted(by_name.values(), key=lambda a: a.spec.name), warnings


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def project_agent_files(workdir: Path, config_dir: Path) -> list[Path]:
    """The project's agent files (what trusting the project covers)."""
    return [
        path
        for folder, project in agent_folders(workdir, config_dir)
        if project and folder.is_dir()
        for path in sorted(folder.glob("*.md"))
    ]
