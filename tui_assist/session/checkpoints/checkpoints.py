"""Checkpoints: snapshots of the workdir in a shadow git repository, and the way back to them.

Why it is built this way:

- **A shadow repository per workdir**, `<data_dir>/checkpoints/<sha256 of the resolved workdir>.git`,
  driven with its own `GIT_DIR`, `GIT_INDEX_FILE` and `GIT_WORK_TREE=<workdir>`. With an explicit
  `GIT_DIR` git discovers no repository, and it never enters a directory named `.git` while scanning
  a work tree, so the user's `.git` is neither written nor snapshotted. Git runs with a clean
  environment: no system or global config, a fixed identity, no hooks, no signing, no filters and
  no end-of-line conversion (`$GIT_DIR/info/attributes` outranks the workdir's `.gitattributes`), so
  a restore gives back the exact bytes.
- **What is snapshotted** is what git would track: `.gitignore` files are honoured, and so is the
  user repository's `.git/info/exclude` when the workdir is its root (`.gitignore` files above the
  workdir are not). A few regenerable directories (`DEFAULT_EXCLUDES`) and the data dir itself, if it
  lies inside the workdir, are left out as well. Tracked files that become ignored leave the
  snapshot when a `.gitignore` or an exclude file changes.
- **Cheap when nothing changed**: the shadow index persists, so `git status` compares stat data
  (and, for untracked files, the untracked cache) instead of hashing; only the paths it reports
  are staged, with `update-index`; an identical tree reuses the previous commit.
- **Large files** (over `max_file_bytes`) are never hashed: they are checked with `lstat` before
  staging, listed in `Snapshot.skipped`, and written to the shadow `info/exclude`, so later scans
  skip them until they shrink or disappear. A restore never deletes or overwrites them.
- **Nested repositories**: `git add` would record a directory holding its own `.git` as a gitlink,
  keeping none of its files. Here their files are staged one by one, as ordinary files (their
  `.git` is left out, as the user's is), so a rewind restores them too.
- **Snapshots are root commits**, each kept alive by its own ref `refs/checkpoints/<commit>`, so
  pruning one frees its objects without rewriting anything. `HEAD` names the latest one.
- **Who changed what**: a rewind restores what turns changed. The host passes the (before, after)
  snapshot pairs of the turns being undone (`TurnSnapshots`); whatever changed outside those spans
  (between one turn's `after` and the next turn's `before`, or since the last turn) was done by
  the user, and is kept and reported rather than overwritten, unless the user confirms.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_FILES",
    "ChangeKind",
    "CheckpointError",
    "Checkpoints",
    "FileChange",
    "KeptFile",
    "KeepReason",
    "PruneResult",
    "RestorePlan",
    "RestoreResult",
    "SkippedFile",
    "Snapshot",
    "SnapshotInfo",
    "TurnSnapshots",
]

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

ChangeKind = Literal["added", "modified", "deleted"]
KeepReason = Literal["created_by_user", "changed_by_user", "too_large", "predates_snapshot"]

_IDENTITY = "tui-assist checkpoints"
_EMAIL = "checkpoints@tui-assist.invalid"
_SKIPPED_TRAILER = "tui-assist-skipped: "
_REF_PREFIX = "refs/checkpoints/"
_STATE_FILE = "tui-assist-state.json"
_LOCK_FILE = "tui-assist.lock"
_LOCK_TIMEOUT = 30.0
# File times come from the kernel's coarse clock, up to a tick behind `time.time_ns()`.
_CLOCK_SLACK = 0.02
_STATUS_KINDS: dict[str, ChangeKind] = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_UNREADABLE_DIR = re.compile(r"could not open directory '(.+)': ")
# Every git call gets these: no user config reaches the shadow repository.
_CONFIG = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.looseCompression=1",
    "core.logAllRefUpdates=false",
    "core.quotePath=false",
    "core.sparseCheckout=false",
    "core.attributesFile=/dev/null",
    "commit.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "index.version=4",
    # Each snapshot rewrites only the entries that changed, not the whole index.
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=now",
    "status.showUntrackedFiles=all",
    "diff.renames=false",
    "submodule.recurse=false",
    "init.defaultBranch=main",
)
# Highest-precedence attributes: store and restore bytes as they are, whatever `.gitattributes` says.
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol\n"


class CheckpointError(Exception):
    """Snapshotting or restoring failed; `str(error)` is one line fit for the user."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file that differs between two snapshots."""

    path: str
    """Relative to the workdir, with `/` separators."""
    kind: ChangeKind


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file left out of a snapshot."""

    path: str
    reason: Literal["too_large", "unreadable"]
    size: int = 0
    """Bytes, for a file too large; 0 when unknown."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The result of `Checkpoints.snapshot`."""

    commit: str
    """The snapshot's id: record it with the turn."""
    label: str
    changed: bool
    """False when the workdir matched the previous snapshot, whose commit is reused."""
    skipped: tuple[SkippedFile, ...] = ()
    """Files the snapshot does not hold: too large, or unreadable."""


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """A stored snapshot, as `Checkpoints.snapshots` lists it."""

    commit: str
    label: str
    created: datetime


@dataclass(frozen=True, slots=True)
class TurnSnapshots:
    """The snapshots taken around one turn (or any change the app made itself, such as a rewind)."""

    before: str
    after: str | None
    """None when the turn ended without one (a crash): then everything up to the next snapshot
    counts as the turn's."""


@dataclass(frozen=True, slots=True)
class KeptFile:
    """A file a restore leaves as it is, and why."""

    path: str
    reason: KeepReason
    """`created_by_user`: created after the target and touched by no turn. `changed_by_user`:
    changed by the user since the target (and not overwritten). `too_large`: over the size limit,
    so never in a snapshot. `predates_snapshot`: not in the target, yet older than it (it was
    ignored then), so not the turn's creation."""


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What restoring the workdir to `target` would do, from `Checkpoints.plan_restore`."""

    target: str
    current: str
    """The snapshot of the workdir taken while planning; `restore` refuses if it changed since."""
    restore: tuple[str, ...]
    """Files turns changed or deleted: written back as they were in the target."""
    delete: tuple[str, ...]
    """Files turns created that the target lacks: deleted."""
    user_changed: tuple[FileChange, ...]
    """Files the user changed since the target (possibly after a turn did): the warning to show.
    Left alone unless the user confirms overwriting them. `kind` is the change since the target."""
    kept: tuple[KeptFile, ...]
    """Files left alone whatever happens (`created_by_user`, `too_large`, `predates_snapshot`)."""

    @property
    def is_empty(self) -> bool:
        """True when restoring would change nothing and there is nothing to warn about."""
        return not (self.restore or self.delete or self.user_changed)


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """What `Checkpoints.restore` did."""

    before: str
    """Snapshot taken just before restoring."""
    after: str
    """Snapshot taken just after. Record `TurnSnapshots(before, after)` like a turn's, so a later
    rewind does not take the restore for the user's own changes."""
    restored: tuple[str, ...]
    deleted: tuple[str, ...]
    kept: tuple[KeptFile, ...]


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What `Checkpoints.prune` did."""

    removed: int
    remaining: int


@dataclass(slots=True)
class _State:
    """Kept in the shadow repository beside the index; lost state only costs one extra commit."""

    head: str | None = None
    tree: str | None = None
    too_large: dict[str, int] = field(default_factory=lambda: {})
    rules: str = ""
    """Digest of the ignore rules the index was last pruned against."""

    @classmethod
    def load(cls, path: Path) -> _State:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                head=raw.get("head"),
                tree=raw.get("tree"),
                too_large={str(k): int(v) for k, v in raw.get("too_large", {}).items()},
                rules=str(raw.get("rules", "")),
            )
        except (OSError, ValueError, TypeError, AttributeError):
            return cls()

    def save(self, path: Path) -> None:
        data = {"head": self.head, "tree": self.tree, "too_large": self.too_large, "rules": self.rules}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)


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


class Checkpoints:
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
        self.workdir = workdir.expanduser().resolve()
        self.data_dir = data_dir.expanduser().resolve()
        self.root = self.data_dir / "checkpoints"
        digest = hashlib.sha256(os.fsencode(self.workdir)).hexdigest()[:24]
        self.git_dir = self.root / f"{digest}.git"
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._excludes = tuple(excludes)
        self._git_name = git
        self._git_path: str | None = None
        self._lock = asyncio.Lock()

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
                    input=_nul_join(write),
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
        state = _State.load(self._state_path)
        too_large = await asyncio.to_thread(self._still_too_large, state.too_large)
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
        to_add, newly_large, unreadable = await asyncio.to_thread(self._sort_candidates, candidates)
        too_large.update(newly_large)
        if newly_large:
            await asyncio.to_thread(self._write_excludes, too_large, "")
        tracked = set(scan.tracked_changed)
        drop = [p for p in newly_large if p in tracked]
        stage = scan.deleted + to_add
        if stage:
            await self._git(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin", input=_nul_join(stage)
            )
        if rules_changed or any(p.rsplit("/", 1)[-1] == ".gitignore" for p in stage):
            ignored = await self._git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
            drop += _nul_split(ignored)
        if drop:
            await self._git("update-index", "-z", "--force-remove", "--stdin", input=_nul_join(drop))
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
        try:
            state.save(self._state_path)
        except OSError as error:
            raise _os_error(error, self.git_dir) from None
        return Snapshot(commit=commit, label=label, changed=changed, skipped=skipped)

    async def _scan(self) -> _Scan:
        out, err = await self._git_with_stderr(
            "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"
        )
        entries = _nul_split(out)
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
        files = await asyncio.to_thread(self._walk_nested, repos)
        if not files:
            return []
        ignored = set(
            _nul_split(
                await self._git(
                    "check-ignore", "-z", "--stdin", input=_nul_join(files), ok=(1,), literal=False
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
            raise _os_error(error, self.git_dir) from None
        return self._rules_digest() != previous_digest

    def _rules_digest(self) -> str:
        """Changes when the shadow's or the user repository's exclude file changes."""
        digest = hashlib.sha256()
        for path in (self.git_dir / "info" / "exclude", self._user_exclude):
            with contextlib.suppress(OSError):
                digest.update(path.read_bytes())
            digest.update(b"\0")
        return digest.hexdigest()

    async def _commit(self, tree: str, label: str, too_large: list[str], started_ns: int) -> str:
        message = " ".join(label.split()) or "snapshot"
        if too_large:
            message += f"\n\n{_SKIPPED_TRAILER}{json.dumps(too_large)}"
        commit = (await self._git("commit-tree", tree, "-m", message)).decode().strip()
        # The ref name holds when the scan began, to the nanosecond (commit dates have seconds): it
        # orders snapshots, and tells which files existed before one (see `_plan`).
        ref = f"{_REF_PREFIX}{started_ns:020d}-{commit}"
        refs = f"option no-deref\nupdate HEAD {commit}\nupdate {ref} {commit}\n"
        await self._git("update-ref", "--stdin", input=refs.encode())
        return commit

    # -- restore ---------------------------------------------------------------------------------

    async def _plan(self, target: str, current: str, turns: Sequence[TurnSnapshots]) -> RestorePlan:
        pending = {c.path: c for c in await self._diff(target, current)}
        by_turn: set[str] = set()
        by_user: set[str] = set()
        for start, end, is_turn in await self._segments(target, current, turns):
            touched = {c.path for c in await self._diff(start, end)} & pending.keys()
            (by_turn if is_turn else by_user).update(touched)
        snapshot_time, skipped_then = await self._commit_meta(target)
        skipped_now = _State.load(self._state_path).too_large
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
                raise _os_error(error, full) from None
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

    # -- git plumbing -------------------------------------------------------------------------

    async def _diff(self, before: str, after: str) -> list[FileChange]:
        if before == after:
            return []
        out = _nul_split(
            await self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after)
        )
        changes = [
            FileChange(path, _STATUS_KINDS.get(code[:1], "modified"))
            for code, path in zip(out[::2], out[1::2], strict=False)
        ]
        return sorted(changes, key=lambda c: c.path)

    async def _missing(self, commits: list[str]) -> set[str]:
        query = "".join(f"{c}^{{commit}}\n" for c in commits)
        out = (await self._git("cat-file", "--batch-check=%(objectname)", input=query.encode())).decode()
        found = out.splitlines()
        return {c for i, c in enumerate(commits) if i >= len(found) or not _OBJECT_ID.fullmatch(found[i])}

    async def _require(self, *commits: str) -> None:
        for commit in commits:
            if not re.fullmatch(r"[0-9a-f]{7,64}", commit):
                raise CheckpointError(f"not a snapshot id: {commit!r}")
        if missing := await self._missing(list(commits)):
            raise CheckpointError(f"snapshot {sorted(missing)[0][:12]} no longer exists (it was pruned)")

    async def _commit_meta(self, commit: str) -> tuple[float, set[str]]:
        """When a snapshot's scan began (seconds since the epoch), and the too-large files it left out."""
        log = await self._git("log", "-1", "--format=%ct%n%B", commit)
        seconds, _, message = log.decode().partition("\n")
        taken = float(seconds)
        refs = await self._git("for-each-ref", f"--points-at={commit}", "--format=%(refname)", _REF_PREFIX)
        stamps = [ref.removeprefix(_REF_PREFIX).partition("-")[0] for ref in refs.decode().splitlines()]
        if numeric := [int(s) for s in stamps if s.isdigit()]:
            taken = min(numeric) / 1e9
        skipped: set[str] = set()
        for line in message.splitlines():
            if line.startswith(_SKIPPED_TRAILER):
                with contextlib.suppress(ValueError):
                    skipped = {str(p) for p in json.loads(line[len(_SKIPPED_TRAILER) :])}
        return taken, skipped

    async def _refs(self) -> list[tuple[str, SnapshotInfo]]:
        """Every snapshot ref with its snapshot, newest first."""
        out = await self._git(
            "for-each-ref",
            "--sort=-refname",
            "--format=%(refname) %(objectname) %(contents:subject)",
            _REF_PREFIX,
        )
        listed: list[tuple[str, SnapshotInfo]] = []
        for line in out.decode(errors="replace").splitlines():
            ref, commit, label = (line.split(" ", 2) + [""])[:3]
            nanoseconds = ref.removeprefix(_REF_PREFIX).partition("-")[0]
            if nanoseconds.isdigit():
                created = datetime.fromtimestamp(int(nanoseconds) / 1e9, UTC)
                listed.append((ref, SnapshotInfo(commit, label, created)))
        return listed

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        async with self._lock:
            await self._ensure_repo()
            fd = os.open(self.git_dir / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                deadline = time.monotonic() + _LOCK_TIMEOUT
                while True:
                    if _try_flock(fd):
                        break
                    if time.monotonic() > deadline:
                        raise CheckpointError(
                            f"another tui-assist holds the checkpoints of {self.workdir} (try again)"
                        )
                    await asyncio.sleep(0.05)
                # Holding the lock, no other git runs in this repository: a left-over index.lock
                # comes from a process killed mid-way and would block every later snapshot.
                with contextlib.suppress(FileNotFoundError):
                    (self.git_dir / "index.lock").unlink()
                yield
            finally:
                os.close(fd)

    async def _ensure_repo(self) -> None:
        try:
            info = os.stat(self.workdir)
        except OSError as error:
            raise CheckpointError(f"cannot read the workdir {self.workdir}: {error.strerror}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise CheckpointError(f"the workdir {self.workdir} is not a directory")
        if not os.access(self.workdir, os.R_OK | os.X_OK):
            raise CheckpointError(f"cannot read the workdir {self.workdir}: permission denied")
        if not (self.git_dir / "HEAD").exists():
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise _os_error(error, self.root) from None
            try:
                tmp = Path(tempfile.mkdtemp(prefix=f".init-{self.git_dir.name}-", dir=self.root))
            except OSError as error:
                raise _os_error(error, self.root) from None
            try:
                await self._run(
                    ["init", "--quiet", "--bare", "--template=", str(tmp)], env=self._env(bare=True)
                )
                (tmp / "info").mkdir(exist_ok=True)
                (tmp / "info" / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")
                (tmp / "tui-assist-workdir").write_text(f"{self.workdir}\n", encoding="utf-8")
                os.rename(tmp, self.git_dir)  # atomic: a half-made repository is never used
            except FileExistsError:
                shutil.rmtree(tmp, ignore_errors=True)  # another process won the race
            except OSError as error:  # ENOTEMPTY: another process won the race
                shutil.rmtree(tmp, ignore_errors=True)
                if not (self.git_dir / "HEAD").exists():
                    raise _os_error(error, self.root) from None
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise

    def _env(self, *, bare: bool = False) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            # No ~/.gitconfig or $XDG_CONFIG_HOME/git/config, even for a git too old for GIT_CONFIG_GLOBAL.
            "HOME": str(self.root),
            "XDG_CONFIG_HOME": str(self.root),
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_AUTHOR_NAME": _IDENTITY,
            "GIT_AUTHOR_EMAIL": _EMAIL,
            "GIT_COMMITTER_NAME": _IDENTITY,
            "GIT_COMMITTER_EMAIL": _EMAIL,
        }
        if tmpdir := os.environ.get("TMPDIR"):
            env["TMPDIR"] = tmpdir
        if not bare:
            env |= {
                "GIT_DIR": str(self.git_dir),
                "GIT_WORK_TREE": str(self.workdir),
                "GIT_INDEX_FILE": str(self.git_dir / "index"),
            }
        return env

    def _head(self) -> str | None:
        """The latest snapshot: HEAD is detached, so its file holds the commit id itself."""
        try:
            head = (self.git_dir / "HEAD").read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return head if _OBJECT_ID.fullmatch(head) else None

    @property
    def _state_path(self) -> Path:
        return self.git_dir / _STATE_FILE

    @property
    def _user_exclude(self) -> Path:
        return self.workdir / ".git" / "info" / "exclude"

    def _config_args(self) -> list[str]:
        user_exclude = self._user_exclude
        excludes_file = str(user_exclude) if (self.workdir / ".git").is_dir() else os.devnull
        args: list[str] = []
        for item in (*_CONFIG, f"core.excludesFile={excludes_file}"):
            args += ["-c", item]
        return args

    async def _git(
        self, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (), literal: bool = True
    ) -> bytes:
        out, _ = await self._git_with_stderr(*args, input=input, ok=ok, literal=literal)
        return out

    async def _git_with_stderr(
        self, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (), literal: bool = True
    ) -> tuple[bytes, str]:
        env = self._env()
        if not literal:  # check-ignore rejects the literal pathspec magic (it takes paths anyway)
            del env["GIT_LITERAL_PATHSPECS"]
        return await self._run([*self._config_args(), *args], env=env, input=input, ok=ok)

    async def _run(
        self, args: list[str], *, env: dict[str, str], input: bytes | None = None, ok: tuple[int, ...] = ()
    ) -> tuple[bytes, str]:
        git = self._find_git()
        try:
            proc = await asyncio.create_subprocess_exec(
                git,
                *args,
                cwd=self.workdir,
                env=env,
                stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            raise CheckpointError("git is not installed (install git to use checkpoints)") from None
        except OSError as error:
            raise _os_error(error, self.workdir) from None
        try:
            out, err = await proc.communicate(input)
        except BaseException:
            # Cancelled (or worse): do not leave git running on the index.
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        stderr = err.decode(errors="replace")
        if proc.returncode != 0 and proc.returncode not in ok:
            raise _git_error(args, stderr, self.git_dir)
        return out, stderr

    def _find_git(self) -> str:
        if self._git_path is None:
            found = shutil.which(self._git_name)
            if found is None:
                raise CheckpointError("git is not installed (install git to use checkpoints)")
            self._git_path = found
        return self._git_path


def _nul_join(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _nul_split(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _escape_pattern(path: str) -> str:
    return re.sub(r"([\\*?\[\]!# ])", r"\\\1", path)


def _exclude_line(path: str) -> str | None:
    """An anchored gitignore line matching exactly `path`, or None when none can (a newline in it)."""
    if "\n" in path or "\r" in path:
        return None
    return "/" + _escape_pattern(path)


def _first_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return lines[0] if lines else "no message"


def _git_error(args: list[str], stderr: str, where: Path) -> CheckpointError:
    if "No space left on device" in stderr:
        return CheckpointError(f"no space left on the disk holding {where} (free some space)")
    command = next((a for a in args if not a.startswith("-") and "=" not in a), "git")
    return CheckpointError(f"git {command} failed: {_first_line(stderr)}")


def _os_error(error: OSError, where: Path) -> CheckpointError:
    if error.errno == errno.ENOSPC:
        return CheckpointError(f"no space left on the disk holding {where} (free some space)")
    return CheckpointError(f"{where}: {error.strerror or error}")


def _try_flock(fd: int) -> bool:
    """Take an exclusive lock without waiting; False if another process holds it."""
    if sys.platform == "win32":
        return True  # no flock there; git's own index.lock still refuses concurrent writers
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _tree_size(path: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
