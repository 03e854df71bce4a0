"""The store: conversations, turns, rounds, events and audit lines in one SQLite file.

How a host uses it for one turn:

1. `begin_turn` commits a `running` row *before* any model call, so a crash at any later point
   leaves a row that the next `Store.open` finds and marks `cancelled`.
2. The strategy runs with `store.recorder()` as one more observer behind `FanOutObserver`; the
   recorder only buffers events in memory.
3. `commit_turn` writes everything the turn produced in ONE transaction: the turn row, the history
   it adds, rounds, tool calls, events and the audit line. A UI shows the turn as done only after
   it returns. A cancel calls `mark_cancelled` instead, which keeps the events but adds no history.

Only committed turns contribute to `load_history`, so nothing half-written ever reaches a model.

`Store` puts together one part per concern: `conversations`, `turns`, `search`, `flow_runs`,
`audit` (audit lines and stats) and `recovery` (crash recovery), on the connection and
transactions of `base`.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import aiosqlite

from tui_assist.store.audit import AuditMixin
from tui_assist.store.base import RUNNING, StoreError, UnknownIdError
from tui_assist.store.checkpoints import CheckpointsMixin
from tui_assist.store.conversations import ConversationsMixin, title_from_prompt
from tui_assist.store.flow_runs import FlowRunsMixin
from tui_assist.store.lock import InstanceLock
from tui_assist.store.migrations import check_version, migrate
from tui_assist.store.recorder import TurnRecorder
from tui_assist.store.recovery import RecoveryMixin
from tui_assist.store.search import SearchMixin
from tui_assist.store.turns import TurnsMixin

__all__ = ["DB_FILENAME", "Store", "StoreError", "UnknownIdError", "title_from_prompt"]

DB_FILENAME = "tui_assist.db"
"""The database file's name inside the data dir."""


class Store(
    ConversationsMixin,
    TurnsMixin,
    SearchMixin,
    FlowRunsMixin,
    AuditMixin,
    RecoveryMixin,
    CheckpointsMixin,
):
    """Async access to the tui-assist database. Create it with `Store.open`."""

    @classmethod
    async def open(
        cls, data_dir: Path, *, busy_timeout: float = 10.0, clock: Callable[[], float] = time.time
    ) -> Store:
        """Open (creating if need be) the database under `data_dir` and make it ready.

        Creates the directory, enables WAL, foreign keys and the busy timeout, runs pending
        migrations, and marks `cancelled` every `running` turn whose owning process has died.

        Args:
            data_dir: The data dir (see `tui_assist.paths.data_dir`).
            busy_timeout: Seconds to wait for another process's write lock before failing.
            clock: Source of timestamps (Unix seconds); tests pass a fixed one.

        Returns:
            The open store. Close it with `close`.

        Raises:
            MigrationError: when the database is from a newer version of the program.
            sqlite3.Error: when the file is not a usable database.
        """
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / DB_FILENAME
        instance_id = uuid.uuid4().hex
        lock = InstanceLock(data_dir / "locks", instance_id)
        lock.acquire()
        try:
            db = await aiosqlite.connect(path, timeout=busy_timeout, isolation_level=None)
        except BaseException:
            lock.release()
            raise
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            # Read before anything is written: a file that isn't a database, or one from a newer
            # version, must be refused as it is (switching to WAL alone rewrites its header).
            await check_version(db)
            async with db.execute("PRAGMA journal_mode = WAL") as cursor:
                mode = await cursor.fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot switch {path} to WAL mode (got {mode!r})")
            await db.execute("PRAGMA synchronous = FULL")
            await db.execute("PRAGMA journal_size_limit = 8388608")
            await db.execute("PRAGMA foreign_keys = ON")
            await migrate(db)
            store = cls(db, path=path, lock=lock, instance_id=instance_id, clock=clock)
            store.recovered = await store._recover()
        except BaseException:
            await db.close()
            lock.release()
            raise
        return store

    async def close(self) -> None:
        """Mark this instance's own unfinished turns `cancelled`, then close the database.

        Closing twice is harmless.
        """
        if self._closed:
            return
        self._closed = True
        try:
            async with self._lock:
                rows = list(
                    await self._db.execute_fetchall(
                        "SELECT 1 FROM turns WHERE outcome = ? AND owner = ? LIMIT 1",
                        (RUNNING, self._instance_id),
                    )
                )
            if rows:
                await self._cancel_owned_by([self._instance_id], reason="cancelled: the store was closed")
        finally:
            try:
                await self._db.close()
            finally:
                self._instance_lock.release()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def recorder(self) -> TurnRecorder:
        """A fresh observer that buffers one turn's events for `commit_turn` / `mark_cancelled`."""
        return TurnRecorder()

    async def integrity_check(self) -> str:
        """`PRAGMA integrity_check`'s verdict: `ok` for a sound database."""
        async with self._lock:
            rows = await self._db.execute_fetchall("PRAGMA integrity_check")
        return "\n".join(str(row[0]) for row in rows)
