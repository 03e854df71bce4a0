"""Hunk review: a turn's changes by hunk, reverting some of them, and the critic's remarks on them.

Why it is built this way:

- **From the checkpoints.** A turn's changes are the difference between its `before` and
  `after` snapshots, so what bash changed shows beside the editor's writes.
- **Hunks as `diff -u` groups them**: difflib's grouped opcodes with `CONTEXT` lines around each
  change (changes closer than twice that form one hunk). Reverting a subset rebuilds the file
  from the same opcodes, each change of a rejected hunk taking its old lines back, so the bytes
  of everything else stay as the turn left them.
- **The file may have moved on** since the turn (the user, a later turn). A rejected hunk is then
  found by its new lines, context included, in the text on disk; found other than exactly once,
  the file is left alone and named as a conflict, never half reverted.
- **A revert is a change the app makes**: snapshotted before and after, and the caller records
  the pair like a turn's (`History.revert_hunks`), so rewinding the turn later still restores it
  rather than taking the revert for the user's own work.
- **The critic's remarks** are matched by the file and lines they name (`app.py:12`,
  `app.py lines 3-5`, `line 4 of app.py`): a remark sits beside every hunk whose lines it names;
  one that names the file alone is shown with the file.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_assist.session.checkpoints.checkpoints import Checkpoints
from tui_assist.session.checkpoints.shadow_repo import os_error
from tui_assist.session.checkpoints.types import ChangeKind
from tui_assist.tools.safe_io import write_atomically

__all__ = [
    "CONTEXT",
    "FileHunks",
    "Hunk",
    "HunkConflict",
    "HunkKey",
    "MAX_DIFF_BYTES",
    "MAX_FILES",
    "Remark",
    "RevertResult",
    "TurnChanges",
    "diff_hunks",
    "file_hunks",
    "find_remarks",
    "load_changes",
    "reasons_prompt",
    "reverted_on_disk",
    "remarks_from_edit",
    "remarks_on",
    "revert_file",
    "revert_hunks",
    "revert_text",
]

CONTEXT = 3
"""Unchanged lines shown (and matched) around each change."""
MAX_FILES = 200
"""A turn's changed files shown at most (a tree it generated is not read in full)."""
MAX_DIFF_BYTES = 1_000_000
"""A file larger than this (before and after together) is one hunk, reverted whole, not diffed."""

HunkKey = tuple[str, int]
"""A hunk's path and its index in the file."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_RANGE = r"(\d+)(?:\s*(?:-|–|to|and)\s*(\d+))?"
_LINES_AFTER = re.compile(r"[`'\"]?(?::(\d+)(?:[-–](\d+))?|,?\s+\(?(?:on\s+|at\s+)?lines?\s+" + _RANGE + ")")
_LINES_BEFORE = re.compile(r"lines?\s+" + _RANGE + r"\s+(?:of|in)\s+[`'\"]?$")


@dataclass(frozen=True, slots=True)
class Hunk:
    """One group of changed lines of a file, with its context."""

    path: str
    index: int
    """Its place among the file's hunks, from 0."""
    old_start: int
    """First line in the old text, from 1 (for no lines, the line before them, as `diff -u`)."""
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]
    """`-old`, `+new` and ` context` lines, without their line ends."""

    @property
    def key(self) -> HunkKey:
        """Its path and index: how a review names it."""
        return (self.path, self.index)

    @property
    def header(self) -> str:
        """`@@ -old_start,old_count +new_start,new_count @@`."""
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"

    @property
    def span(self) -> tuple[int, int]:
        """The lines it covers in the new text (a deletion: the line where it was)."""
        first = max(self.new_start, 1)
        return first, max(first, self.new_start + self.new_count - 1)

    @property
    def changed(self) -> tuple[int, int]:
        """The new-text lines its changes are on, context left out (a deletion: where it was)."""
        line, marks = max(self.new_start, 1), list[int]()
        for text in self.lines:
            if text[:1] != " ":
                marks.append(line)
            line += text[:1] != "-"
        return (min(marks), max(marks)) if marks else self.span

    @property
    def where(self) -> str:
        """Its place for a sentence: `line 3`, `lines 3-5`, or `the whole file` (binary or large)."""
        if not self.lines:
            return "the whole file"
        first, last = self.changed
        return f"line {first}" if first == last else f"lines {first}-{last}"

    def touches(self, first: int, last: int) -> bool:
        """Whether the new-text lines `first`..`last` meet this hunk."""
        start, end = self.span
        return first <= end and last >= start


@dataclass(frozen=True, slots=True)
class FileHunks:
    """One changed file, its contents before and after the turn, and its hunks."""

    path: str
    kind: ChangeKind
    old: bytes | None
    """None when the turn created the file."""
    new: bytes | None
    """None when the turn deleted it."""
    hunks: tuple[Hunk, ...]
    whole: bool = False
    """Binary or too large to diff: one hunk without lines stands for the whole file."""


@dataclass(frozen=True, slots=True)
class TurnChanges:
    """A turn's changes, and where they were taken."""

    workdir: str
    before: str
    after: str
    files: tuple[FileHunks, ...]
    more: int = 0
    """Changed files left out (past `MAX_FILES`)."""
    reverted: frozenset[HunkKey] = frozenset()
    """Hunks no longer on disk: their old lines are back where their new lines were."""

    @property
    def hunks(self) -> list[Hunk]:
        """Every file's hunks, in order."""
        return [h for f in self.files for h in f.hunks]


@dataclass(frozen=True, slots=True)
class Remark:
    """A sentence of the critic's that names a changed file, and the lines it names, if any."""

    sentence: str
    path: str
    lines: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class RevertResult:
    """What `revert_hunks` did."""

    before: str
    """The snapshot taken just before writing; record `(before, after)` like a turn's."""
    after: str
    reverted: tuple[HunkKey, ...]
    conflicts: tuple[str, ...]
    """Files left alone: they changed since the turn where a rejected hunk is."""


# --------------------------------------------------------------------------- diffs and reverts


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its line end (the last one may lack it)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _text(data: bytes) -> str | None:
    """`data` as text, or None when it is binary (not UTF-8, or holding a NUL)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _start(low: int, high: int) -> int:
    return low + 1 if high > low else low


_Opcode = tuple[str, int, int, int, int]


def _groups(
    old: str, new: str
) -> tuple[list[str], list[str], difflib.SequenceMatcher[str], list[list[_Opcode]]]:
    """Both texts' lines, their matcher, and its opcodes grouped into hunks."""
    a, b = _lines(old), _lines(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(CONTEXT)) if a != b else []
    return a, b, matcher, groups


def diff_hunks(path: str, old: str, new: str) -> tuple[Hunk, ...]:
    """The hunks that turn `old` into `new`."""
    a, b, _, groups = _groups(old, new)
    hunks: list[Hunk] = []
    for index, group in enumerate(groups):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line.rstrip("\r\n") for line in a[i1:i2]]
                continue
            lines += ["-" + line.rstrip("\r\n") for line in a[i1:i2]]
            lines += ["+" + line.rstrip("\r\n") for line in b[j1:j2]]
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        hunks.append(Hunk(path, index, _start(i1, i2), i2 - i1, _start(j1, j2), j2 - j1, tuple(lines)))
    return tuple(hunks)


def revert_text(old: str, new: str, rejected: Collection[int]) -> str:
    """`new` with the changes of the `rejected` hunks (by index) taken back to `old`."""
    a, b, matcher, groups = _groups(old, new)
    owner = {
        (i1, j1): index for index, group in enumerate(groups) for tag, i1, _, j1, _ in group if tag != "equal"
    }
    out: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out += a[i1:i2] if tag != "equal" and owner.get((i1, j1)) in rejected else b[j1:j2]
    return "".join(out)


def _revert_moved(current: str, old: str, new: str, rejected: Collection[int]) -> str | None:
    """`revert_text` on a file that changed since: each rejected hunk found by its new lines."""
    a, b, _, groups = _groups(old, new)
    lines = _lines(current)
    for index in sorted(rejected):
        group = groups[index]
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        places = _places(lines, b[j1:j2])
        if len(places) != 1:
            return None
        lines[places[0] : places[0] + j2 - j1] = a[i1:i2]
    return "".join(lines)


def _places(lines: list[str], block: list[str]) -> list[int]:
    """Where `block` starts in `lines`, whole lines only (none for an empty block)."""
    size = len(block)
    if not size:
        return []
    return [k for k in range(len(lines) - size + 1) if lines[k] == block[0] and lines[k : k + size] == block]


def file_hunks(path: str, kind: ChangeKind, old: bytes | None, new: bytes | None) -> FileHunks:
    """A changed file and its hunks (a binary or very large file is one hunk without lines)."""
    old_text, new_text = _text(old or b""), _text(new or b"")
    if old_text is None or new_text is None or len(old or b"") + len(new or b"") > MAX_DIFF_BYTES:
        return FileHunks(path, kind, old, new, (Hunk(path, 0, 0, 0, 0, 0, ()),), whole=True)
    return FileHunks(path, kind, old, new, diff_hunks(path, old_text, new_text))


class HunkConflict(Exception):
    """The file changed since the turn where a rejected hunk is: it is left alone."""


def revert_file(file: FileHunks, rejected: Collection[int], current: bytes | None) -> bytes | None:
    """What the file should hold with the `rejected` hunks reverted; None: delete it.

    Args:
        file: The file as the turn changed it.
        rejected: Indexes of the hunks to revert.
        current: What the file holds on disk now (None when it is not there).

    Raises:
        HunkConflict: The file changed since the turn where a rejected hunk is.
    """
    every = {h.index for h in file.hunks} <= set(rejected)
    old_text, new_text = _text(file.old or b""), _text(file.new or b"")
    whole = file.whole or file.kind != "modified"
    if whole or (every and current == file.new):
        if not every or current != file.new:
            raise HunkConflict
        return file.old
    assert old_text is not None and new_text is not None
    current_text = _text(current) if current is not None else None
    if current_text is None:
        raise HunkConflict
    if current_text == new_text:
        return revert_text(old_text, new_text, rejected).encode("utf-8")
    reverted = _revert_moved(current_text, old_text, new_text, rejected)
    if reverted is None:
        raise HunkConflict
    return reverted.encode("utf-8")


# --------------------------------------------------------------------------- the critic's remarks


def find_remarks(feedback: str, paths: Sequence[str]) -> list[Remark]:
    """The sentences of `feedback` that name one of `paths`, with the lines they name.

    A file is named by its path or, when no other changed file shares it, its base name.
    """
    bases = [p.rsplit("/", 1)[-1] for p in paths]
    names: list[tuple[str, str]] = [(p, p) for p in paths]
    names += [(base, p) for base, p in zip(bases, paths, strict=True) if bases.count(base) == 1 and base != p]
    found: list[Remark] = []
    for sentence in (s.strip() for s in _SENTENCE_END.split(feedback)):
        if not sentence:
            continue
        seen: set[tuple[str, tuple[int, int] | None]] = set()
        named: set[str] = set()
        for name, path in names:
            pattern = re.compile(r"(?<![\w.-])" + re.escape(name) + r"(?![\w/-])")
            for match in pattern.finditer(sentence):
                named.add(path)
                lines = _lines_named(sentence, match.start(), match.end())
                if lines is not None and (path, lines) not in seen:
                    seen.add((path, lines))
                    found.append(Remark(sentence, path, lines))
        for path in named:
            if not any(p == path for p, _ in seen):
                found.append(Remark(sentence, path, None))
    return found


def _lines_named(sentence: str, start: int, end: int) -> tuple[int, int] | None:
    after = _LINES_AFTER.match(sentence, end)
    if after is not None:
        first = after.group(1) or after.group(3)
        last = after.group(2) or after.group(4) or first
        return int(first), max(int(first), int(last))
    before = _LINES_BEFORE.search(sentence[:start])
    if before is not None:
        first, last = before.group(1), before.group(2) or before.group(1)
        return int(first), max(int(first), int(last))
    return None


def remarks_from_edit(
    sentences: Sequence[str], file: FileHunks, old_text: str | None, new_text: str
) -> list[Remark]:
    """Sentences citing an editor call of `file` (`[2]`), on the lines that call changed.

    Those lines are the turn's when the file still holds what the call wrote; otherwise (a later
    call changed it again) the sentences are about the file as a whole.
    """
    if _text(file.new or b"") != new_text:
        return [Remark(s, file.path, None) for s in sentences]
    spans = [h.changed for h in diff_hunks(file.path, old_text or "", new_text)]
    return [Remark(s, file.path, span) for s in sentences for span in spans]


def remarks_on(hunk: Hunk, remarks: Sequence[Remark]) -> list[str]:
    """The sentences that name `hunk`'s file and lines it covers (each once)."""
    named = [r.sentence for r in remarks if r.path == hunk.path and r.lines and hunk.touches(*r.lines)]
    return list(dict.fromkeys(named))


def reasons_prompt(rejected: Sequence[tuple[Hunk, str]]) -> str:
    """The next prompt offered after a revert: which hunks went back, and why."""
    lines = ["I reverted these hunks of your change:"]
    for hunk, reason in rejected:
        header = f" ({hunk.header})" if hunk.lines else ""
        lines.append(f"- {hunk.path} {hunk.where}{header}: {reason.strip() or 'no reason given'}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- on the checkpoints


def reverted_on_disk(file: FileHunks, current: bytes | None) -> set[int]:
    """The file's hunks that `current` (what the disk holds) no longer has: a revert took them back."""
    if current == file.new:
        return set()
    if file.whole or file.kind != "modified":
        return {0} if current == file.old else set()
    old_text, new_text = _text(file.old or b""), _text(file.new or b"")
    current_text = _text(current) if current is not None else None
    if old_text is None or new_text is None or current_text is None:
        return set()
    a, b, _, groups = _groups(old_text, new_text)
    lines = _lines(current_text)
    gone: set[int] = set()
    for index, group in enumerate(groups):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        if not _places(lines, b[j1:j2]) and _places(lines, a[i1:i2]):
            gone.add(index)
    return gone


async def load_changes(checkpoints: Checkpoints, before: str, after: str) -> TurnChanges:
    """The files that changed between two snapshots, by hunk, and which hunks the disk lost since.

    At most `MAX_FILES` files are read; `TurnChanges.more` counts the rest.
    """
    changes = await checkpoints.changed_files(before, after)
    shown = changes[:MAX_FILES]
    olds = await checkpoints.read_files(before, [c.path for c in shown if c.kind != "added"])
    news = await checkpoints.read_files(after, [c.path for c in shown if c.kind != "deleted"])
    files = [file_hunks(c.path, c.kind, olds.get(c.path), news.get(c.path)) for c in shown]
    reverted: set[HunkKey] = set()
    for file in files:
        target = _inside(checkpoints.workdir, file.path)
        try:
            current = _read(target) if target is not None else None
        except HunkConflict:
            continue
        reverted.update((file.path, index) for index in reverted_on_disk(file, current))
    workdir = str(checkpoints.workdir)
    return TurnChanges(workdir, before, after, tuple(files), len(changes) - len(shown), frozenset(reverted))


async def revert_hunks(
    checkpoints: Checkpoints, changes: TurnChanges, rejected: Collection[HunkKey]
) -> RevertResult:
    """Revert the `rejected` hunks on disk, between two snapshots.

    Raises:
        CheckpointError: A snapshot failed, or a file could not be written.
    """
    before = await checkpoints.snapshot("revert:before")
    workdir = Path(changes.workdir)
    reverted: list[HunkKey] = []
    conflicts: list[str] = []
    for file in changes.files:
        indexes = {index for path, index in rejected if path == file.path}
        if not indexes:
            continue
        target = _inside(workdir, file.path)
        try:
            if target is None:
                raise HunkConflict
            content = revert_file(file, indexes, _read(target))
        except HunkConflict:
            conflicts.append(file.path)
            continue
        try:
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(target, content)
        except OSError as error:
            raise os_error(error, target) from None
        reverted += sorted((file.path, i) for i in indexes)
    after = await checkpoints.snapshot("revert:after")
    return RevertResult(before.commit, after.commit, tuple(reverted), tuple(conflicts))


def _inside(workdir: Path, rel: str) -> Path | None:
    """`rel` under `workdir`, or None when it leaves it or passes through a symlink."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    path = workdir
    for part in parts[:-1]:
        path = path / part
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
        except FileNotFoundError:
            break  # created by the revert
    return workdir.joinpath(*parts)


def _read(path: Path) -> bytes | None:
    """A regular file's bytes; None when nothing is there. A symlink or a folder is a conflict."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise HunkConflict
    return path.read_bytes()
