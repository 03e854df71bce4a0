"""Conversations: creating, finding and listing them, the history a model is sent, and its summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tui_assist.core.compaction import HistorySummary
from tui_assist.core.conversation import Message, Usage
from tui_assist.core.nodes import new_id
from tui_assist.store.base import RUNNING, StoreBase, UnknownIdError, like_escaped
from tui_assist.store.rows import ConversationRow

_CONVERSATION_COLUMNS = (
    "c.id, c.title, c.model, c.workdir, c.created_at, c.updated_at, "
    "(SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id)"
)


def title_from_prompt(prompt: str, limit: int = 60) -> str:
    """A conversation title from its first prompt: the first non-empty line, shortened.

    Args:
        prompt: The first prompt of the conversation.
        limit: The longest title, in characters.

    Returns:
        The title (`untitled` for a blank prompt).
    """
    line = next((part.strip() for part in prompt.splitlines() if part.strip()), "")
    if not line:
        return "untitled"
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


class ConversationsMixin(StoreBase):
    """The conversations of the store."""

    async def create_conversation(self, *, title: str, model: str, workdir: str) -> str:
        """Start a new, empty conversation.

        Args:
            title: Shown in lists (see `title_from_prompt`).
            model: The model it talks to.
            workdir: The directory its tools are anchored in.

        Returns:
            The new conversation's id.
        """
        conversation_id = new_id()
        now = self._clock()
        async with self._write() as db:
            await db.execute(
                "INSERT INTO conversations (id, title, model, workdir, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_id, title, model, workdir, now, now),
            )
        self._changed(conversation_id)
        return conversation_id

    async def latest_conversation_id(self) -> str | None:
        """The most recently updated conversation, or None when there is none."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT id FROM conversations ORDER BY updated_at DESC, rowid DESC LIMIT 1"
            )
        return next((str(row[0]) for row in rows), None)

    async def conversation_exists(self, conversation_id: str) -> bool:
        """Whether a conversation has exactly this id."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
            )
        return bool(list(rows))

    async def resolve_conversation_id(self, text: str) -> str:
        """The conversation whose id is `text` or, failing that, the only one starting with it.

        Raises:
            UnknownIdError: when no conversation, or more than one, matches.
        """
        return await self._resolve_id("conversations", "conversation", text)

    async def get_conversation(self, conversation_id: str) -> ConversationRow | None:
        """One conversation, or None if the id is unknown."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?", (conversation_id,)
            )
        return next((_conversation_row(row) for row in rows), None)

    async def get_conversations(self, conversation_ids: Sequence[str]) -> dict[str, ConversationRow]:
        """The conversations with these ids (those that exist), read in one query."""
        if not conversation_ids:
            return {}
        marks = ", ".join("?" * len(conversation_ids))
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.id IN ({marks})",
                list(conversation_ids),
            )
        found = [_conversation_row(row) for row in rows]
        return {row.id: row for row in found}

    async def rename_conversation(self, conversation_id: str, title: str) -> None:
        """Give a conversation another title.

        Args:
            conversation_id: The conversation's id.
            title: The new title (shown in lists and searched like the first prompt's title).

        Raises:
            UnknownIdError: when no conversation has this id.
        """
        async with self._write() as db:
            cursor = await db.execute(
                "UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id)
            )
            if cursor.rowcount == 0:
                raise UnknownIdError(f"no conversation with id {conversation_id!r}")

    async def conversation_usage(self, conversation_id: str) -> Usage:
        """The tokens every turn of a conversation spent, cancelled turns included."""
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
                    "COALESCE(SUM(cache_creation_input_tokens), 0), "
                    "COALESCE(SUM(cache_read_input_tokens), 0) FROM turns WHERE conversation_id = ?",
                    (conversation_id,),
                )
            )
        given, got, written, read = (int(v) for v in rows[0])
        return Usage(given, got, written, read)

    async def usage_by_model(self, conversation_id: str) -> list[tuple[str, Usage]]:
        """What a conversation's turns spent, per model, in the order first used.

        A turn stored without a model ran on the conversation's; cancelled turns are included.
        """
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    "SELECT COALESCE(t.model, c.model) AS m, COALESCE(SUM(t.input_tokens), 0), "
                    "COALESCE(SUM(t.output_tokens), 0), COALESCE(SUM(t.cache_creation_input_tokens), 0), "
                    "COALESCE(SUM(t.cache_read_input_tokens), 0) FROM turns t "
                    "JOIN conversations c ON c.id = t.conversation_id WHERE t.conversation_id = ? "
                    "GROUP BY m ORDER BY MIN(t.seq)",
                    (conversation_id,),
                )
            )
        return [(str(row[0]), Usage(*(int(v) for v in row[1:]))) for row in rows]

    async def last_model(self, conversation_id: str) -> str | None:
        """The model the conversation's newest turn ran on; None before its first.

        A shell command (`!`) runs no model, so it is passed over; a turn stored without a model
        (before migration m006) ran on the conversation's.
        """
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT COALESCE(t.model, c.model) FROM turns t "
                "JOIN conversations c ON c.id = t.conversation_id "
                "WHERE t.conversation_id = ? AND t.strategy != 'shell' ORDER BY t.seq DESC LIMIT 1",
                (conversation_id,),
            )
        return next((str(row[0]) for row in rows), None)

    async def list_conversations(
        self, limit: int = 50, offset: int = 0, query: str | None = None
    ) -> list[ConversationRow]:
        """Conversations, most recently updated first.

        Args:
            limit: At most this many.
            offset: Skip this many (for paging).
            query: Keep only conversations whose title contains this text (case-insensitive) or
                whose id starts with it.

        Returns:
            The page of conversations.
        """
        sql = f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c"
        params: list[Any] = []
        if query:
            escaped = like_escaped(query)
            sql += " WHERE c.title LIKE ? ESCAPE '\\' OR c.id LIKE ? ESCAPE '\\'"
            params += [f"%{escaped}%", f"{escaped}%"]
        sql += " ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ? OFFSET ?"
        params += [limit, offset]
        async with self._lock:
            rows = await self._db.execute_fetchall(sql, params)
        return [_conversation_row(row) for row in rows]

    async def load_history(self, conversation_id: str) -> list[Message]:
        """The history sent to the model: finished turns' messages, in order.

        A running turn adds nothing, nor does one a crash cut (it was stored without messages); a
        turn the user interrupted adds what it kept; a refine turn adds only its clean
        `prompt -> answer` pair; a rewound turn adds nothing.
        """
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT m.data FROM turns t JOIN messages m ON m.turn_id = t.id "
                "WHERE t.conversation_id = ? AND t.outcome <> ? AND t.rewound_at IS NULL "
                "ORDER BY t.seq, m.position",
                (conversation_id, RUNNING),
            )
        return [Message.from_dict(json.loads(row[0])) for row in rows]

    async def save_summary(self, conversation_id: str, summary: HistorySummary) -> bool:
        """Keep `summary` as the conversation's history summary, in place of an older one.

        The stored turns are not touched. The summary is tied to the turn its covered history ends
        with: deleting that turn deletes it, rewinding it hides it.

        Args:
            conversation_id: The conversation.
            summary: Covers the first `summary.covered` messages of `load_history`.

        Returns:
            False (nothing stored) when those messages do not end with a finished turn.
        """
        async with self._write() as db:
            rows = await db.execute_fetchall(
                "SELECT t.id, COUNT(m.id) FROM turns t LEFT JOIN messages m ON m.turn_id = t.id "
                "WHERE t.conversation_id = ? AND t.outcome <> ? AND t.rewound_at IS NULL "
                "GROUP BY t.id ORDER BY t.seq",
                (conversation_id, RUNNING),
            )
            through: str | None = None
            count = 0
            for turn_id, messages in rows:
                count += int(messages)
                if count == summary.covered and messages:
                    through = str(turn_id)
                if count >= summary.covered:
                    break
            if through is None:
                return False
            await db.execute(
                "INSERT INTO history_summaries (conversation_id, through_turn_id, covered_messages, "
                "covered_turns, summary, tokens_before, tokens_after, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET "
                "through_turn_id = excluded.through_turn_id, covered_messages = excluded.covered_messages, "
                "covered_turns = excluded.covered_turns, summary = excluded.summary, "
                "tokens_before = excluded.tokens_before, tokens_after = excluded.tokens_after, "
                "created_at = excluded.created_at",
                (
                    conversation_id,
                    through,
                    summary.covered,
                    summary.turns,
                    summary.text,
                    summary.tokens_before,
                    summary.tokens_after,
                    self._clock(),
                ),
            )
        return True

    async def load_summary(self, conversation_id: str) -> HistorySummary | None:
        """The conversation's history summary (see `save_summary`), or None when it has none.

        A summary whose last turn was rewound describes turns the history no longer holds: None.
        """
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT s.summary, s.covered_messages, s.covered_turns, s.tokens_before, s.tokens_after "
                "FROM history_summaries s JOIN turns t ON t.id = s.through_turn_id "
                "WHERE s.conversation_id = ? AND t.rewound_at IS NULL",
                (conversation_id,),
            )
        return next(
            (HistorySummary(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows), None
        )


def _conversation_row(row: Any) -> ConversationRow:
    return ConversationRow(
        id=str(row[0]),
        title=str(row[1]),
        model=str(row[2]),
        workdir=str(row[3]),
        created_at=float(row[4]),
        updated_at=float(row[5]),
        turn_count=int(row[6]),
    )
