"""The read-only search tools `glob` (files by name) and `grep` (lines by regex), in the workdir.

Both only read, so they are never asked about and run in `plan` mode. Every path is confined to
the workdir (`tools.base.confine`), the walk never follows a symlink (it could lead out of the
workdir, or loop), and it skips what nobody means to search: version-control data, installed
dependencies (a virtualenv under any name, known by its `pyvenv.cfg`) and tool caches, as the `@`
listing does, and what the workdir's top-level `.gitignore` ignores (`GitIgnore`). Results are
capped, with a line saying so, so a broad pattern can't flood the context.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from tui_assist.core.model import ToolSpec
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.tools.base import PathOutsideWorkdir, confine, validate_input
from tui_assist.tools.safe_io import EditError, read_bytes, read_text

GLOB_TOOL: Final = "glob"
GREP_TOOL: Final = "grep"
MAX_GLOB_RESULTS: Final = 200
MAX_GREP_MATCHES: Final = 200
MAX_LINE_CHARS: Final = 300
"""A matching line longer than this is cut (minified files)."""
MAX_GREP_FILE_BYTES: Final = 5 * 1024 * 1024
"""Bigger files are not searched (logs, data dumps)."""
_BINARY_SNIFF: Final = 8192
MAX_GITIGNORE_BYTES: Final = 1024 * 1024

SKIPPED_DIRS: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        ".venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".cache",
    }
)
"""Directories never entered (the same as `session.mentions.listing.SKIPPED_DIRS`)."""


class _GlobInput(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    pattern: str = Field(min_length=1)
    path: str | None = None


class _GrepInput(_GlobInput):
    glob: str | None = None


@dataclass(frozen=True, slots=True)
class GlobArgs:
    """A validated `glob` call: the pattern, and the folder it is relative to (confined)."""

    pattern: re.Pattern[str]
    written: str
    folder: Path


@dataclass(frozen=True, slots=True)
class GrepArgs:
    """A validated `grep` call: the regex, where to look (a folder or one file), which files."""

    regex: re.Pattern[str]
    written: str
    where: Path
    glob: re.Pattern[str] | None
    glob_written: str | None


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob pattern as a regex over `/`-separated relative paths.

    `**` matches any number of folders, `*` and `?` stay within one name, `[abc]` is a class and
    `{a,b}` either spelling (`**/*.{ts,tsx}`).

    Raises:
        ValueError: for an unbalanced `[` or `{`.
    """
    out: list[str] = []
    i = 0
    depth = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                raise ValueError(f"unclosed [ in {pattern!r}")
            inner = pattern[i + 1 : end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end
        elif char == "{":
            depth += 1
            out.append("(?:")
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
        elif char == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(char))
        i += 1
    if depth:
        raise ValueError(f"unclosed {{ in {pattern!r}")
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True, slots=True)
class GitIgnore:
    """The workdir's top-level `.gitignore`, read the cheap way (no nested files, no git run).

    `name` and `*.log` match at any depth, `a/b` and `/build` from the workdir, `dist/` folders
    only; a later `!pattern` takes a path back. A folder it ignores is not entered.
    """

    rules: tuple[tuple[re.Pattern[str], bool, bool], ...] = ()
    """(the pattern over workdir-relative paths, whether it is for folders only, whether it is a `!`)."""

    @classmethod
    def read(cls, workdir: Path) -> GitIgnore:
        """The rules of `workdir/.gitignore` (none when it is missing or unreadable)."""
        try:
            text = read_text(workdir / ".gitignore", ".gitignore", MAX_GITIGNORE_BYTES)
        except (EditError, OSError):
            return cls()
        rules: list[tuple[re.Pattern[str], bool, bool]] = []
        for line in text.splitlines():
            pattern = line.strip()
            if not pattern or pattern.startswith("#"):
                continue
            negated = pattern.startswith("!")
            pattern = pattern.removeprefix("!")
            folders_only = pattern.endswith("/")
            pattern = pattern.rstrip("/")
            anchored = "/" in pattern
            pattern = pattern.lstrip("/")
            if not pattern:
                continue
            try:
                regex = glob_regex(pattern if anchored else f"**/{pattern}")
            except ValueError:  # not a pattern this reading knows: it ignores nothing
                continue
            rules.append((regex, folders_only, negated))
        return cls(tuple(rules))

    def ignores(self, relative: str, is_dir: bool) -> bool:
        """Whether the workdir-relative `relative` path is ignored."""
        ignored = False
        for regex, folders_only, negated in self.rules:
            if (is_dir or not folders_only) and regex.match(relative):
                ignored = not negated
        return ignored


def walk_files(root: Path, *, base: Path | None = None, ignore: GitIgnore | None = None) -> Iterator[Path]:
    """The regular files under `root`, folders in name order.

    Never through a symlink; `SKIPPED_DIRS`, virtualenvs and what `ignore` ignores (paths taken
    relative to `base`, the workdir) are not entered.
    """
    pending = [root]
    base = base or root
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda entry: entry.name)
        except OSError:  # unreadable or vanished: search the rest
            continue
        if folder != root and any(entry.name == "pyvenv.cfg" for entry in listed):
            continue  # installed packages, whatever the folder is called
        subfolders: list[Path] = []
        for entry in listed:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if (
                ignore is not None
                and ignore.rules
                and ignore.ignores(path.relative_to(base).as_posix(), is_dir)
            ):
                continue
            if not is_dir:
                yield path
            elif entry.name not in SKIPPED_DIRS:
                subfolders.append(path)
        pending.extend(reversed(subfolders))


class _SearchTool:
    """What `glob` and `grep` share: the workdir, confinement, and nothing side-effecting."""

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self._root = workdir.resolve()

    def side_effecting(self, args: object) -> bool:
        """Never: searching only reads."""
        return False

    def _confine(self, path: str | None) -> Path:
        try:
            return confine(self._workdir, path or ".")
        except PathOutsideWorkdir as error:
            raise ToolInputError(str(error)) from error

    def _display(self, path: Path) -> str:
        relative = path.relative_to(self._root)
        return relative.as_posix() if relative.parts else "."


class GlobTool(_SearchTool):
    """`glob`: the files whose path matches a pattern, most recently changed first."""

    def __init__(self, workdir: Path, *, max_results: int = MAX_GLOB_RESULTS) -> None:
        """Search `workdir` (and nothing outside it), listing at most `max_results` files."""
        super().__init__(workdir)
        self._max = max_results
        self._spec = ToolSpec(
            name=GLOB_TOOL,
            description=(
                "Find files by name pattern in the working directory, e.g. `**/*.py` or "
                "`src/**/*.{ts,tsx}` (`**` spans folders, `*` stays within one name). Returns "
                "paths relative to the working directory, most recently modified first. `path` "
                "is the folder the pattern is relative to (default: the working directory). "
                "Skips .git, node_modules, virtualenvs, caches and what .gitignore ignores. Read-only."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The glob pattern."},
                    "path": {"type": "string", "description": "A folder inside the working directory."},
                },
                "required": ["pattern"],
            },
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> GlobArgs:
        """Validate the input: the pattern compiles, the folder is inside the workdir.

        Raises:
            ToolInputError: with a message for the model.
        """
        data = validate_input(_GlobInput, raw, GLOB_TOOL)
        try:
            regex = glob_regex(data.pattern.removeprefix("./"))
        except ValueError as error:
            raise ToolInputError(f"invalid pattern for {GLOB_TOOL}: {error}") from error
        return GlobArgs(regex, data.pattern, self._confine(data.path))

    def summary(self, args: GlobArgs) -> str:
        """`glob PATTERN in FOLDER`."""
        return f"glob {args.written} in {self._display(args.folder)}"

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        """List the matching files (the walk runs in a worker thread)."""
        return await asyncio.to_thread(self._glob, args)

    def _glob(self, args: GlobArgs) -> ToolOutput:
        if not args.folder.is_dir():
            return ToolOutput(f"not a folder: {self._display(args.folder)}", is_error=True)
        found: list[tuple[float, str]] = []
        for path in walk_files(args.folder, base=self._root, ignore=GitIgnore.read(self._root)):
            if args.pattern.match(path.relative_to(args.folder).as_posix()):
                try:
                    found.append((path.stat().st_mtime, self._display(path)))
                except OSError:
                    continue
        if not found:
            return ToolOutput(f"no files match {args.written} in {self._display(args.folder)}")
        found.sort(key=lambda item: (-item[0], item[1]))
        lines = [name for _, name in found[: self._max]]
        if len(found) > self._max:
            lines.append(f"[... {len(found) - self._max} more files; use a narrower pattern or path ...]")
        return ToolOutput("\n".join(lines))


class GrepTool(_SearchTool):
    """`grep`: the lines that match a regex, as `path:line: text`."""

    def __init__(self, workdir: Path, *, max_matches: int = MAX_GREP_MATCHES) -> None:
        """Search `workdir` (and nothing outside it), showing at most `max_matches` lines."""
        super().__init__(workdir)
        self._max = max_matches
        self._spec = ToolSpec(
            name=GREP_TOOL,
            description=(
                "Search file contents with a regular expression (Python syntax; `(?i)` ignores "
                "case) in the working directory. Returns matching lines as `path:line: text`, at "
                f"most {max_matches}. `path` is a folder or a file to search (default: the working "
                "directory); `glob` limits the files searched, e.g. `*.py` (a pattern without `/` "
                "matches file names at any depth) or `src/**/*.ts`. Skips .git, node_modules, "
                "virtualenvs, caches, what .gitignore ignores and binary files. Read-only."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The regular expression."},
                    "path": {
                        "type": "string",
                        "description": "A folder or file inside the working directory.",
                    },
                    "glob": {"type": "string", "description": "Only files matching this glob pattern."},
                },
                "required": ["pattern"],
            },
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> GrepArgs:
        """Validate the input: the regex and glob compile, the path is inside the workdir.

        Raises:
            ToolInputError: with a message for the model.
        """
        data = validate_input(_GrepInput, raw, GREP_TOOL)
        try:
            regex = re.compile(data.pattern)
        except re.error as error:
            raise ToolInputError(f"invalid regular expression for {GREP_TOOL}: {error}") from error
        glob: re.Pattern[str] | None = None
        if data.glob:
            written = data.glob.removeprefix("./")
            try:
                glob = glob_regex(written if "/" in written else f"**/{written}")
            except ValueError as error:
                raise ToolInputError(f"invalid glob for {GREP_TOOL}: {error}") from error
        return GrepArgs(regex, data.pattern, self._confine(data.path), glob, data.glob)

    def summary(self, args: GrepArgs) -> str:
        """`grep PATTERN in PATH (GLOB)`."""
        only = f" ({args.glob_written})" if args.glob_written else ""
        return f"grep {args.written} in {self._display(args.where)}{only}"

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        """Search the files (in a worker thread)."""
        return await asyncio.to_thread(self._grep, args)

    def _grep(self, args: GrepArgs) -> ToolOutput:
        where = args.where
        if where.is_file():
            files: Iterator[Path] = iter([where])
        elif where.is_dir():
            files = walk_files(where, base=self._root, ignore=GitIgnore.read(self._root))
        else:
            return ToolOutput(f"no such file or folder: {self._display(where)}", is_error=True)
        lines: list[str] = []
        more = 0
        for path in files:
            if args.glob is not None and where.is_dir():
                if not args.glob.match(path.relative_to(where).as_posix()):
                    continue
            for number, text in self._matching_lines(path, args.regex):
                if len(lines) < self._max:
                    lines.append(f"{self._display(path)}:{number}: {text}")
                else:
                    more += 1
        if not lines:
            return ToolOutput(f"no matches for {args.written} in {self._display(where)}")
        if more:
            lines.append(f"[... {more} more matching lines; use a narrower pattern, path or glob ...]")
        return ToolOutput("\n".join(lines))

    def _matching_lines(self, path: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
        """The lines of a text file that match, numbered from 1 (none for a binary or huge file)."""
        try:
            # Checked again at the moment of reading: the walk's name may have been replaced
            # by a symlink out of the workdir since (`read_bytes` follows no final symlink).
            confine(self._workdir, path)
            data = read_bytes(path, self._display(path), MAX_GREP_FILE_BYTES)
        except (EditError, PathOutsideWorkdir, OSError):
            return
        if b"\0" in data[:_BINARY_SNIFF]:
            return
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                yield number, line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [...]"
