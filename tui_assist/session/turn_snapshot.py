"""The workdir's snapshots around one running turn (`/rewind`'s checkpoints).

The snapshot before the turn runs alongside its first model request; only a tool call that may
change files waits for it, so a big workdir never delays the answer, and a turn that made no such
call never waits for it at all (`ask` exits at once).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_assist.session.rewind import TurnCheckpoints


class TurnSnapshot:
    """The checkpoint pair of one turn: started with the turn, finished when it ends."""

    def __init__(self, checkpoints: TurnCheckpoints, turn_id: str, warnings: list[str]) -> None:
        """Start the snapshot before the turn `turn_id`; what fails becomes one of `warnings`."""
        self._checkpoints = checkpoints
        self._before: asyncio.Task[int | None] | None = asyncio.create_task(
            checkpoints.before(turn_id, warnings)
        )
        self._needed = False
        """Whether the turn made a call that may change files (it waited for the snapshot)."""

    async def taken(self) -> None:
        """Wait for the snapshot before the turn (a tool call is about to change files)."""
        self._needed = True
        if self._before is not None:
            await asyncio.shield(self._before)  # a cancelled call must not cancel the snapshot

    async def finish(self) -> None:
        """The turn ended, whatever its outcome: take the snapshot after it if files may have changed."""
        before, self._before = self._before, None
        if self._needed:
            await asyncio.shield(self._after(before))
        elif before is not None:
            self._checkpoints.unchanged(before)

    async def _after(self, before: asyncio.Task[int | None] | None) -> None:
        await self._checkpoints.after(await before if before is not None else None)
