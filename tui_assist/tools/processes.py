"""Ending every process that something started, daemons that left its process group too.

A command run in a process group of its own is ended with one `killpg`, except what it started
with `setsid` (a daemon): that one has a session and group of its own, and once its parent exits
it is re-parented away. Two things find such processes again:

- **A scope** (`ProcessScope`) marks every process started under it with a variable in its
  environment (`environ()`), which children inherit through `fork` and `exec`, `setsid` and
  double forks; `pids()` finds them by reading `/proc/PID/environ` (only our own processes are
  readable there). A hook's scope is ended at its timeout and when its session ends; every scope
  still alive is ended when the program exits.
- **The program is a child subreaper** on Linux (`prctl(PR_SET_CHILD_SUBREAPER)`, set by
  `end_at_exit`), so an orphan is re-parented to it rather than to init, and stays among its
  descendants (`descendants()`, from `/proc/PID/task/TID/children`) even if it cleared its
  environment. At exit every descendant is killed.

Being a subreaper makes orphans our children: when one exits it stays a zombie until reaped.
Those this module kills (`ProcessScope.kill`, `kill_group`) it reaps, never a child that the
caller started and waits for itself. An orphan that exits on its own stays a zombie (no memory,
only its process id) until the program exits.

Background shells (their own sessions, ended when the session ends) use the same API: a scope per
shell, `kill()` when it is killed.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Collection, Mapping

__all__ = ["SCOPE_VARIABLE", "ProcessScope", "descendants", "end_at_exit", "kill_group", "kill_pids"]

SCOPE_VARIABLE = "TUI_ASSIST_PROCESS_SCOPE"
"""The environment variable that marks the processes of a scope."""

_PR_SET_CHILD_SUBREAPER = 36
_REAP_SECONDS = 1.0
"""How long a kill waits for its processes to die (SIGKILL takes effect at once, save in D state)."""
_live_scopes: set[ProcessScope] = set()
_lock = threading.Lock()
_installed = False
_subreaper = False


class ProcessScope:
    """The processes started with this scope's mark in their environment, found and ended as one."""

    def __init__(self, name: str = "scope") -> None:
        """Make a scope (nothing runs yet); `name` only makes the mark readable in `ps e`."""
        self.mark = f"{name}-{os.getpid()}-{secrets.token_hex(8)}"
        with _lock:
            _live_scopes.add(self)

    def environ(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with this scope's mark: start the scope's processes with it."""
        return {**env, SCOPE_VARIABLE: self.mark}

    def pids(self) -> list[int]:
        """The live processes that carry this scope's mark."""
        needle = f"{SCOPE_VARIABLE}={self.mark}".encode()
        found: list[int] = []
        for pid in _all_pids():
            try:
                with open(f"/proc/{pid}/environ", "rb") as file:
                    environ = file.read()
            except OSError:  # gone, or another user's
                continue
            if needle in environ.split(b"\0"):
                found.append(pid)
        return found

    def kill(self, *, started: Collection[int] = ()) -> int:
        """SIGKILL every process of the scope (twice over, for one forked in between).

        Args:
            started: The processes the caller started itself and waits for: signalled, but left
                for the caller to reap.

        Returns:
            How many processes were signalled.
        """
        killed = 0
        for _ in range(2):
            pids = self.pids()
            if not pids:
                break
            killed += kill_pids(pids, started=started)
        return killed

    def close(self, *, started: Collection[int] = ()) -> None:
        """End the scope: kill its processes (see `kill`); the program's exit no longer needs to."""
        self.kill(started=started)
        with _lock:
            _live_scopes.discard(self)

    def release(self) -> None:
        """Forget the scope without killing anything (nothing of it is alive)."""
        with _lock:
            _live_scopes.discard(self)


def kill_pids(pids: Collection[int], *, started: Collection[int] = ()) -> int:
    """SIGKILL `pids`, and reap those that are our re-parented orphans (not in `started`).

    Returns:
        How many were signalled.
    """
    killed = 0
    for pid in pids:
        if pid == os.getpid():
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    _reap([pid for pid in pids if pid not in started], killed=pids)
    return killed


def kill_group(pgid: int, *, started: Collection[int] = ()) -> int:
    """SIGKILL process group `pgid`, and reap its members that are re-parented to us.

    Args:
        pgid: The group (the id of the process started with `start_new_session`).
        started: The processes the caller started itself and waits for (not reaped here).

    Returns:
        How many processes the group had.
    """
    members = [pid for pid in _all_pids() if (stat := _stat(pid)) is not None and stat[2] == pgid]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    _reap([pid for pid in members if pid not in started], killed=members)
    return len(members)


def descendants(pid: int | None = None) -> list[int]:
    """Every live process below `pid` (default: this one), children before their children."""
    found: list[int] = []
    pending = [os.getpid() if pid is None else pid]
    while pending:
        parent = pending.pop()
        for child in _children(parent):
            found.append(child)
            pending.append(child)
    return found


def end_at_exit() -> bool:
    """Make this program a child subreaper (Linux), and at its exit end every scope and descendant.

    Idempotent. Returns:
        Whether the program is a subreaper (False elsewhere than Linux, or if `prctl` failed).
    """
    global _installed, _subreaper
    with _lock:
        if not _installed:
            _installed = True
            _subreaper = _become_subreaper()
            atexit.register(_end_everything)
    return _subreaper


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _end_everything() -> None:
    with _lock:
        scopes = list(_live_scopes)
        _live_scopes.clear()
    for scope in scopes:
        scope.kill()
    if _subreaper:
        kill_pids(descendants())


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _children(pid: int) -> list[int]:
    children: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as file:
                children += [int(word) for word in file.read().split()]
        except (OSError, ValueError):
            continue
    return children


def _stat(pid: int) -> tuple[str, int, int] | None:
    """A process's state letter, parent and process group (None: gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1]), int(fields[2])
    except (OSError, IndexError, ValueError):
        return None


def _reap(pids: list[int], killed: Collection[int] = ()) -> None:
    """Wait (briefly) until each of the killed `pids` is gone, reaping those re-parented to us.

    A killed process whose parent was killed too becomes our child (we are its subreaper) and a
    zombie until reaped. The callers leave out the children they started (and wait for)
    themselves, so nothing else waits for these. A zombie whose parent is among the `killed`
    (those too) is waited for until it is re-parented to us.
    """
    me = os.getpid()
    pending = set(pids)
    deadline = time.monotonic() + _REAP_SECONDS
    while pending:
        for pid in list(pending):
            stat = _stat(pid)
            if stat is None:
                pending.discard(pid)
            elif stat[0] in "ZX" and stat[1] == me:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
                pending.discard(pid)
            elif stat[0] in "ZX" and stat[1] not in killed:
                pending.discard(pid)  # dead, and its living parent's to reap
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.005)
