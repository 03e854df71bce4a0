"""Project instructions: the user's and the project's `AGENTS.md` files, for the system prompt.

Read, in this order, each marked with its path: the user's `AGENTS.md` in the user config dir,
then one file per folder from the git root (or the workdir, outside git) down to the workdir: its
`AGENTS.md`, else its `CLAUDE.md`. They are re-read when one changes (a `stat` per file per turn),
so the system prompt stays byte-identical, and cacheable, while they don't.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui_assist.core.text import truncation_marker

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
"""In a folder, the first of these that exists is read."""

MAX_TOTAL_CHARS = 40_000
"""All instructions together are cut to this many characters, with a marker."""


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One instructions file as loaded."""

    path: Path
    size: int
    """Its size in bytes on disk."""
    truncated: bool = False
    """Whether the size bound cut it (or left it out)."""


@dataclass(frozen=True, slots=True)
class Instructions:
    """The loaded files and the text they add to the system prompt."""

    files: tuple[InstructionFile, ...] = ()
    text: str = ""


def git_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` that holds a `.git` (folder or file)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def candidate_files(workdir: Path, user_dir: Path) -> list[Path]:
    """The files to read, in order (only those that exist)."""
    found: list[Path] = []
    user = user_dir / FILE_NAMES[0]
    if user.is_file():
        found.append(user)
    workdir = workdir.resolve()
    top = git_root(workdir) or workdir
    folders = [workdir, *workdir.parents]
    for folder in reversed(folders[: folders.index(top) + 1]):
        for name in FILE_NAMES:
            path = folder / name
            if path.is_file():
                found.append(path)
                break
    return found


@dataclass
class InstructionsLoader:
    """Loads the instructions for one workdir, again only when a file appeared, changed or went."""

    workdir: Path
    user_dir: Path
    max_chars: int = MAX_TOTAL_CHARS
    _stamp: tuple[tuple[str, int, int], ...] | None = field(default=None, init=False)
    _loaded: Instructions = field(default_factory=Instructions, init=False)

    def load(self) -> Instructions:
        """The current instructions (the cached ones when no file changed)."""
        paths = candidate_files(self.workdir, self.user_dir)
        stamp = tuple(file_stamp(path) for path in paths)
        if stamp != self._stamp:
            self._loaded = _read(paths, self.max_chars)
            self._stamp = stamp
        return self._loaded


def file_stamp(path: Path) -> tuple[str, int, int]:
    """What tells a file's change without reading it: path, mtime and size (-1 when absent)."""
    try:
        info = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), info.st_mtime_ns, info.st_size)


def _read(paths: list[Path], max_chars: int) -> Instructions:
    files: list[InstructionFile] = []
    parts: list[str] = []
    room = max_chars
    for path in paths:
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        text = raw.decode("utf-8", errors="replace").strip()
        cut = len(text) > room
        if cut:
            text = text[: max(0, room)] + "\n" + truncation_marker(len(text) - max(0, room))
        room -= len(text)
        files.append(InstructionFile(path, len(raw), cut))
        if text:
            parts.append(f'<instructions path="{path}">\n{text}\n</instructions>')
    if not parts:
        return Instructions(tuple(files))
    header = (
        "The user and the project give these standing instructions (from AGENTS.md / CLAUDE.md "
        "files; later, deeper files are more specific):"
    )
    return Instructions(tuple(files), "\n\n".join([header, *parts]))


def describe(files: tuple[InstructionFile, ...]) -> list[str]:
    """One line per file, for `/memory`: its path, size and whether it was cut."""
    return [f"{file.path} ({_size(file.size)}{', cut to fit' if file.truncated else ''})" for file in files]


def _size(size: int) -> str:
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KB"
