"""bash inside an OS sandbox: bubblewrap (`bwrap`), mode `workspace-write`.

What a sandboxed shell sees: the whole filesystem read-only (`--ro-bind / /`), the workdir
writable, a private `/tmp` (an empty tmpfs of its own, in which only the program's own Python
and the `PATH` folders that lie under `/tmp` are bound, read-only, so that `python -m pytest` or a
tool installed there still runs), fresh `/dev` and `/proc`, no network
unless `sandbox_network` is on (`--unshare-net` leaves only a loopback interface of its own), its
own process ids, and no capabilities. Because such a command cannot change anything outside
the workdir, the approval policy runs it without a dialog (deny rules still apply).

Details that matter for safety:

- **Capabilities are dropped** (`--cap-drop ALL`). Run as root, bwrap otherwise keeps them, and
  a root shell with `CAP_SYS_ADMIN` can simply remount `/` read-write. Nothing relies on file
  modes either: as root, `chmod` would not stop a write, a read-only mount does.
- **The files that decide what may run stay read-only** even inside the workdir, when they
  exist: `.tui-assist/` (the project's permission rules), the whole of `.git` (its config, hooks
  and a `commondir` would run code outside the sandbox, on the user's next `git commit` or the
  program's own git; so a `git commit` inside the sandbox fails, and is run with
  `"sandbox": false`), and the `read_only` paths a session adds: the user's config and data
  dirs, Claude Code's `~/.claude`, the project scripts that trust lets run (they matter when the
  workdir holds them, e.g. a workdir that is `$HOME`). Nothing is created in the user's folder
  for this (a mount point would be): one of them (but `.git`: `git init` is ordinary work) that a
  sandboxed command creates is removed after the command (`ShellSession` checks, and tells the
  model), and one that appears between commands (the app saving a rule) gets the shell
  restarted, bound read-only.
- **Cleanup is whole**: `--unshare-pid` makes the shell's processes a namespace of their own that
  the kernel kills as one when bwrap dies, and `--die-with-parent` kills bwrap with us; so the
  shell's usual `killpg` on a timeout still ends everything the command started.
- `--new-session` detaches the shell from any terminal (no `TIOCSTI` keystroke injection).

Whether bwrap works is tried once per process (`bwrap ... true`): it fails in containers that
forbid namespaces. The default mode is `workspace-write` when it works and `off` when not.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tui_assist.core.rule_files import PROJECT_DIR

__all__ = [
    "BwrapProbe",
    "Sandbox",
    "SandboxChoice",
    "SandboxMode",
    "choose_sandbox",
    "probe_bwrap",
    "project_dir",
]

SandboxMode = Literal["workspace-write", "off"]

_PROBE_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class BwrapProbe:
    """Whether bubblewrap can make a sandbox on this machine."""

    works: bool
    path: str | None
    """The `bwrap` executable, when found."""
    reason: str = ""
    """Why not, one line (empty when it works)."""


@functools.cache
def probe_bwrap(executable: str = "bwrap") -> BwrapProbe:
    """Try `bwrap` once (cached for the process): find it, then run `true` in a sandbox.

    Args:
        executable: The name or path of bwrap.

    Returns:
        Whether it works, and why not.
    """
    path = shutil.which(executable)
    if path is None:
        return BwrapProbe(False, None, "bwrap is not installed (Debian package: bubblewrap)")
    argv = [path, *_isolation_args(network=False), "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return BwrapProbe(False, path, f"bwrap cannot run: {exc}")
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return BwrapProbe(False, path, f"bwrap cannot create a sandbox here: {detail}")
    return BwrapProbe(True, path)


def _isolation_args(*, network: bool) -> list[str]:
    args = [
        "--ro-bind", "/", "/",
        "--tmpfs", "/tmp",
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",
        "--setenv", "TMPDIR", "/tmp",
    ]  # fmt: skip
    for path in _programs_under_tmp():
        args += ["--ro-bind", path, path]
    if not network:
        args.append("--unshare-net")
    return args


@functools.cache
def _programs_under_tmp() -> tuple[str, ...]:
    """The folders of programs a command may run that the private `/tmp` would hide.

    Everything outside `/tmp` is visible read-only anyway; these are bound the same way, so a
    virtualenv or a tool under `/tmp` works inside the sandbox as it does outside.
    """
    candidates = {sys.prefix, sys.base_prefix, *os.environ.get("PATH", "").split(os.pathsep)}
    found: list[str] = []
    for candidate in candidates:
        path = Path(candidate).resolve() if candidate else None
        if path and path.is_dir() and path.is_relative_to("/tmp") and path != Path("/tmp"):
            found.append(str(path))
    return tuple(sorted(found))  # the same arguments on every run


def project_dir(workdir: Path) -> Path:
    """The project's settings folder (`.tui-assist/`), which a sandboxed command may not change."""
    return workdir.resolve() / PROJECT_DIR


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How to run a command under bubblewrap in `workspace-write` mode.

    One value serves every toolbox of a session: the workdir is given to `wrap()`.
    """

    bwrap: str
    """The bwrap executable."""
    network: bool = False
    """Whether sandboxed commands may use the network."""
    read_only: tuple[Path, ...] = ()
    """More paths no sandboxed command may write, where they lie inside the workdir (elsewhere
    everything is read-only anyway): the user's config and data dirs, `~/.claude`, trusted
    project scripts."""

    def guarded(self, workdir: Path) -> list[Path]:
        """The paths in `workdir` that no sandboxed command may write or create.

        Args:
            workdir: The sandbox's writable folder.

        Returns:
            `.tui-assist/`, then the `read_only` paths that lie in `workdir` (resolved).
        """
        root = workdir.resolve()
        inside = [path.resolve() for path in self.read_only]
        return [project_dir(root), *(path for path in inside if path.is_relative_to(root))]

    def wrap(self, argv: Sequence[str], workdir: Path) -> list[str]:
        """The command line that runs `argv` in the sandbox, starting in `workdir`.

        Args:
            argv: The program and its arguments (e.g. `["bash", "--noprofile", "--norc"]`).
            workdir: The one writable folder (besides the private `/tmp`); its `.git` and the
                `guarded` paths that exist are bound read-only over it.

        Returns:
            The bwrap command line.
        """
        root = workdir.resolve()
        args = [self.bwrap, *_isolation_args(network=self.network), "--bind", str(root), str(root)]
        git = root / ".git"
        # A symlinked `.git` points outside (read-only already) or is refused by the program's git.
        protected = [*([git] if not git.is_symlink() else []), *self.guarded(root)]
        for path in protected:
            if os.path.lexists(path):
                args += ["--ro-bind", str(path), str(path)]
        return [*args, "--chdir", str(root), "--", *argv]

    def describe(self) -> str:
        """One line for the status bar, e.g. `sandbox: workspace-write, no network`."""
        return f"sandbox: workspace-write, {'network' if self.network else 'no network'}"


@dataclass(frozen=True, slots=True)
class SandboxChoice:
    """The sandbox a session runs bash in, and how to say so."""

    sandbox: Sandbox | None
    """None: bash runs unsandboxed."""
    description: str
    """One line for the status bar: `sandbox: workspace-write, no network` or `sandbox: off (...)`."""
    warning: str = ""
    """Set when the settings asked for a sandbox this machine cannot make."""


def choose_sandbox(
    mode: SandboxMode | None,
    *,
    network: bool = False,
    bwrap: str = "bwrap",
    read_only: Sequence[Path] = (),
) -> SandboxChoice:
    """The sandbox the settings ask for, when this machine can make it.

    Args:
        mode: `workspace-write`, `off`, or None for the default (`workspace-write` when bwrap
            works, else `off`).
        network: `sandbox_network`.
        bwrap: The bwrap executable to try.
        read_only: `Sandbox.read_only`: paths kept read-only inside the sandbox.

    Returns:
        The sandbox (or None) and its one-line description. Asking for `workspace-write` where
        bwrap cannot work gives no sandbox and a `warning`, rather than an error: bash then runs
        unsandboxed and every call asks, as without a sandbox.
    """
    if mode == "off":
        return SandboxChoice(None, "sandbox: off")
    probe = probe_bwrap(bwrap)
    if not probe.works or probe.path is None:
        warning = f"the bash sandbox is off: {probe.reason}" if mode == "workspace-write" else ""
        return SandboxChoice(None, f"sandbox: off ({probe.reason})", warning)
    sandbox = Sandbox(probe.path, network=network, read_only=tuple(read_only))
    return SandboxChoice(sandbox, sandbox.describe())
