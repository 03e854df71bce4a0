"""The files and directories of a workdir that a mention can name: the completion candidates.

In a git repository they are the tracked and the untracked-but-not-ignored files
(`git ls-files -co --exclude-standard`, run in the workdir so that paths are relative to it even
when it is a subfolder of the repository); elsewhere, or when git lists nothing (an ignored
folder), a breadth-first walk bounded in entries and depth that skips version-control data,
dependency installs and tool caches. The parents of every file are candidates too, spelled with a
final `/`. Attaching a directory lists it the same way (`attachment.py`).

Git runs as `tools/safe_git.py` builds it (a sandboxed command can write the workdir's `.git`, and a
repository can arrive with a `core.fsmonitor` of its own): with config that runs no program, a clean
environment, and not at all on a repository redirected by a `.git/commondir` or an odd `gitdir:`
(the walk is used instead).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tui_assist.tools.safe_git import git_argv, git_environment, redirect_problem, user_excludes_file

MAX_ENTRIES = 200_000
"""At most this many candidates (files and directories) are listed."""
MAX_DEPTH = 20
"""The walk (outside git) descends at most this many directories below the workdir."""
SKIPPED_DIRS = frozenset(
    {
        # version-control data
        ".git",
        ".hg",
        ".svn",
        ".jj",
        # installed dependencies (a virtualenv under any other name is recognised by its pyvenv.cfg)
        "node_modules",
        ".venv",
        # caches that tools rebuild on their own; `.cache` is where XDG puts them all
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".cache",
    }
)
"""Directories the walk neither lists nor enters: nobody means to attach what is inside them."""
GIT_TIMEOUT = 30.0
"""Seconds `git ls-files` may take before the walk is used instead."""


@dataclass(frozen=True, slots=True)
class CandidateListing:
    """The files and directories of a workdir that a mention can name."""

    paths: tuple[str, ...]
    """Relative POSIX paths; a directory ends with `/`."""
    source: Literal["git", "walk"]
    """`git` when `git ls-files` listed them, `walk` when the directory tree was walked."""
    truncated: bool
    """True when the entry or depth cap left some out."""
    listed_at: float
    """`time.monotonic()` when listed, to decide when to list again."""


def list_candidates(
    workdir: Path, *, max_entries: int = MAX_ENTRIES, max_depth: int = MAX_DEPTH
) -> CandidateListing:
    """List what a mention can name in `workdir` (blocking: run it in a thread).

    Args:
        workdir: The directory whose files are listed; paths come out relative to it.
        max_entries: At most this many paths (files and directories) are returned.
        max_depth: The walk descends at most this many levels (git lists every level).

    Returns:
        The paths, from git when `workdir` is inside a work tree and git lists anything there,
        otherwise from a walk that skips `SKIPPED_DIRS` and virtualenvs.
    """
    files = git_files(workdir)
    if files:
        paths, truncated = with_parent_dirs(files, max_entries)
        return CandidateListing(tuple(paths), "git", truncated, time.monotonic())
    paths, truncated = walk_tree(workdir, max_entries, max_depth)
    return CandidateListing(tuple(paths), "walk", truncated, time.monotonic())


def git_files(workdir: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under `workdir`, or None outside a work tree.

    None too for a repository that `redirect_problem` refuses.
    """
    if redirect_problem(workdir) is not None:
        return None
    # The user's global ignore list still applies, though no global config is read.
    excludes = [f"core.excludesFile={path}"] if (path := user_excludes_file()) else []
    try:
        result = subprocess.run(
            git_argv("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", config=excludes),
            cwd=workdir,
            env=git_environment(),
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, workdir gone, too slow
        return None
    if result.returncode != 0:  # not a repository, or one git refuses (safe.directory)
        return None
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    # An unmerged path is listed once per stage; a name with a newline cannot be typed anyway.
    return [name for name in dict.fromkeys(names) if name and "\n" not in name]


def with_parent_dirs(files: list[str], max_entries: int) -> tuple[list[str], bool]:
    """`files` (at most `max_entries`) with their parent directories before them, and whether cut.

    Past `max_entries` paths in all, the shallowest are kept.
    """
    truncated = len(files) > max_entries
    files = files[:max_entries]
    dirs: dict[str, None] = {}
    for name in files:
        cut = name.rfind("/")
        while cut > 0:
            parent = name[: cut + 1]
            if parent in dirs:
                break  # its own parents were added with it
            dirs[parent] = None
            cut = name.rfind("/", 0, cut)
    paths = [*dirs, *files]
    if len(paths) > max_entries:
        truncated = True
        paths = sorted(paths, key=lambda path: (path.count("/", 0, len(path) - 1), path))[:max_entries]
    return paths, truncated


def walk_tree(root: Path, max_entries: int, max_depth: int) -> tuple[list[str], bool]:
    """The paths under `root` (skipping `SKIPPED_DIRS` and virtualenvs), and whether any were left out.

    Breadth first, so that a capped listing keeps the shallow paths people mention most.
    """
    found: list[str] = []
    pending: deque[tuple[str, int]] = deque([("", 0)])
    truncated = False
    while pending:
        prefix, depth = pending.popleft()
        files: list[str] = []
        subdirs: list[str] = []
        is_virtualenv = False
        try:
            with os.scandir(os.path.join(root, prefix)) as entries:
                for entry in entries:
                    name = entry.name
                    if "\n" in name:
                        continue
                    if name == "pyvenv.cfg":
                        is_virtualenv = True
                    try:
                        # Never through a symlink: it may leave the workdir or loop.
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files.append(prefix + name)
                    elif name not in SKIPPED_DIRS:
                        subdirs.append(prefix + name + "/")
        except OSError:  # unreadable or vanished: list what the rest of the tree holds
            continue
        if is_virtualenv and prefix:
            continue  # installed packages, whatever the folder is called
        room = max_entries - len(found)
        entries_here = sorted(subdirs) + sorted(files)
        if len(entries_here) > room:
            found.extend(entries_here[:room])
            return found, True
        found.extend(entries_here)
        if depth < max_depth:
            pending.extend((subdir, depth + 1) for subdir in sorted(subdirs))
        elif subdirs:
            truncated = True
    return found, truncated
