"""The program's own git commands on a workdir: they never run a program the repository names.

A sandboxed command can write the workdir, so it can `git init` there and set `core.fsmonitor`
to a script of its own, and a repository can arrive with such a `.git/config`. Git runs that
program from the host (outside the sandbox) the next time the program lists the workdir's files.
So every git call the program makes on a workdir (the `@` listing, the checkpoints' shadow
repository) is built here:

- **Config that runs nothing** (`SAFE_CONFIG`), given with `-c`, which outranks every config
  file, the repository's own and any it includes: no fsmonitor, no hooks, no pager, no transport
  at all (so neither `core.sshCommand` nor a lazy fetch of a partial clone can start one), no
  signature checks (`gpg.program`), no automatic gc or maintenance, no submodule recursion, and
  no bare repository found by discovery (a workdir that a command turned into one by writing
  `HEAD`, `config` and `objects/` into it). Filter and diff drivers need config to name their
  programs; the commands used here read no file contents through them (`ls-files`), or run with
  their own git dir and attributes (the checkpoints).
- **A clean environment** (`git_environment`): no system or global config (they are the user's,
  but a workdir that is `$HOME` makes `~/.gitconfig` writable from the sandbox), and none of the
  inherited `GIT_*` variables, which can redirect the repository (`GIT_DIR`, `GIT_COMMON_DIR`),
  add config (`GIT_CONFIG_PARAMETERS`) or name programs (`GIT_EXTERNAL_DIFF`, `GIT_SSH`).
- **No redirect git would follow into planted files** (`redirect_problem`): a `.git` folder with
  a `commondir` file (only a worktree's admin folder has one), or a `.git` file whose `gitdir:`
  names a worktree folder that does not name this workdir back, is not used; the caller then
  does without git (the listing walks the folder instead).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "SAFE_CONFIG",
    "find_dot_git",
    "git_argv",
    "git_environment",
    "redirect_problem",
    "user_excludes_file",
]

SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "submodule.recurse=false",
)
"""`-c` settings of every git call on a workdir (each one could otherwise run a program)."""

_KEPT_ENV = (
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "GIT_CEILING_DIRECTORIES",
)
"""Inherited variables git needs (to find programs, the user's excludes file, temporary files),
and the one `GIT_*` variable that only narrows where git looks for a repository."""

_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_LAZY_FETCH": "1",
}


def git_argv(git: str, *args: str, config: Sequence[str] = ()) -> list[str]:
    """The command line of one git call on a workdir: `SAFE_CONFIG`, then `config`, then `args`.

    Args:
        git: The git executable.
        *args: The git command and its arguments (e.g. `"ls-files", "-z"`).
        config: More `-c` settings of the caller's own; `SAFE_CONFIG` comes after them, and the
            last setting of a key wins, so none of them can undo it.
    """
    options: list[str] = []
    for item in (*config, *SAFE_CONFIG):
        options += ["-c", item]
    return [git, "--no-pager", *options, *args]


def git_environment(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of one git call on a workdir: a few inherited variables, no `GIT_*` but ours.

    Args:
        overrides: Added last (e.g. the checkpoints' `GIT_DIR` and identity).
    """
    env = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env |= _FIXED_ENV
    if overrides:
        env |= overrides
    return env


def user_excludes_file(git: str = "git", timeout: float = 10.0) -> str | None:
    """The user's own `core.excludesFile` (their global ignore list), read from their global config.

    `git_environment` reads no global config, so a listing would lose that setting; reading one
    path runs nothing, whoever wrote the file. None when unset or unreadable (git's default,
    `$XDG_CONFIG_HOME/git/ignore`, applies then all the same).
    """
    env = git_environment()
    del env["GIT_CONFIG_GLOBAL"]
    if user_global := os.environ.get("GIT_CONFIG_GLOBAL"):
        env["GIT_CONFIG_GLOBAL"] = user_global  # where the user keeps their global config
    try:
        done = subprocess.run(
            git_argv(git, "config", "--global", "--path", "--get", "core.excludesFile"),
            capture_output=True,
            env=env,
            timeout=timeout,
            check=False,
            cwd="/",  # the global file alone: no repository is near
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.decode("utf-8", "surrogateescape").strip()
    return value if done.returncode == 0 and value else None


def find_dot_git(workdir: Path) -> Path | None:
    """The `.git` (folder or file) git would find for `workdir`: in it or the nearest folder above."""
    for folder in (workdir, *workdir.parents):
        candidate = folder / ".git"
        if os.path.lexists(candidate):
            return candidate
    return None


def redirect_problem(workdir: Path) -> str | None:
    """Why git must not be run on `workdir`'s repository (None: it may, or there is none).

    Git follows a `.git/commondir` file to another folder's config, hooks and objects, and a
    `.git` file's `gitdir:` line to another git folder. Git's own layouts are allowed: a
    submodule's `.git` file (its git folder has no `commondir`) and a linked worktree (its git
    folder, `<repo>/.git/worktrees/NAME`, names this `.git` back in its `gitdir` file).
    """
    dot_git = find_dot_git(workdir.resolve())
    if dot_git is None:
        return None
    if dot_git.is_symlink():
        return f"{dot_git} is a symbolic link"
    if dot_git.is_dir():
        if os.path.lexists(dot_git / "commondir"):
            return f"{dot_git / 'commondir'} redirects the repository"
        return None
    try:
        line = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        return f"{dot_git} cannot be read: {error}"
    if not line.startswith("gitdir:"):
        return f"{dot_git} is neither a folder nor a gitdir: file"
    target = (dot_git.parent / line.removeprefix("gitdir:").strip()).resolve()
    if target.is_relative_to(workdir.resolve()):
        # Git's own layouts keep it outside: inside, a sandboxed command could have planted it.
        return f"{dot_git} redirects to {target}, inside the folder itself"
    if not os.path.lexists(target / "commondir"):
        return None  # a submodule's git folder, or a separate git dir (`git init --separate-git-dir`)
    try:
        back = (target / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        back = ""
    if back and (target / back).resolve() == dot_git.resolve() and target.parent.name == "worktrees":
        return None
    return f"{dot_git} redirects to {target}, which is not a worktree of this folder"
