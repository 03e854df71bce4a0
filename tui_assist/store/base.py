"""The store's connection: transactions on one SQLite connection, and what every part of the store shares.

Concurrency: WAL lets readers and one writer proceed together; every write is a `BEGIN IMMEDIATE`
transaction, which takes the write lock up front and waits (the busy timeout) instead of failing
when another process holds it. Within a process one `asyncio.Lock` serializes use of the single
connection, so coroutines never interleave statements of different transactions.

`Store` (in `db.py`) is this base plus one mixin per concern (conversations, turns, search,
flow runs, audit and stats, crash recovery); each mixin's methods use the connection through
`_read` / `_write` or under `_lock`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from tui_assist.core.conversation import Usage
from tui_assist.paths import forget_resume_screen
from tui_assist.store.lock import InstanceLock

RUNNING = "running"
"""`turns.outcome` of a turn that has begun and not yet been committed or cancelled."""


class StoreError(Exception):
    """A store operation cannot be done as asked (unknown id, turn already final...)."""


class UnknownIdError(StoreError, LookupError):
    """No conversation or turn has this id (or no unique one starts with it)."""


def dumps_json(value: Any) -> str:
    """Compact JSON, as every JSON column stores it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def like_escaped(text: str) -> str:
    """`text` for a `LIKE` pattern with a backslash escape: its %, _ and backslashes match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def usage_from_json(text: str) -> Usage:
    """A `Usage` from its stored JSON."""
    data: dict[str, Any] = json.loads(text)
    return Usage(**data)


class StoreBase:
    """The connection, its lock and the instance's identity; the transactions every part uses."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        *,
        path: Path,
        lock: InstanceLock,
        instance_id: str,
        clock: Callable[[], float],
    ) -> None:
        self._db = db
        self._lock = asyncio.Lock()
        self._instance_lock = lock
        self._instance_id = instance_id
        self._clock = clock
        self._closed = False
        self.path = path
        """The database file."""
        self.recovered: list[str] = []
        """Ids of turns this open found `running` after a crash and marked `cancelled`."""

    def _changed(self, conversation_id: str) -> None:
        """`conversation_id` changed, in whichever process: forget what the TUI kept of it.

        Its pane kept for a resume no longer shows it, and the conversation named as the latest is
        not, unless it is this one (both in the data dir, see `ui/pane_snapshot.py`).
        """
        forget_resume_screen(self.path.parent, conversation_id)

    @asynccontextmanager
    async def _read(self) -> AsyncGenerator[aiosqlite.Connection]:
        """A read transaction: one consistent snapshot for several statements."""
        async with self._lock:
            await self._db.execute("BEGIN")
            try:
                yield self._db
            finally:
                with contextlib.suppress(sqlite3.Error):
                    await asyncio.shield(self._end("COMMIT"))

    @asynccontextmanager
    async def _write(self) -> AsyncGenerator[aiosqlite.Connection]:
        """A write transaction: all of its statements land, or none."""
        async with self._lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                await self._end("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    await asyncio.shield(self._end("ROLLBACK"))
                raise

    async def _resolve_id(self, table: str, noun: str, text: str) -> str:
        """The id in `table` that is `text` or, failing that, the only one starting with it.

        Raises:
            UnknownIdError: when no row, or more than one, matches ("no turn with id ...").
        """
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    f"SELECT id FROM {table} WHERE id = ? UNION ALL "
                    f"SELECT id FROM {table} WHERE id LIKE ? ESCAPE '\\' AND id <> ? LIMIT 3",
                    (text, like_escaped(text) + "%", text),
                )
            )
        if rows and rows[0][0] == text:
            return text
        if not text or not rows:
            raise UnknownIdError(f"no {noun} with id {text!r}")
        if len(rows) > 1:
            raise UnknownIdError(f"more than one {noun} id starts with {text!r}")
        return str(rows[0][0])

    async def _end(self, statement: str) -> None:
        await self._db.execute(statement)
