"""Stored turns read back to redraw: a page of a conversation, with each turn's events and images."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui_assist.core.text import base64_size

if TYPE_CHECKING:
    from tui_assist.core.events import TurnEvent
    from tui_assist.store import Store


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A stored turn to redraw: its prompt, strategy, answer and event log (may be empty)."""

    prompt: str
    strategy: str
    answer: str
    events: list[TurnEvent]
    images: list[tuple[str, int]] = field(default_factory=lambda: list[tuple[str, int]]())
    """The images its prompt attached, as `(name, bytes)`, from the stored history."""
    seq: int = 0
    """Its position in the conversation (pass the oldest shown to `stored_page`)."""


async def read_page(
    store: Store,
    conversation_id: str,
    *,
    before: int | str | None = None,
    after: int | None = None,
    limit: int,
) -> list[StoredTurn]:
    """A page of a stored conversation's turns to redraw, oldest first (see `ChatSession.stored_page`)."""
    if isinstance(before, str):
        row = await store.get_turn(before)
        if row is None or row.conversation_id != conversation_id:
            return []
        before = row.seq
    if after is not None:
        rows = await store.turns_page(conversation_id, limit=limit, after_seq=after)
    else:
        rows = await store.turns_page(conversation_id, limit=limit, before_seq=before)
    ids = [row.id for row in rows]
    events = await store.events_of(ids)
    sent_by_turn = await store.messages_of(ids, role="user")
    turns: list[StoredTurn] = []
    for row in rows:
        sent = next((m for m in sent_by_turn[row.id] if m.images and m.text.endswith(row.prompt)), None)
        images = [(b.name, base64_size(b.data)) for b in sent.images] if sent is not None else []
        turns.append(StoredTurn(row.prompt, row.strategy, row.answer, events[row.id], images, row.seq))
    return turns


def title_of(prompt: str) -> str:
    """A conversation's title from its first prompt: what was asked, not the documents it carried."""
    from tui_assist.session.mentions import without_documents
    from tui_assist.store.db import title_from_prompt  # loaded with the store

    return title_from_prompt(without_documents(prompt))
