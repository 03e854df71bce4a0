"""A conversation's history summary: kept beside its turns, never instead of them."""

from __future__ import annotations

from tui_assist.core.compaction import HistorySummary
from tui_assist.core.conversation import Message
from tui_assist.store import Store

from .helpers import commit_plain


async def _conversation(store: Store, turns: int) -> str:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    for i in range(turns):
        await commit_plain(store, conversation_id, f"t{i}", f"prompt {i}", f"answer {i}")
    return conversation_id


async def test_a_summary_is_saved_replaced_and_loaded_and_the_history_is_untouched(store: Store) -> None:
    conversation_id = await _conversation(store, 3)
    history = await store.load_history(conversation_id)
    assert await store.load_summary(conversation_id) is None

    assert await store.save_summary(conversation_id, HistorySummary("first", 2, 1, 900, 300))
    assert await store.save_summary(conversation_id, HistorySummary("second", 4, 2, 1200, 400))

    assert await store.load_summary(conversation_id) == HistorySummary("second", 4, 2, 1200, 400)
    assert await store.load_history(conversation_id) == history
    assert history[:2] == [Message.user("prompt 0"), Message.assistant("answer 0")]


async def test_a_summary_that_does_not_end_at_a_turn_is_not_saved(store: Store) -> None:
    conversation_id = await _conversation(store, 2)
    assert not await store.save_summary(conversation_id, HistorySummary("half a turn", 3, 1))
    assert not await store.save_summary(conversation_id, HistorySummary("beyond the end", 6, 3))
    assert await store.load_summary(conversation_id) is None


async def test_a_rewind_of_the_turns_it_covers_takes_the_summary_away(store: Store) -> None:
    conversation_id = await _conversation(store, 3)
    assert await store.save_summary(conversation_id, HistorySummary("covers two turns", 4, 2))
    await store.rewind_conversation("t2")  # a later turn: the summary still describes the history
    assert await store.load_summary(conversation_id) is not None
    await store.rewind_conversation("t1")  # a turn it covers: it no longer does
    assert await store.load_summary(conversation_id) is None
    # A new summary counts only the turns left in the conversation.
    assert not await store.save_summary(conversation_id, HistorySummary("too far", 4, 2))
    assert await store.save_summary(conversation_id, HistorySummary("the first turn", 2, 1))
    assert await store.load_summary(conversation_id) == HistorySummary("the first turn", 2, 1)


async def test_deleting_the_turn_it_ends_at_deletes_the_summary(store: Store) -> None:
    conversation_id = await _conversation(store, 2)
    assert await store.save_summary(conversation_id, HistorySummary("covers both", 4, 2))
    async with store._write() as db:
        await db.execute("DELETE FROM turns WHERE id = 't1'")
    async with store._write() as db:
        rows = list(await db.execute_fetchall("SELECT COUNT(*) FROM history_summaries"))
    assert rows[0][0] == 0
