"""The values checkpoints take and hand back (snapshots, plans, results), and their one error."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

ChangeKind = Literal["added", "modified", "deleted"]
KeepReason = Literal["created_by_user", "changed_by_user", "too_large", "predates_snapshot"]


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
