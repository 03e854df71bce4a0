"""Custom sub-agents: Markdown files with YAML front matter, in Claude Code's format.

A file in `.tui-assist/agents/` or `.claude/agents/` (the project's: run only once the project is
trusted), in the user config dir's `agents/` or in Claude Code's `~/.claude/agents/` defines one
sub-agent; subfolders are read too (`**/*.md`):

    ---
    name: reviewer
    description: >-
      Reviews a diff for bugs
    tools: Read, Grep, Glob, Bash
    disallowedTools: [Write]
    model: sonnet
    ---
    You are a careful code reviewer...

The body is its system prompt. `tools` (a comma-separated string or a YAML list, in Claude Code's
names or ours: see `core.claude_names`) is the subset of tools it may use (all when absent);
`disallowedTools` takes tools away (`Write`, `Edit`: the editor's writes only, so `Read` stays).
`model` is `sonnet`, `opus`, `haiku` (current ids), a full id, or `inherit` (the session's). A
name that stands for nothing here, or a key this program does not read, is one warning naming
the file; the agent still loads. When two files define the same name,
the project's win over the user's, and `.tui-assist/` over `.claude/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tui_assist.core.claude_names import resolve_model, resolve_tools
from tui_assist.core.rule_files import PROJECT_DIR
from tui_assist.core.tooling import SubagentSpec
from tui_assist.session.claude_dirs import CLAUDE_PROJECT_DIR
from tui_assist.session.front_matter import parse_front_matter

if TYPE_CHECKING:
    from tui_assist.session.plugins import Plugin
    from tui_assist.session.trust import ProjectFiles

AGENTS_DIR: Final = "agents"
CLAUDE_AGENTS_DIR: Final = Path(CLAUDE_PROJECT_DIR) / AGENTS_DIR
MAX_FILE_BYTES: Final = 256_000
"""Larger agent files are refused (a system prompt is not a book)."""

READ_KEYS: Final = frozenset({"name", "description", "tools", "disallowedTools", "model"})
IGNORED_KEYS: Final = frozenset({"color"})
"""Claude Code keys with nothing to do here (how its UI draws the agent): read without a warning."""


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
        if self.spec.disallowed_tools:
            tools += f"; not {', '.join(self.spec.disallowed_tools)}"
        model = f", model {self.spec.model}" if self.spec.model else ""
        return f"{self.spec.name}: {self.spec.description} ({tools}{model}) · {self.path}"


@dataclass(frozen=True, slots=True)
class AgentFolder:
    """A folder of agent files, whose they are, and the prefix of their names."""

    path: Path
    project: bool
    """The project's (gated by trust) rather than the user's."""
    prefix: str = ""
    """`PLUGIN:` for a plugin's agents, as Claude Code names them."""


def agent_folders(
    workdir: Path, config_dir: Path, claude_user: Path | None = None, plugins: Sequence[Plugin] = ()
) -> list[AgentFolder]:
    """Where agent files are looked for, lowest precedence first.

    Args:
        workdir: The project's folder.
        config_dir: The user config dir.
        claude_user: Claude Code's user dir (`~/.claude`), None when it is not read.
        plugins: The enabled plugins (their `agents/`).
    """
    return [
        *(AgentFolder(p.agents_dir, False, f"{p.name}:") for p in plugins if p.agents_dir is not None),
        *([AgentFolder(claude_user / AGENTS_DIR, False)] if claude_user is not None else []),
        AgentFolder(config_dir / AGENTS_DIR, False),
        AgentFolder(workdir / CLAUDE_AGENTS_DIR, True),
        AgentFolder(workdir / PROJECT_DIR / AGENTS_DIR, True),
    ]


@dataclass(frozen=True, slots=True)
class ParsedAgent:
    """A sub-agent a file defines, and what of the file could not be honoured."""

    spec: SubagentSpec
    problems: tuple[str, ...] = ()


def parse_agent_file(text: str, fallback_name: str) -> ParsedAgent:
    """The sub-agent a file defines, and a line per entry that is not honoured.

    Raises:
        ValueError: when it has no front matter (or not valid YAML), no description or an
            empty body.
    """
    matter = parse_front_matter(text)
    if not matter.present:
        raise ValueError("it does not start with front matter (a line `---`)")
    name = matter.text("name") or fallback_name
    description = " ".join(matter.text("description").split())
    if not description:
        raise ValueError("its front matter has no description")
    if not matter.body:
        raise ValueError("its body (the system prompt) is empty")
    problems: list[str] = []
    tools: tuple[str, ...] | None = None
    disallowed: tuple[str, ...] = ()
    for key in ("tools", "disallowedTools"):
        names = matter.names(key)
        if names is None:
            continue
        resolved = resolve_tools(names, disallowing=key == "disallowedTools")
        problems += [f"{key} {problem}" for problem in resolved.problems]
        if key == "tools":
            tools = resolved.patterns
        else:
            disallowed = resolved.patterns
    problems += [f"{key}: not read here" for key in matter.unknown(READ_KEYS | IGNORED_KEYS)]
    spec = SubagentSpec(
        name=name,
        description=description,
        system_prompt=matter.body,
        tools=tools,
        model=resolve_model(matter.text("model") or None),
        disallowed_tools=disallowed,
    )
    return ParsedAgent(spec, tuple(problems))


def load_agents(
    folders: Sequence[AgentFolder], snapshot: ProjectFiles | None = None
) -> tuple[list[AgentDefinition], list[str]]:
    """The agents in `folders` (later folders win a name), and their warnings.

    One warning per file that is not valid, or that has entries that are not honoured.
    `snapshot`: the project's files as the trust digest reads them (a project folder's agent
    files are read through it, so what is parsed is what is digested).
    """
    by_name: dict[str, AgentDefinition] = {}
    warnings: list[str] = []
    for folder in folders:
        project = folder.project
        for path in agent_files(folder.path):
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    raise ValueError(f"it is larger than {MAX_FILE_BYTES // 1000} KB")
                read = snapshot.text if project and snapshot is not None else _read_text
                parsed = parse_agent_file(read(path), path.stem)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                warnings.append(f"agent file {path} is ignored: {exc}")
                continue
            if parsed.problems:
                warnings.append(f"agent file {path}: {'; '.join(parsed.problems)} (the rest loads)")
            spec = replace(parsed.spec, name=folder.prefix + parsed.spec.name)
            by_name[spec.name] = AgentDefinition(spec, path, project)
    return sorted(by_name.values(), key=lambda a: a.spec.name), warnings


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def agent_files(folder: Path) -> list[Path]:
    """The agent files in `folder` and its subfolders (none when it is missing)."""
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.rglob("*.md") if path.is_file())


def project_agent_files(workdir: Path, config_dir: Path) -> list[Path]:
    """The project's agent files (what trusting the project covers)."""
    return [
        path
        for folder in agent_folders(workdir, config_dir)
        if folder.project
        for path in agent_files(folder.path)
    ]
