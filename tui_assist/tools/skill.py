"""The `skill` tool: the model loads a skill's instructions when a task calls for them.

A skill is a folder holding `SKILL.md` (Claude Code's format). The model sees only each skill's
name and description, in this tool's description; `{"name": ...}` returns the body of `SKILL.md`
and the paths of the folder's other files (scripts, references), and `{"name", "file"}` returns
one of those files. It only reads, inside the skill's folder, so it is never asked about.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from tui_assist.core.model import ToolSpec
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.tools.base import PathOutsideWorkdir, confine, validate_input
from tui_assist.tools.safe_io import EditError, read_text

SKILL_TOOL: Final = "skill"
SKILL_FILE: Final = "SKILL.md"
MAX_SKILL_BYTES: Final = 512_000
"""A file of a skill's folder read by the tool is at most this big."""
MAX_LISTED_FILES: Final = 100


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """A skill as the tool offers it (the session finds them: `session.skills`)."""

    name: str
    description: str
    folder: Path
    """The folder holding its `SKILL.md`."""
    body: str
    """`SKILL.md` without its front matter: the instructions."""


class _Input(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    name: str = Field(min_length=1)
    file: str | None = None


@dataclass(frozen=True, slots=True)
class SkillArgs:
    """A validated call: the skill, and the file of its folder asked for (None: `SKILL.md`)."""

    skill: SkillEntry
    file: Path | None


class SkillTool:
    """`skill`: a skill's instructions and the files beside them."""

    def __init__(self, skills: Sequence[SkillEntry]) -> None:
        """Offer `skills` (their names and descriptions go in the tool's description)."""
        self._skills = {skill.name: skill for skill in skills}
        listing = "\n".join(f"- {s.name}: {s.description}" for s in self._skills.values())
        self._spec = ToolSpec(
            name=SKILL_TOOL,
            description=(
                "Load a skill: instructions (and files: scripts, references) for one kind of task. "
                "When a task matches a skill's description, call this with its name first and follow "
                "what it says; the result lists the skill folder's other files, which `file` reads "
                f"(a path relative to that folder). Read-only.\n\nSkills:\n{listing}"
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": sorted(self._skills), "description": "The skill."},
                    "file": {
                        "type": "string",
                        "description": "A file of the skill's folder, relative to it (default: SKILL.md).",
                    },
                },
                "required": ["name"],
            },
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> SkillArgs:
        """Validate the input: a known skill, a file inside its folder.

        Raises:
            ToolInputError: with a message for the model.
        """
        data = validate_input(_Input, raw, SKILL_TOOL)
        skill = self._skills.get(data.name)
        if skill is None:
            known = ", ".join(sorted(self._skills)) or "none"
            raise ToolInputError(f"unknown skill {data.name!r}; the skills are: {known}")
        if data.file is None:
            return SkillArgs(skill, None)
        try:
            return SkillArgs(skill, confine(skill.folder, data.file))
        except PathOutsideWorkdir as error:
            raise ToolInputError(f"not a file of the skill {skill.name}: {error}") from error

    def side_effecting(self, args: SkillArgs) -> bool:
        """Never: it only reads the skill's folder."""
        return False

    def summary(self, args: SkillArgs) -> str:
        """`skill NAME` (and the file)."""
        return f"skill {args.skill.name}" + (f" {args.file.name}" if args.file is not None else "")

    async def run(self, args: SkillArgs, ctx: ToolContext) -> ToolOutput:
        """Read the skill (in a worker thread)."""
        return await asyncio.to_thread(self._read, args)

    def _read(self, args: SkillArgs) -> ToolOutput:
        skill = args.skill
        if args.file is not None:
            try:
                return ToolOutput(read_text(args.file, str(args.file), MAX_SKILL_BYTES))
            except (EditError, OSError) as error:
                return ToolOutput(f"cannot read {args.file}: {error}", is_error=True)
        from tui_assist.tools.search import walk_files

        skill_file = skill.folder / SKILL_FILE
        others = sorted(
            p.relative_to(skill.folder).as_posix() for p in walk_files(skill.folder) if p != skill_file
        )
        lines = [f'<skill name="{skill.name}" folder="{skill.folder}">', skill.body, "</skill>"]
        if others:
            shown = others[:MAX_LISTED_FILES]
            lines += ["", "Files in the skill's folder (read one with `file`):", *(f"- {p}" for p in shown)]
            if len(others) > len(shown):
                lines.append(f"[... {len(others) - len(shown)} more files ...]")
        return ToolOutput("\n".join(lines))
