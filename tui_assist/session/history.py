"""The stored conversations as a host sees them: find, preview, rename, rewind.

Hosts reach the store only through the application layer: the resume picker and the rewind
picker ask a `History` (the session's, `ChatSession.history`), never the store itself. The rows
they show are the store's (re-exported here, so a host needs no import of `tui_assist.store`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.store.base import UnknownIdError
from tui_assist.store.rows import ConversationRow, TurnRow

if TYPE_CHECKING:
    from tui_assist.session.checkpoints import FileChange
    from tui_assist.session.checkpoints.hunks import HunkKey, RevertResult, TurnChanges
    from tui_assist.session.rewind import RewindPlan, RewindResult, RewindScope
    from tui_assist.store.db import Store

__all__ = ["ConversationRow", "Found", "History", "TurnRow", "UnknownIdError"]

FIND_LIMIT = 50
"""Conversations `find` returns at most."""


@dataclass(frozen=True, slots=True)
class Found:
    """A conversation found: its row, and for a search what matched in it."""

    row: ConversationRow
    snippet: str = ""


class History:
    """The stored conversations and turns, and rewinding them (the store and the shadow repos)."""

    def __init__(self, store: Store, data_dir: Path) -> None:
        """Read `store`; rewind with the shadow repositories under `data_dir`."""
        self._store = store
        self.data_dir = data_dir

    async def find(self, query: str, limit: int = FIND_LIMIT) -> list[Found]:
        """Conversations whose title or any prompt or answer matches `query` (all, newest first, if blank).

        Full-text hits come first, best match first, then conversations that match by title only.
        Three queries whatever the number of hits (a picker runs one per keystroke).
        """
        store = self._store
        query = query.strip()
        if not query:
            return [Found(row) for row in await store.list_conversations(limit, 0)]
        hits = await store.search(query, limit * 4)
        best: dict[str, str] = {}  # conversation id -> the snippet of its best hit
        for hit in hits:
            if len(best) < limit:
                best.setdefault(hit.conversation_id, hit.prompt_snippet or hit.answer_snippet)
        rows = await store.get_conversations(list(best))
        found = {cid: Found(rows[cid], snippet) for cid, snippet in best.items() if cid in rows}
        for row in await store.list_conversations(limit, 0, query=query):
            if row.id not in found and len(found) < limit:
                found[row.id] = Found(row)
        return list(found.values())

    async def turns(self, conversation_id: str, limit: int) -> list[TurnRow]:
        """The conversation's first `limit` turns, oldest first."""
        return await self._store.turns_page(conversation_id, limit=limit)

    async def rename(self, conversation_id: str, title: str) -> None:
        """Give a stored conversation a title (clipped by the caller)."""
        await self._store.rename_conversation(conversation_id, title)

    async def turn_changes(self, turn_id: str) -> list[FileChange] | None:
        """The files a turn changed, or None when it has no complete snapshot pair."""
        from tui_assist.session import rewind  # the checkpoints: loaded when first needed

        return await rewind.turn_changes(self._store, self.data_dir, turn_id)

    async def plan_rewind(self, turn_id: str, scope: RewindScope) -> RewindPlan:
        """What rewinding to before `turn_id` would do (see `session.rewind.plan_rewind`)."""
        from tui_assist.session import rewind

        return await rewind.plan_rewind(self._store, self.data_dir, turn_id, scope)

    async def rewind(self, plan: RewindPlan) -> RewindResult:
        """Carry out a rewind plan (see `session.rewind.apply_rewind`)."""
        from tui_assist.session import rewind

        return await rewind.apply_rewind(self._store, self.data_dir, plan)

    async def turn_hunks(self, turn_id: str) -> TurnChanges | None:
        """A turn's changes by hunk, from its snapshots; None when it has no complete pair.

        Raises:
            CheckpointError: A snapshot was pruned, or git failed.
        """
        from tui_assist.session.checkpoints import Checkpoints
        from tui_assist.session.checkpoints.hunks import load_changes

        row = await self._store.turn_checkpoint(turn_id)
        if row is None or row.after is None:
            return None
        return await load_changes(Checkpoints(self.data_dir, Path(row.workdir)), row.before, row.after)

    async def revert_hunks(self, changes: TurnChanges, rejected: set[HunkKey]) -> RevertResult:
        """Revert some hunks of a turn on disk, recorded like a turn so a rewind still restores it.

        Raises:
            CheckpointError: A snapshot or a write failed.
        """
        from tui_assist.session.checkpoints import Checkpoints
        from tui_assist.session.checkpoints.hunks import revert_hunks

        checkpoints = Checkpoints(self.data_dir, Path(changes.workdir))
        done = await revert_hunks(checkpoints, changes, rejected)
        row_id = await self._store.record_checkpoint(workdir=changes.workdir, before=done.before)
        await self._store.finish_checkpoint(row_id, done.after)
        return done
