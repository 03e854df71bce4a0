"""Checkpoints: snapshots of the workdir in a shadow git repository, and the way back to them."""

from __future__ import annotations

from tui_assist.session.checkpoints.checkpoints import (
    DEFAULT_EXCLUDES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    ChangeKind,
    CheckpointError,
    Checkpoints,
    FileChange,
    KeepReason,
    KeptFile,
    PruneResult,
    RestorePlan,
    RestoreResult,
    SkippedFile,
    Snapshot,
    SnapshotInfo,
    TurnSnapshots,
)

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_FILES",
    "ChangeKind",
    "CheckpointError",
    "Checkpoints",
    "FileChange",
    "KeepReason",
    "KeptFile",
    "PruneResult",
    "RestorePlan",
    "RestoreResult",
    "SkippedFile",
    "Snapshot",
    "SnapshotInfo",
    "TurnSnapshots",
]
