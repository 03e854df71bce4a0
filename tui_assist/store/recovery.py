"""Crash recovery: turns left `running` by a process that died are marked `cancelled`.

Every instance holds a lock file (`lock.py`) while its store is open; a `running` turn whose owner
holds no lock any more was cut by a crash. `Store.open` recovers them, and `Store.close` cancels
the instance's own unfinished turns.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_assist.core.conversation import Usage
from tui_assist.store.audit import insert_audit_line
from tui_assist.store.base import RUNNING, StoreBase
from tui_assist.store.lock import is_alive
from tui_assist.store.rows import AuditLine

INTERRUPTED = "interrupted: the program stopped before the turn finished"
"""`turns.error` of a turn found `running` after its owner died."""


class RecoveryMixin(StoreBase):
    """Cancelling the turns of dead (or closing) instances."""

    async def _recover(self) -> list[str]:
        """Cancel `running` turns whose owner is gone (a crash); leave live instances' turns alone."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT DISTINCT owner FROM turns WHERE outcome = ?", (RUNNING,)
            )
        lock_dir = self._instance_lock.path.parent
        dead = [
            str(row[0])
            for row in rows
            if row[0] != self._instance_id and (not row[0] or not is_alive(lock_dir, str(row[0])))
        ]
        return await self._cancel_owned_by(dead, reason=INTERRUPTED) if dead else []

    async def _cancel_owned_by(self, owners: Sequence[str], *, reason: str) -> list[str]:
        """Mark `cancelled` every `running` turn of these owners (instance ids), each with an audit line."""
        cancelled: list[str] = []
        if not owners:
            return cancelled
        now = self._clock()
        async with self._write() as db:
            for owner in owners:
                turns = await db.execute_fetchall(
                    "SELECT id, conversation_id, strategy, started_at FROM turns "
                    "WHERE outcome = ? AND owner = ?",
                    (RUNNING, owner),
                )
                for turn_id, conversation_id, strategy, started_at in turns:
                    await db.execute(
                        "UPDATE turns SET outcome = 'cancelled', error = ?, finished_at = ? WHERE id = ?",
                        (reason, now, turn_id),
                    )
                    await insert_audit_line(
                        db,
                        AuditLine(
                            at=float(started_at),
                            conversation_id=str(conversation_id),
                            turn_id=str(turn_id),
                            strategy=str(strategy),
                            outcome="cancelled",
                            rounds=0,
                            tool_calls=0,
                            usage=Usage(),
                            duration=0.0,
                        ),
                    )
                    cancelled.append(str(turn_id))
        return cancelled
