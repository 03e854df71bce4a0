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

from tui_assist.session.checkpoints.checkpoints import (
    DEFAULT_EXCLUDES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    Checkpoints,
)
from tui_assist.session.checkpoints.types import (
    ChangeKind,
    CheckpointError,
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
