"""Full-text search over every turn's prompt and answer (SQLite FTS5, see `fts.py`)."""

from __future__ import annotations

from tui_assist.store.base import StoreBase
from tui_assist.store.fts import fts_query
from tui_assist.store.rows import SearchHit


class SearchMixin(StoreBase):
    """Searching the stored turns."""

    async def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Full-text search over every turn's prompt and answer, best match first.

        Any text is accepted: quotes, dashes and FTS operators are treated as plain words.

        Args:
            query: What the user typed; every word must match (as a word prefix).
            limit: At most this many hits.

        Returns:
            The hits, with snippets around the matches.
        """
        expression = fts_query(query)
        if expression is None:
            return []
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT t.id, t.conversation_id, c.title, t.seq, t.outcome, t.started_at, "
                "snippet(turns_fts, 0, '[', ']', '…', 12), snippet(turns_fts, 1, '[', ']', '…', 12) "
                "FROM turns_fts JOIN turns t ON t.pk = turns_fts.rowid "
                "JOIN conversations c ON c.id = t.conversation_id "
                "WHERE turns_fts MATCH ? ORDER BY bm25(turns_fts), t.started_at DESC LIMIT ?",
                (expression, limit),
            )
        return [
            SearchHit(
                turn_id=str(r[0]),
                conversation_id=str(r[1]),
                conversation_title=str(r[2]),
                seq=int(r[3]),
                outcome=str(r[4]),
                started_at=float(r[5]),
                prompt_snippet=str(r[6] or ""),
                answer_snippet=str(r[7] or ""),
            )
            for r in rows
        ]
