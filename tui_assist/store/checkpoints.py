"""Workdir checkpoints and rewinds: which shadow-repository commits surround each turn.

The snapshots themselves live in the shadow repository (`tui_assist.session.checkpoints`); the
store keeps, per workdir and in order, the commit taken before and after each turn (and around
each rewind), and marks the turns a conversation rewind took out.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_assist.store.base import StoreBase, UnknownIdError


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """The snapshots around one change the app made to a workdir."""

    id: int
    workdir: str
    turn_id: str | None
    """The turn that made the change; None for a rewind."""
    before: str
    after: str | None
    """None until the turn ends (and for good when a crash cut it)."""
    at: float


_COLUMNS = "id, workdir, turn_id, before, after, at"


def _row(row: tuple[object, ...]) -> CheckpointRow:
    id_, workdir, turn_id, before, after, at = row
    return CheckpointRow(
        int(str(id_)),
        str(workdir),
        None if turn_id is None else str(turn_id),
        str(before),
        None if after is None else str(after),
        float(str(at)),
    )


class CheckpointsMixin(StoreBase):
    """Recording checkpoints and rewinding conversations."""

    async def record_checkpoint(self, *, workdir: str, before: str, turn_id: str | None = None) -> int:
        """Record the snapshot taken before a change; returns the row id for `finish_checkpoint`."""
        async with self._write() as db:
            cursor = await db.execute(
                "INSERT INTO workdir_checkpoints (workdir, turn_id, before, at) VALUES (?, ?, ?, ?)",
                (workdir, turn_id, before, self._clock()),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    async def finish_checkpoint(self, checkpoint_id: int, after: str) -> None:
        """Record the snapshot taken after the change."""
        async with self._write() as db:
            await db.execute("UPDATE workdir_checkpoints SET after = ? WHERE id = ?", (after, checkpoint_id))

    async def turn_checkpoint(self, turn_id: str) -> CheckpointRow | None:
        """The checkpoint of a turn, if one was taken."""
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    f"SELECT {_COLUMNS} FROM workdir_checkpoints WHERE turn_id = ? ORDER BY id LIMIT 1",
                    (turn_id,),
                )
            )
        return _row(tuple(rows[0])) if rows else None

    async def first_checkpoint_after(self, workdir: str, at: float) -> CheckpointRow | None:
        """The first change recorded in `workdir` at or after the time `at` (of the store's clock)."""
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    f"SELECT {_COLUMNS} FROM workdir_checkpoints WHERE workdir = ? AND at >= ? "
                    "ORDER BY id LIMIT 1",
                    (workdir, at),
                )
            )
        return _row(tuple(rows[0])) if rows else None

    async def checkpoints_since(self, workdir: str, first_id: int) -> list[CheckpointRow]:
        """Every change recorded in `workdir` from `first_id` on, oldest first."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_COLUMNS} FROM workdir_checkpoints WHERE workdir = ? AND id >= ? ORDER BY id",
                (workdir, first_id),
            )
        return [_row(tuple(row)) for row in rows]

    async def rewind_conversation(self, turn_id: str) -> list[str]:
        """Take `turn_id` and every later turn of its conversation out of the conversation.

        They stay in the database (marked rewound) but leave the history sent to the model.

        Returns:
            The ids of the turns taken out, oldest first.

        Raises:
            UnknownIdError: when no turn has this id.
        """
        now = self._clock()
        async with self._write() as db:
            found = list(
                await db.execute_fetchall("SELECT conversation_id, seq FROM turns WHERE id = ?", (turn_id,))
            )
            if not found:
                raise UnknownIdError(f"no turn with id {turn_id!r}")
            conversation_id, seq = found[0]
            rows = await db.execute_fetchall(
                "SELECT id FROM turns WHERE conversation_id = ? AND seq >= ? AND rewound_at IS NULL "
                "ORDER BY seq",
                (conversation_id, seq),
            )
            ids = [str(row[0]) for row in rows]
            await db.executemany("UPDATE turns SET rewound_at = ? WHERE id = ?", [(now, i) for i in ids])
            await db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        self._changed(conversation_id)
        return ids
