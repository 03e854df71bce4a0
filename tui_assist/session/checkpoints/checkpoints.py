"""`Checkpoints`: taking snapshots of the workdir, planning and carrying out restores, pruning.

Built on `ShadowRepo` (the repository and its git plumbing); the design notes are in the package's
docstring.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from tui_assist.session.checkpoints.shadow_repo import ShadowRepo, nul_join, nul_split, os_error
from tui_assist.session.checkpoints.types import (
    CheckpointError,
    FileChange,
    KeptFile,
    PruneResult,
    RestorePlan,
    RestoreResult,
    SkippedFile,
    Snapshot,
    SnapshotInfo,
    TurnSnapshots,
)

__all__ = ["DEFAULT_EXCLUDES", "DEFAULT_MAX_FILE_BYTES", "DEFAULT_MAX_FILES", "Checkpoints"]

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files larger than this are not snapshotted (and say so)."""
DEFAULT_MAX_FILES = 100_000
"""More new or changed files than this in one snapshot is refused: the workdir is probably `~`."""
DEFAULT_EXCLUDES = (
    "node_modules/",
    "__pycache__/",
    ".venv/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
)
"""Regenerable directories left out even without a `.gitignore` saying so."""

# File times come from the kernel's coarse clock, up to a tick behind `time.time_ns()`.
_CLOCK_SLACK = 0.02
_T = TypeVar("_T")
_UNREADABLE_DIR = re.compile(r"could not open directory '(.+)': ")


@dataclass(slots=True)
class _Scan:
    """What `git status` (plus the walk of nested repositories) found to stage."""

    deleted: list[str] = field(default_factory=lambda: [])
    tracked_changed: list[str] = field(default_factory=lambda: [])
    untracked: list[str] = field(default_factory=lambda: [])
    nested_repos: list[str] = field(default_factory=lambda: [])
    unreadable: list[str] = field(default_factory=lambda: [])
    clean: bool = False
    """Nothing at all to report: the work tree matches the index, and the index matches HEAD."""


class Checkpoints(ShadowRepo):
    """Snapshots of one workdir, and restoring it to one of them.

    Every method runs git in subprocesses and may raise `CheckpointError`. Calls on one instance
    are serialized, and a file lock serializes processes sharing a workdir.
    """

    def __init__(
        self,
        data_dir: Path,
        workdir: Path,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
        excludes: Sequence[str] = DEFAULT_EXCLUDES,
        git: str = "git",
    ) -> None:
        """Set up (lazily: nothing touches the disk before the first call).

        Args:
            data_dir: The app's data dir; snapshots live in `<data_dir>/checkpoints/`.
            workdir: The directory to snapshot.
            max_file_bytes: Larger files are skipped and reported.
            max_files: A snapshot that would stage more new or changed files fails instead.
            excludes: Extra gitignore patterns, on top of the workdir's own.
            git: The git executable.
        """
        super().__init__(data_dir, workdir, git=git)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._excludes = tuple(excludes)

    # -- public API ---------------------------------------------------------------------------

    async def snapshot(self, label: str) -> Snapshot:
        """Record the workdir as it is now.

        Args:
            label: Stored as the commit message, e.g. `before:<turn_id>`.

        Returns:
            The snapshot; `commit` is the previous one when nothing changed.

        Raises:
            CheckpointError: git is missing, the workdir is unreadable, the disk is full...
        """
        async with self._locked():
            return await self._snapshot(label)

    async def changed_files(self, before: str, after: str) -> list[FileChange]:
        """The files that differ between two snapshots, e.g. what a turn changed.

        Args:
            before: The earlier snapshot's commit.
            after: The later snapshot's commit.

        Returns:
            The changes, sorted by path.

        Raises:
            CheckpointError: A snapshot no longer exists (pruned), or git failed.
        """
        async with self._locked():
            await self._require(before, after)
            return await self._diff(before, after)

    async def read_files(self, commit: str, paths: Sequence[str]) -> dict[str, bytes]:
        """The contents of files in a snapshot, in one git call; a file it does not hold is left out.

        Args:
            commit: The snapshot's commit.
            paths: Relative to the workdir, with `/` separators (a name holding a newline is
                left out: git's batch protocol cannot ask for it).
        """
        wanted = [p for p in paths if "\n" not in p]
        if not wanted:
            return {}
        async with self._locked():
            await self._require(commit)
            query = "".join(f"{commit}:{p}\n" for p in wanted)
            out = await self._git("cat-file", "--batch", input=query.encode())
        found: dict[str, bytes] = {}
        at = 0
        for path in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].split(b" ")
            at = end + 1
            if header[-1] in (b"missing", b"ambiguous"):
                continue
            size = int(header[2])
            if header[1] == b"blob":
                found[path] = out[at : at + size]
            at += size + 1
        return found

    async def has(self, commit: str) -> bool:
        """Whether a snapshot is still stored (pruning removes old ones).

        Args:
            commit: A snapshot's commit id.

        Returns:
            True when it can be restored or diffed.
        """
        async with self._locked():
            return not await self._missing([commit])

    async def snapshots(self) -> list[SnapshotInfo]:
        """Every stored snapshot, newest first.

        Returns:
            Their ids, labels and creation times.
        """
        async with self._locked():
            return [info for _, info in await self._refs()]

    async def plan_restore(self, target: str, turns: Sequence[TurnSnapshots] = ()) -> RestorePlan:
        """Work out what restoring the workdir to `target` would do, changing nothing.

        The workdir is snapshotted first (label `rewind:plan`), so the plan covers its state now.

        Args:
            target: The snapshot to go back to, typically the rewound turn's `before`.
            turns: The snapshot pairs of every change the app made since `target`, oldest first:
                the rewound turn, every later turn of the workdir, and earlier restores
                (`RestoreResult.before/after`). Whatever changed outside them is the user's.

        Returns:
            The plan: files to restore and delete, the user's changes to warn about, files kept.

        Raises:
            CheckpointError: `target` no longer exists (pruned), or git failed.
        """
        async with self._locked():
            await self._require(target)
            current = await self._snapshot("rewind:plan")
            return await self._plan(target, current.commit, turns)

    async def restore(
        self,
        plan: RestorePlan,
        *,
        overwrite_user_changes: bool = False,
        paths: Iterable[str] | None = None,
    ) -> RestoreResult:
        """Carry out a plan from `plan_restore`.

        Files turns changed are written back, files turns created are deleted. Files in
        `plan.user_changed` are left alone unless `overwrite_user_changes`; `plan.kept` always are.
        Ignored files are never touched.

        Args:
            plan: The plan the user saw.
            overwrite_user_changes: Also restore the files in `plan.user_changed` (after the user
                saw the warning listing them).
            paths: Restrict the restore to these paths (relative to the workdir).

        Returns:
            What was restored, deleted and kept, and the snapshots around the restore.

        Raises:
            CheckpointError: The workdir changed since the plan (plan again), or git failed.
        """
        async with self._locked():
            before = await self._snapshot("rewind:before")
            if before.commit != plan.current:
                raise CheckpointError("the workdir changed since the rewind was planned (plan it again)")
            wanted = None if paths is None else {p.strip("/") for p in paths}
            write = list(plan.restore)
            delete = list(plan.delete)
            kept = list(plan.kept)
            for change in plan.user_changed:
                if overwrite_user_changes:
                    (delete if change.kind == "added" else write).append(change.path)
                else:
                    kept.append(KeptFile(change.path, "changed_by_user"))
            if wanted is not None:
                write = [p for p in write if p in wanted]
                delete = [p for p in delete if p in wanted]
                kept = [k for k in kept if k.path in wanted]
            deleted = await asyncio.to_thread(self._delete_files, delete)
            if write:
                await self._git(
                    "checkout",
                    plan.target,
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    input=nul_join(write),
                )
            after = await self._snapshot("rewind:after")
            return RestoreResult(
                before=before.commit,
                after=after.commit,
                restored=tuple(sorted(write)),
                deleted=tuple(sorted(deleted)),
                kept=tuple(sorted(kept, key=lambda k: k.path)),
            )

    async def prune(self, max_age: timedelta, max_count: int) -> PruneResult:
        """Delete snapshots unused for longer than `max_age`, or beyond the newest `max_count`.

        A snapshot stays in use (reused by every snapshot of an unchanged workdir) until the next
        one is taken, so its age counts from then. The latest is always kept. Disk space is
        reclaimed (`git gc`) when any went.

        Args:
            max_age: Older snapshots go.
            max_count: At most this many are kept, newest first.

        Returns:
            How many were removed and how many remain.
        """
        async with self._locked():
            listed = await self._refs()
            head = self._head()
            cutoff = datetime.now(UTC) - max_age
            doomed = [
                ref
                for rank, (ref, info) in enumerate(listed)
                if info.commit != head
                and (rank >= max_count or (rank > 0 and listed[rank - 1][1].created < cutoff))
            ]
            if doomed:
                commands = "".join(f"delete {ref}\n" for ref in doomed)
                await self._git("update-ref", "--stdin", input=commands.encode())
                await self._git("gc", "--prune=now", "--quiet")
            else:
                await self._git("-c", "gc.auto=6700", "gc", "--auto", "--quiet")
            return PruneResult(removed=len(doomed), remaining=len(listed) - len(doomed))

    async def size_bytes(self) -> int:
        """Disk space this workdir's snapshots take.

        Returns:
            Bytes under the shadow repository (0 before the first snapshot).
        """
        return await asyncio.to_thread(_tree_size, self.git_dir)

    @staticmethod
    async def total_size_bytes(data_dir: Path) -> int:
        """Disk space the snapshots of every workdir take, for `stats`.

        Args:
            data_dir: The app's data dir.

        Returns:
            Bytes under `<data_dir>/checkpoints`.
        """
        return await asyncio.to_thread(_tree_size, data_dir / "checkpoints")

    # -- snapshot -------------------------------------------------------------------------------

    async def _snapshot(self, label: str) -> Snapshot:
        started_ns = time.time_ns()
        state = self._load_state()
        too_large = await _read_in_thread(self._still_too_large, state.too_large)
        rules_changed = await asyncio.to_thread(self._write_excludes, too_large, state.rules)
        scan = await self._scan()
        candidates = scan.tracked_changed + scan.untracked
        if scan.nested_repos:
            candidates += await self._nested_files(scan.nested_repos)
        if len(candidates) > self.max_files:
            raise CheckpointError(
                f"{len(candidates):,} new or changed files in {self.workdir}, more than the "
                f"{self.max_files:,} a checkpoint takes (ignore some in .gitignore, or turn checkpoints off)"
            )
        to_add, newly_large, unreadable = await _read_in_thread(self._sort_candidates, candidates)
        too_large.update(newly_large)
        if newly_large:
            await asyncio.to_thread(self._write_excludes, too_large, "")
        tracked = set(scan.tracked_changed)
        drop = [p for p in newly_large if p in tracked]
        stage = scan.deleted + to_add
        if stage:
            await self._git(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin", input=nul_join(stage)
            )
        if rules_changed or any(p.rsplit("/", 1)[-1] == ".gitignore" for p in stage):
            ignored = await self._git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
            drop += nul_split(ignored)
        if drop:
            await self._git("update-index", "-z", "--force-remove", "--stdin", input=nul_join(drop))
        same_skips = sorted(too_large) == sorted(state.too_large)
        if scan.clean and not (stage or drop) and same_skips and state.tree and self._head() == state.head:
            # Work tree = index = HEAD, the latest snapshot: skip write-tree (the index is 20k entries).
            tree = state.tree
        else:
            tree = (await self._git("write-tree")).decode().strip()
        skipped = tuple(
            [SkippedFile(p, "too_large", size) for p, size in sorted(too_large.items())]
            + [SkippedFile(p, "unreadable") for p in sorted(set(unreadable + scan.unreadable))]
        )
        if state.head and state.tree == tree and same_skips:
            commit, changed = state.head, False
        else:
            commit, changed = await self._commit(tree, label, sorted(too_large), started_ns), True
        state.head, state.tree, state.too_large = commit, tree, too_large
        state.rules = self._rules_digest()
        self._save_state(state)
        return Snapshot(commit=commit, label=label, changed=changed, skipped=skipped)

    async def _scan(self) -> _Scan:
        out, err = await self._git_with_stderr(
            "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"
        )
        entries = nul_split(out)
        scan = _Scan(clean=not entries)
        for entry in entries:
            code, path = entry[:2], entry[3:]
            if code == "??":
                (scan.nested_repos if path.endswith("/") else scan.untracked).append(path.rstrip("/"))
            elif code[1] == "D":
                scan.deleted.append(path)
            elif code[1] in "MT":
                scan.tracked_changed.append(path)
        scan.unreadable = [m.group(1).rstrip("/") for m in _UNREADABLE_DIR.finditer(err)]
        return scan

    async def _nested_files(self, repos: list[str]) -> list[str]:
        """The files of nested repositories, minus what the ignore rules leave out."""
        files = await _read_in_thread(self._walk_nested, repos)
        if not files:
            return []
        ignored = set(
            nul_split(
                await self._git(
                    "check-ignore", "-z", "--stdin", input=nul_join(files), ok=(1,), literal=False
                )
            )
        )
        return [p for p in files if p not in ignored]

    def _walk_nested(self, repos: list[str]) -> list[str]:
        found: list[str] = []
        for repo in repos:
            for dirpath, dirnames, filenames in os.walk(self.workdir / repo, onerror=None):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                rel = Path(dirpath).relative_to(self.workdir).as_posix()
                found += [f"{rel}/{name}" for name in filenames if name != ".git"]
                # A symlink to a directory is a file to git: staged as the link, never followed.
                found += [f"{rel}/{d}" for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        return found

    def _sort_candidates(self, paths: list[str]) -> tuple[list[str], dict[str, int], list[str]]:
        """Split what to stage from what is too large or unreadable, with `lstat` only."""
        to_add: list[str] = []
        too_large: dict[str, int] = {}
        unreadable: list[str] = []
        for rel in paths:
            full = os.path.join(self.workdir, rel)
            try:
                info = os.lstat(full)
            except OSError:
                continue  # gone since the scan
            if stat.S_ISREG(info.st_mode):
                if info.st_size > self.max_file_bytes:
                    too_large[rel] = info.st_size
                    continue
                if not os.access(full, os.R_OK):
                    unreadable.append(rel)
                    continue
            to_add.append(rel)
        return to_add, too_large, unreadable

    def _still_too_large(self, known: dict[str, int]) -> dict[str, int]:
        """Files skipped before that are still there and still too large; the rest get scanned."""
        still: dict[str, int] = {}
        for rel, _ in known.items():
            try:
                info = os.lstat(self.workdir / rel)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                still[rel] = info.st_size
        return still

    def _write_excludes(self, too_large: dict[str, int], previous_digest: str) -> bool:
        """Rewrite the shadow `info/exclude` if it changed; True when the ignore rules changed."""
        lines = ["# Written by tui-assist checkpoints on every snapshot.", *self._excludes]
        if self.data_dir.is_relative_to(self.workdir) and self.data_dir != self.workdir:
            lines.append("/" + _escape_pattern(self.data_dir.relative_to(self.workdir).as_posix()) + "/")
        lines += [p for p in map(_exclude_line, sorted(too_large)) if p]
        text = "\n".join(lines) + "\n"
        path = self.git_dir / "info" / "exclude"
        try:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
        except OSError as error:
            raise os_error(error, self.git_dir) from None
        return self._rules_digest() != previous_digest

    def _rules_digest(self) -> str:
        """Changes when the shadow's or the user repository's exclude file changes."""
        digest = hashlib.sha256()
        for path in (self.git_dir / "info" / "exclude", self._user_exclude):
            with contextlib.suppress(OSError):
                digest.update(path.read_bytes())
            digest.update(b"\0")
        return digest.hexdigest()

    # -- restore ---------------------------------------------------------------------------------

    async def _plan(self, target: str, current: str, turns: Sequence[TurnSnapshots]) -> RestorePlan:
        pending = {c.path: c for c in await self._diff(target, current)}
        by_turn: set[str] = set()
        by_user: set[str] = set()
        for start, end, is_turn in await self._segments(target, current, turns):
            touched = {c.path for c in await self._diff(start, end)} & pending.keys()
            (by_turn if is_turn else by_user).update(touched)
        snapshot_time, skipped_then = await self._commit_meta(target)
        skipped_now = self._load_state().too_large
        restore: list[str] = []
        delete: list[str] = []
        user_changed: list[FileChange] = []
        kept: list[KeptFile] = []
        for path, change in sorted(pending.items()):
            if path in skipped_now or path in skipped_then:
                kept.append(KeptFile(path, "too_large"))
            elif path in by_user or path not in by_turn:
                if change.kind == "added" and path not in by_turn:
                    kept.append(KeptFile(path, "created_by_user"))
                else:
                    user_changed.append(change)
            elif change.kind == "added":
                if self._changed_since(path, snapshot_time - _CLOCK_SLACK):
                    delete.append(path)
                else:
                    kept.append(KeptFile(path, "predates_snapshot"))
            else:
                restore.append(path)
        # Too large to snapshot since the target: never deleted, and said so.
        kept += [KeptFile(p, "too_large") for p in skipped_now.keys() - skipped_then - pending.keys()]
        kept.sort(key=lambda k: k.path)
        return RestorePlan(target, current, tuple(restore), tuple(delete), tuple(user_changed), tuple(kept))

    async def _segments(
        self, target: str, current: str, turns: Sequence[TurnSnapshots]
    ) -> list[tuple[str, str, bool]]:
        """The chain target → turn spans and the gaps between them → current, as (start, end, is_turn).

        A snapshot that no longer exists is dropped; the span across it counts as the user's.
        """
        points: list[tuple[str, bool]] = [
            (target, False)
        ]  # (commit, whether the span ending here is a turn's)
        for index, turn in enumerate(turns):
            points.append((turn.before, False))
            end = turn.after or (turns[index + 1].before if index + 1 < len(turns) else current)
            points.append((end, True))
        points.append((current, False))
        missing = await self._missing([c for c, _ in points])
        merged: list[tuple[str, bool]] = [points[0]]
        carry_user = False
        for commit, is_turn in points[1:]:
            if commit in missing:
                carry_user = True
                continue
            merged.append((commit, is_turn and not carry_user))
            carry_user = False
        return [
            (start, end, is_turn)
            for (start, _), (end, is_turn) in zip(merged, merged[1:], strict=False)
            if start != end
        ]

    def _changed_since(self, rel: str, when: float) -> bool:
        """Whether the file's inode changed after `when`: a file created by a turn always has."""
        try:
            return os.lstat(self.workdir / rel).st_ctime >= when
        except OSError:
            return True

    def _delete_files(self, paths: list[str]) -> list[str]:
        """Delete files inside the workdir, never through a symlinked directory; prune empty dirs."""
        deleted: list[str] = []
        for rel in paths:
            parts = rel.split("/")
            if any(p in ("", ".", "..") for p in parts) or not self._real_dirs(parts[:-1]):
                continue
            full = self.workdir.joinpath(*parts)
            try:
                if stat.S_ISDIR(os.lstat(full).st_mode):
                    continue
                os.unlink(full)
            except FileNotFoundError:
                continue
            except OSError as error:
                raise os_error(error, full) from None
            deleted.append(rel)
            for depth in range(len(parts) - 1, 0, -1):
                try:
                    os.rmdir(self.workdir.joinpath(*parts[:depth]))
                except OSError:
                    break
        return deleted

    def _real_dirs(self, parts: list[str]) -> bool:
        path = self.workdir
        for part in parts:
            path = path / part
            try:
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    return False
            except OSError:
                return False
        return True


async def _read_in_thread(func: Callable[..., _T], *args: Any) -> _T:
    """`func(*args)`, read-only work over the workdir, in a daemon thread.

    A cancelled `asyncio.to_thread` job still holds up `asyncio.run`'s shutdown until it ends: an
    `ask` that exits without the snapshot of a turn that changed no file need not wait for a scan
    of a big workdir. Only for work that writes nothing (a daemon thread can stop anywhere).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            result = func(*args)
        except BaseException as error:  # handed to the awaiting task
            done = functools.partial(settle, functools.partial(future.set_exception, error))
        else:
            done = functools.partial(settle, functools.partial(future.set_result, result))
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(done)

    threading.Thread(target=run, name="checkpoints-scan", daemon=True).start()
    return await future


def _escape_pattern(path: str) -> str:
    return re.sub(r"([\\*?\[\]!# ])", r"\\\1", path)


def _exclude_line(path: str) -> str | None:
    """An anchored gitignore line matching exactly `path`, or None when none can (a newline in it)."""
    if "\n" in path or "\r" in path:
        return None
    return "/" + _escape_pattern(path)


def _tree_size(path: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
