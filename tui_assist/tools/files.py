r"""The text editor tool, in the shape of Anthropic's `str_replace_based_edit_tool`.

Every path is confined to the workdir twice: when the input is parsed (so an escaping call is
refused before anyone is asked to approve it) and again just before the file is touched (so a
symlink created in between by another tool cannot redirect the write).

Files are read and written as raw UTF-8 bytes, never through universal-newline text mode, so
an edit leaves `\r\n` line endings and a missing final newline exactly as they were.

The editor handles regular files only, reads at most `max_file_bytes`, and writes by replacing
the file (never into its inode, so a hard link out of the workdir is not written through): that
file access lives in `tui_assist.tools.safe_io`, whose docstring says why each check is there.

Paths longer than the system allows are refused when the input is parsed, so an over-long path
is an input error the model reads rather than an `OSError` in the approval summary.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tui_assist.core.events import FileDiff
from tui_assist.core.model import ToolSpec
from tui_assist.core.tooling import Diagnostics, ToolContext, ToolInputError, ToolOutput, diagnostic_line
from tui_assist.tools.base import PathOutsideWorkdir, confine, describe_validation_error
from tui_assist.tools.safe_io import (
    EditError,
    make_directories,
    path_limits,
    read_text,
    replace_file,
    writable_target,
)

TOOL_NAME = "str_replace_based_edit_tool"
COMMANDS = ("view", "create", "str_replace", "insert")
_SNIPPET_CONTEXT = 4
_DIFF_CHARS = 1_000_000
"""A write whose before and after together are longer reports no diff (it is stored per call)."""
"""Lines shown around an edit in its result, so the model sees what the file now says."""
MAX_FILE_BYTES = 10 * 1024 * 1024
"""The largest file the editor reads by default; bigger files are refused before reading."""


# ---------------------------------------------------------------------------------------------
# Input: pydantic models for validation, then plain frozen arguments with the confined path.


class _Input(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    path: str = Field(min_length=1)


class _ViewInput(_Input):
    command: Literal["view"]
    view_range: list[int] | None = Field(default=None, min_length=2, max_length=2)


class _CreateInput(_Input):
    command: Literal["create"]
    file_text: str


class _StrReplaceInput(_Input):
    command: Literal["str_replace"]
    old_str: str = Field(min_length=1)
    new_str: str = ""


class _InsertInput(_Input):
    command: Literal["insert"]
    insert_line: int = Field(ge=0)
    insert_text: str | None = None
    new_str: str | None = None
    """Older versions of Anthropic's tool send the inserted text as `new_str`."""


_INPUTS: dict[str, type[_Input]] = {
    "view": _ViewInput,
    "create": _CreateInput,
    "str_replace": _StrReplaceInput,
    "insert": _InsertInput,
}


@dataclass(frozen=True, slots=True)
class ViewArgs:
    """Show a file (with line numbers) or list a directory."""

    path: Path
    """The resolved path, inside the workdir."""
    display: str
    """The path relative to the workdir, for messages."""
    view_range: tuple[int, int] | None = None
    """1-based inclusive line range; an end of -1 means the end of the file."""


@dataclass(frozen=True, slots=True)
class CreateArgs:
    """Write a file with the given content, creating parent directories; overwrites."""

    path: Path
    """The resolved path, inside the workdir."""
    display: str
    """The path relative to the workdir, for messages."""
    file_text: str
    """The whole new content."""


@dataclass(frozen=True, slots=True)
class StrReplaceArgs:
    """Replace the one occurrence of `old_str` with `new_str`."""

    path: Path
    """The resolved path, inside the workdir."""
    display: str
    """The path relative to the workdir, for messages."""
    old_str: str
    """Text that must occur exactly once in the file."""
    new_str: str
    """Its replacement (may be empty, to delete)."""


@dataclass(frozen=True, slots=True)
class InsertArgs:
    """Insert text after a given line."""

    path: Path
    """The resolved path, inside the workdir."""
    display: str
    """The path relative to the workdir, for messages."""
    insert_line: int
    """Insert after this line; 0 inserts at the top."""
    insert_text: str
    """The text to insert; a final newline is added when missing."""


EditorArgs = ViewArgs | CreateArgs | StrReplaceArgs | InsertArgs

_Written = tuple[Path, str | None, str]
"""A write's file, its text before (None: a new file) and after: what the diagnostics check."""


# ---------------------------------------------------------------------------------------------
# Pure text operations, shared by `run` and by `summary` (which shows the diff before approval).


def _split_lines(text: str) -> list[str]:
    """Lines with their newline kept; a final line without newline is kept as it is."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _numbered(lines: list[str], first: int) -> str:
    """`cat -n` style: right-aligned line numbers, a tab, the line."""
    return "\n".join(f"{first + i:6}\t{line.rstrip(chr(10)).rstrip(chr(13))}" for i, line in enumerate(lines))


def _replace_once(text: str, old: str, new: str, display: str) -> tuple[str, int]:
    """Replace the single occurrence of `old`; return the new text and the 1-based line of the edit."""
    starts: list[int] = []
    index = text.find(old)
    while index >= 0:
        starts.append(index)
        index = text.find(old, index + 1)
    if not starts:
        raise EditError(
            f"old_str was not found in {display}; no change was made. It must match the file "
            "exactly, including whitespace and indentation (view the file to check)."
        )
    if len(starts) > 1:
        lines = ", ".join(str(text.count("\n", 0, start) + 1) for start in starts)
        raise EditError(
            f"old_str occurs {len(starts)} times in {display} (at lines {lines}); no change was made. "
            "Include more surrounding context so that it matches exactly once."
        )
    start = starts[0]
    return text[:start] + new + text[start + len(old) :], text.count("\n", 0, start) + 1


def _insert_after(text: str, line: int, insert: str, display: str) -> str:
    lines = _split_lines(text)
    if line > len(lines):
        raise EditError(
            f"insert_line {line} is past the end of {display}, which has {len(lines)} lines; "
            f"use a number from 0 (top) to {len(lines)} (end)."
        )
    if not insert.endswith("\n"):
        insert += "\n"
    if line == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:line]) + insert + "".join(lines[line:])


def _unified_diff(before: str, after: str, display: str) -> str:
    diff = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{display}",
        tofile=f"b/{display}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in diff).rstrip("\n")


def _snippet(text: str, first_line: int, line_count: int) -> str:
    """Numbered lines around an edit that starts at `first_line` and spans `line_count` lines."""
    lines = _split_lines(text)
    start = max(1, first_line - _SNIPPET_CONTEXT)
    end = min(len(lines), first_line + max(line_count, 1) - 1 + _SNIPPET_CONTEXT)
    return _numbered(lines[start - 1 : end], start)


# ---------------------------------------------------------------------------------------------


_DESCRIPTION = """\
View, create and edit text files in the working directory.
- `view`: a file is shown with line numbers (`cat -n` style), optionally only `view_range` \
[start, end] (1-based, inclusive; end -1 means to the end); a directory lists its files up to 2 \
levels deep, excluding hidden items.
- `create`: write `file_text` to `path` (parent directories are created; an existing file is \
overwritten).
- `str_replace`: replace `old_str` with `new_str`; `old_str` must match exactly one place in the \
file, including whitespace.
- `insert`: insert `insert_text` after line `insert_line` (0 inserts at the top).
Paths are relative to the working directory; paths outside it are refused."""

_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(COMMANDS), "description": "The operation."},
        "path": {"type": "string", "description": "File or directory, relative to the working directory."},
        "file_text": {"type": "string", "description": "create: the whole content of the new file."},
        "old_str": {"type": "string", "description": "str_replace: the exact text to replace (unique)."},
        "new_str": {"type": "string", "description": "str_replace: the replacement text."},
        "insert_line": {"type": "integer", "description": "insert: insert after this line (0 = top)."},
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": "view: [start, end] lines, 1-based; end -1 means to the end.",
        },
    },
    "required": ["command", "path"],
}


class TextEditorTool:
    """The `str_replace_based_edit_tool`: view, create, str_replace and insert, inside the workdir."""

    def __init__(
        self,
        workdir: Path,
        *,
        max_output_chars: int = 30_000,
        max_file_bytes: int = MAX_FILE_BYTES,
        diagnostics: Diagnostics | None = None,
    ) -> None:
        """Create the editor for one workdir.

        Args:
            workdir: The only directory (with its subdirectories) the editor may touch.
            max_output_chars: `view` output beyond this many characters is cut, with a marker.
            max_file_bytes: Larger files are refused (before they are read).
            diagnostics: Checks each written file; its new errors join the result as `LSP:` lines.
        """
        self._diagnostics = diagnostics
        self._workdir = workdir
        self._root = workdir.resolve()
        self._max_output_chars = max_output_chars
        self._max_file_bytes = max_file_bytes
        # Read once: the limits of the workdir's filesystem, for refusing over-long paths in `parse`.
        self._name_max, self._path_max = path_limits(self._root)
        self._spec = ToolSpec(
            name=TOOL_NAME,
            description=_DESCRIPTION,
            input_schema=_INPUT_SCHEMA,
            native_type="text_editor_20250728",
        )

    @property
    def spec(self) -> ToolSpec:
        """The editor as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> EditorArgs:
        """Validate the model's input: the arguments of one command, its path resolved in the workdir.

        Raises:
            ToolInputError: on an unknown command, missing or mistyped fields, a bad `view_range`,
                text that is not valid Unicode, or a path that resolves outside the workdir or is
                longer than the system allows.
        """
        if not isinstance(raw, dict):  # pyright: ignore[reportUnnecessaryIsInstance]  # untrusted
            raise ToolInputError(f"invalid input for {TOOL_NAME}: expected a JSON object")
        command = raw.get("command")
        if command is None:
            raise ToolInputError(
                f"invalid input for {TOOL_NAME}: command is required ({', '.join(COMMANDS)})"
            )
        if not isinstance(command, str) or command not in _INPUTS:
            raise ToolInputError(
                f"invalid input for {TOOL_NAME}: unknown command {command!r}; "
                f"expected one of {', '.join(COMMANDS)}"
            )
        try:
            data = _INPUTS[command].model_validate(raw)
        except ValidationError as error:
            raise ToolInputError(describe_validation_error(error, f"{TOOL_NAME} {command}")) from error
        _require_encodable(data)
        path = self._confine(data.path)
        display = self._display(path)
        match data:
            case _ViewInput(view_range=None):
                return ViewArgs(path, display)
            case _ViewInput(view_range=[start, end]):
                if start < 1 or (end != -1 and end < start):
                    raise ToolInputError(
                        f"invalid view_range [{start}, {end}]: start must be >= 1 and end must be "
                        ">= start, or -1 for the end of the file"
                    )
                return ViewArgs(path, display, (start, end))
            case _CreateInput(file_text=file_text):
                return CreateArgs(path, display, file_text)
            case _StrReplaceInput(old_str=old_str, new_str=new_str):
                return StrReplaceArgs(path, display, old_str, new_str)
            case _InsertInput(insert_line=line, insert_text=text, new_str=legacy):
                inserted = text if text is not None else legacy
                if inserted is None:
                    raise ToolInputError(f"invalid input for {TOOL_NAME} insert: insert_text is required")
                return InsertArgs(path, display, line, inserted)
            case _:  # pragma: no cover - every model is matched above
                raise ToolInputError(f"invalid input for {TOOL_NAME}: unsupported command {command!r}")

    def side_effecting(self, args: EditorArgs) -> bool:
        """All commands but `view`: `create`, `str_replace` and `insert` write."""
        return not isinstance(args, ViewArgs)

    def summary(self, args: EditorArgs) -> str:
        """What the call will do, for an approval prompt.

        `view PATH`; `create PATH` and the content (noting an overwrite); for `str_replace` and
        `insert`, a unified diff of the change, or why the call will fail.
        """
        match args:
            case ViewArgs(display=display, view_range=view_range):
                if view_range is None:
                    return f"view {display}"
                start, end = view_range
                return f"view {display} (lines {start} to {'end' if end == -1 else end})"
            case CreateArgs(path=path, display=display, file_text=text):
                try:
                    existed = writable_target(path, display)
                except (EditError, OSError) as error:
                    return f"create {display} (this call will fail: {_reason(error)})"
                overwrite = " (overwrites the existing file)" if existed else ""
                return f"create {display}{overwrite}\n{text}"
            case StrReplaceArgs(path=path, display=display, old_str=old, new_str=new):
                try:
                    before = read_text(path, display, self._max_file_bytes)
                    after, _ = _replace_once(before, old, new, display)
                except (EditError, OSError) as error:
                    return f"str_replace {display} (this call will fail: {_reason(error)})"
                return f"str_replace {display}\n{_unified_diff(before, after, display)}"
            case InsertArgs(path=path, display=display, insert_line=line, insert_text=text):
                try:
                    before = read_text(path, display, self._max_file_bytes)
                    after = _insert_after(before, line, text, display)
                except (EditError, OSError) as error:
                    return f"insert {display} (this call will fail: {_reason(error)})"
                return f"insert {display} after line {line}\n{_unified_diff(before, after, display)}"

    async def run(self, args: EditorArgs, ctx: ToolContext) -> ToolOutput:
        """Carry out the command (file I/O runs in a worker thread).

        Args:
            args: The parsed arguments.
            ctx: The running context (unused: the editor is bound to its workdir).

        Returns:
            The view, or a confirmation with a numbered snippet of the edited region (and, after a
            write, the errors it introduced, as `LSP: path:line:col: message [code]` lines); an
            error output when the file is missing, not text, ambiguous to edit, or outside the
            workdir.
        """
        try:
            output, written = await asyncio.to_thread(self._execute, args)
        except (EditError, PathOutsideWorkdir, OSError) as error:
            return ToolOutput(_reason(error), is_error=True)
        if written is None or self._diagnostics is None:
            return output
        path, before, after = written
        errors = await self._diagnostics.after_write(path, before, after)
        if not errors:
            return output
        lines = "\n".join(diagnostic_line(args.display, error) for error in errors)
        return ToolOutput(f"{output.content}\n{lines}", diff=output.diff)

    # -----------------------------------------------------------------------------------------

    def _confine(self, raw: str) -> Path:
        try:
            path = confine(self._workdir, raw)
        except PathOutsideWorkdir as error:
            raise ToolInputError(str(error)) from error
        size = len(os.fsencode(path))
        if size >= self._path_max:
            raise ToolInputError(
                f"path is too long: {size:,} bytes once resolved, and the system allows fewer than "
                f"{self._path_max:,}; use a shorter path"
            )
        for name in path.relative_to(self._root).parts:
            if len(os.fsencode(name)) > self._name_max:
                raise ToolInputError(
                    f"a name in the path is too long: {len(os.fsencode(name)):,} bytes (it starts "
                    f"{name[:20]!r}), and the system allows at most {self._name_max} per name"
                )
        return path

    def _display(self, path: Path) -> str:
        relative = path.relative_to(self._root)
        return str(relative) if relative.parts else "."

    def _execute(self, args: EditorArgs) -> tuple[ToolOutput, _Written | None]:
        # Re-check at the last moment: the filesystem may have changed since `parse`.
        path = confine(self._workdir, args.path)
        match args:
            case ViewArgs():
                return ToolOutput(self._view(path, args)), None
            case CreateArgs(display=display, file_text=text):
                existed = writable_target(path, display)
                old_text = self._text_before(path, display) if existed else None
                make_directories(self._root, path.parent)
                existed = replace_file(path, text.encode("utf-8"), display)
                verb = "overwrote" if existed else "created"
                before = old_text if existed else None
                output = ToolOutput(
                    f"File {verb}: {display} ({len(_split_lines(text))} lines)",
                    diff=self._diff(path, before, text),
                )
                return output, (path, before, text)
            case StrReplaceArgs(display=display, old_str=old, new_str=new):
                before = read_text(path, display, self._max_file_bytes)
                after, line = _replace_once(before, old, new, display)
                replace_file(path, after.encode("utf-8"), display)
                snippet = _snippet(after, line, len(_split_lines(new)))
                output = ToolOutput(
                    f"Edited {display}. The edited region now reads:\n{snippet}",
                    diff=self._diff(path, before, after),
                )
                return output, (path, before, after)
            case InsertArgs(display=display, insert_line=line, insert_text=text):
                before = read_text(path, display, self._max_file_bytes)
                after = _insert_after(before, line, text, display)
                replace_file(path, after.encode("utf-8"), display)
                count = len(_split_lines(text if text.endswith("\n") else text + "\n"))
                snippet = _snippet(after, line + 1, count)
                output = ToolOutput(
                    f"Inserted {count} line(s) after line {line} of {display}. "
                    f"The region now reads:\n{snippet}",
                    diff=self._diff(path, before, after),
                )
                return output, (path, before, after)

    def _text_before(self, path: Path, display: str) -> str | None:
        """The text a `create` overwrites; None when it is not readable text (no diff then)."""
        try:
            return read_text(path, display, self._max_file_bytes)
        except (EditError, OSError):
            return None

    def _diff(self, path: Path, before: str | None, after: str) -> FileDiff | None:
        """What the write changed, for hosts; none past `_DIFF_CHARS` (the store keeps each one)."""
        if len(before or "") + len(after) > _DIFF_CHARS:
            return None
        return FileDiff(str(path), before, after)

    def _view(self, path: Path, args: ViewArgs) -> str:
        if path.is_dir():
            if args.view_range is not None:
                raise EditError("view_range applies to files, not directories")
            return self._list_directory(path, args.display)
        text = read_text(path, args.display, self._max_file_bytes)
        lines = _split_lines(text)
        if not lines:
            return f"{args.display} is empty."
        first, last = 1, len(lines)
        if args.view_range is not None:
            first, end = args.view_range
            if first > len(lines):
                raise EditError(
                    f"view_range starts at line {first}, but {args.display} has {len(lines)} lines"
                )
            last = len(lines) if end == -1 else min(end, len(lines))
        return self._numbered_within_limit(lines[first - 1 : last], first, len(lines), args.display)

    def _numbered_within_limit(self, lines: list[str], first: int, total: int, display: str) -> str:
        """Numbered lines, cut at a whole line once the output limit is reached."""
        shown: list[str] = []
        size = 0
        for offset, line in enumerate(lines):
            numbered = _numbered([line], first + offset)
            if shown and size + len(numbered) + 1 > self._max_output_chars:
                omitted = sum(len(rest) for rest in lines[offset:])
                shown.append(
                    f"[... {omitted} characters truncated: lines {first + offset} to "
                    f"{first + len(lines) - 1} of {total} in {display} not shown; "
                    "use view_range to see them ...]"
                )
                break
            if len(numbered) > self._max_output_chars:
                cut = len(numbered) - self._max_output_chars
                numbered = (
                    numbered[: self._max_output_chars] + f" [... line cut: {cut} characters truncated ...]"
                )
            shown.append(numbered)
            size += len(numbered) + 1
        return "\n".join(shown)

    def _list_directory(self, directory: Path, display: str) -> str:
        entries: list[str] = []

        def walk(folder: Path, depth: int) -> None:
            try:
                children = sorted(os.scandir(folder), key=lambda entry: entry.name)
            except OSError as error:
                entries.append(f"{self._display(folder)}/ (unreadable: {error.strerror})")
                return
            for child in children:
                if child.name.startswith("."):
                    continue
                # Never descend through a symlink: it may lead outside the workdir.
                is_dir = child.is_dir(follow_symlinks=False)
                entries.append(self._display(Path(child.path)) + ("/" if is_dir else ""))
                if is_dir and depth < 2:
                    walk(Path(child.path), depth + 1)

        walk(directory, 1)
        header = f"Files and directories up to 2 levels deep in {display}, excluding hidden items:"
        if not entries:
            return f"{header}\n(empty)"
        listing = "\n".join(entries)
        if len(listing) > self._max_output_chars:
            cut = listing.rfind("\n", 0, self._max_output_chars)
            cut = cut if cut > 0 else self._max_output_chars
            listing = (
                listing[:cut]
                + f"\n[... {len(listing) - cut} characters truncated; view a subdirectory to see more ...]"
            )
        return f"{header}\n{listing}"


def _require_encodable(data: _Input) -> None:
    """Refuse text fields that cannot be written as UTF-8 (JSON allows lone surrogates)."""
    for field, value in data.model_dump().items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ToolInputError(
                    f"invalid input for {TOOL_NAME}: {field} is not valid Unicode "
                    f"({error.reason} at character {error.start})"
                ) from error


def _reason(error: Exception) -> str:
    if isinstance(error, OSError) and error.strerror:
        target = f": {error.filename}" if error.filename else ""
        return f"{error.strerror}{target}"
    return str(error)
