"""Skills: folders holding a `SKILL.md`, in Claude Code's format.

    .claude/skills/pdf-forms/SKILL.md
    ---
    name: pdf-forms
    description: Fill in PDF forms. Use when the user asks to fill a PDF.
    ---
    # Filling PDF forms
    Run `scripts/fill.py`...

Each skills folder (`SkillFolder`) holds one folder per skill: the project's `.claude/skills/`
(used only once the project is trusted: its `SKILL.md` files are in the trust digest), the user's
`~/.claude/skills/`, the config dir's `skills/` and each enabled plugin's `skills/` (named
`PLUGIN:NAME`, as Claude Code names them). The model sees
only names and descriptions (the `skill` tool's description); the tool returns a body when asked.
A skill of the user's wins a name over the project's (with a warning), as commands do; a folder
whose `SKILL.md` is not valid is one warning naming the file, and the others load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tui_assist.session.claude_dirs import CLAUDE_PROJECT_DIR
from tui_assist.session.front_matter import parse_front_matter
from tui_assist.tools.skill import SKILL_FILE, SkillEntry

if TYPE_CHECKING:
    from tui_assist.session.plugins import Plugin

SKILLS_DIR: Final = "skills"
MAX_SKILL_FILE_BYTES: Final = 256_000
_NAME_LIMIT: Final = 64
_READ_KEYS: Final = frozenset({"name", "description"})
_INFORMATIONAL_KEYS: Final = frozenset({"license", "metadata", "version"})
"""Keys that describe a skill and ask nothing of this program: read without a warning."""


@dataclass(frozen=True, slots=True)
class SkillFolder:
    """A folder of skills, and whose they are."""

    path: Path
    source: str
    """`user`, `project`, or a plugin's `plugin:NAME`."""

    @property
    def project(self) -> bool:
        """Whether its skills are the project's (used only once the project is trusted)."""
        return self.source == "project"

    @property
    def prefix(self) -> str:
        """What its skills' names start with: `PLUGIN:` for a plugin's, else nothing."""
        plugin = self.source.removeprefix("plugin:")
        return f"{plugin}:" if plugin != self.source else ""


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill and where it came from."""

    entry: SkillEntry
    path: Path
    """Its `SKILL.md`."""
    source: str

    @property
    def project(self) -> bool:
        """Whether it is the project's (gated by trust)."""
        return self.source == "project"

    def describe(self) -> str:
        """One line for `/skills`."""
        return f"{self.entry.name}: {self.entry.description} · {self.path}"


def skill_folders(
    workdir: Path, config_dir: Path, claude_user: Path | None = None, plugins: Sequence[Plugin] = ()
) -> list[SkillFolder]:
    """Where skills are looked for, the user's first (they win a name).

    Args:
        workdir: The project's folder (its `.claude/skills/`).
        config_dir: The user config dir (its `skills/`).
        claude_user: Claude Code's user dir (`~/.claude`), None when it is not read.
        plugins: The enabled plugins (their `skills/`).
    """
    return [
        SkillFolder(config_dir / SKILLS_DIR, "user"),
        *([SkillFolder(claude_user / SKILLS_DIR, "user")] if claude_user is not None else []),
        *(SkillFolder(p.skills_dir, f"plugin:{p.name}") for p in plugins if p.skills_dir is not None),
        SkillFolder(workdir / CLAUDE_PROJECT_DIR / SKILLS_DIR, "project"),
    ]


def skill_files(folder: Path) -> list[Path]:
    """The `SKILL.md` of each skill in `folder` (none when it is missing)."""
    try:
        candidates = sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return []
    return [path / SKILL_FILE for path in candidates if (path / SKILL_FILE).is_file()]


def parse_skill_file(text: str, folder: Path) -> tuple[SkillEntry, list[str]]:
    """The skill a `SKILL.md` defines, and a line per entry that is not honoured.

    Raises:
        ValueError: when it has no front matter, no description, or an empty body.
    """
    matter = parse_front_matter(text)
    if not matter.present:
        raise ValueError("it does not start with front matter (a line `---`)")
    name = matter.text("name") or folder.name
    description = " ".join(matter.text("description").split())
    if not description:
        raise ValueError("its front matter has no description (the model picks a skill by it)")
    if not matter.body:
        raise ValueError("its body (the instructions) is empty")
    problems = [f"{key}: not read here" for key in matter.unknown(_READ_KEYS | _INFORMATIONAL_KEYS)]
    if len(name) > _NAME_LIMIT:
        raise ValueError(f"its name is longer than {_NAME_LIMIT} characters")
    return SkillEntry(name, description, folder, matter.body), problems


def load_skills(folders: Sequence[SkillFolder]) -> tuple[list[Skill], list[str]]:
    """The skills in `folders` (an earlier folder wins a name), and their warnings."""
    by_name: dict[str, Skill] = {}
    warnings: list[str] = []
    for folder in folders:
        for path in skill_files(folder.path):
            try:
                if path.stat().st_size > MAX_SKILL_FILE_BYTES:
                    raise ValueError(f"it is larger than {MAX_SKILL_FILE_BYTES // 1000} KB")
                entry, problems = parse_skill_file(path.read_text(encoding="utf-8"), path.parent)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                warnings.append(f"skill file {path} is ignored: {exc}")
                continue
            if problems:
                warnings.append(f"skill file {path}: {'; '.join(problems)} (the rest loads)")
            entry = replace(entry, name=folder.prefix + entry.name)
            taken = by_name.get(entry.name)
            if taken is not None:
                warnings.append(f"skill file {path} is ignored: the skill {entry.name} is {taken.path}")
                continue
            by_name[entry.name] = Skill(entry, path, folder.source)
    return sorted(by_name.values(), key=lambda s: s.entry.name), warnings


def project_skill_files(workdir: Path) -> list[Path]:
    """The project's `SKILL.md` files (what trusting the project covers)."""
    return skill_files(workdir / CLAUDE_PROJECT_DIR / SKILLS_DIR)
