"""Instance liveness through OS file locks.

Every open store holds an exclusive lock on `locks/<instance>.lock` under the data dir and stamps
the turns it begins with that instance id. The operating system drops the lock when the process
dies, however it dies (SIGKILL included), so crash recovery can ask "is the owner of this
`running` turn still alive?" without trusting pids, which get reused. A second instance starting
while the first is mid-turn therefore leaves that turn alone.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO


def _try_lock(handle: IO[bytes]) -> bool:
    """Take an exclusive, non-blocking lock on an open file; False if someone holds it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


class InstanceLock:
    """The lock that proves an instance is alive while it is held."""

    def __init__(self, directory: Path, instance_id: str) -> None:
        self.path = directory / f"{instance_id}.lock"
        self._handle: IO[bytes] | None = None

    def acquire(self) -> None:
        """Create and lock the file.

        Raises:
            OSError: if the lock is already held (an instance id was reused).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+b")  # noqa: SIM115 - held open for the instance's lifetime
        if not _try_lock(handle):
            handle.close()
            raise OSError(f"instance lock {self.path} is already held")
        self._handle = handle

    def release(self) -> None:
        """Unlock and remove the file."""
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._handle.close()
        self._handle = None


def is_alive(directory: Path, instance_id: str) -> bool:
    """Whether the instance that owns `instance_id` still holds its lock.

    Args:
        directory: The lock directory.
        instance_id: The owner stamped on a turn.

    Returns:
        True while the owning process holds the lock; False once it has exited or crashed (its
        stale lock file is then removed).
    """
    path = directory / f"{instance_id}.lock"
    try:
        handle = open(path, "r+b")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: leave the turn alone rather than cancel a live one
    try:
        if not _try_lock(handle):
            return True
        with contextlib.suppress(OSError):
            os.unlink(path)
        return False
    finally:
        handle.close()
