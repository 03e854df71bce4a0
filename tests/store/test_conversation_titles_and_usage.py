"""Renaming a conversation, and the tokens a conversation spent (what the meter shows on resume)."""

from __future__ import annotations

import pytest

from tui_assist.core.conversation import Usage
from tui_assist.core.events import NodeStarted, UsageRecorded
from tui_assist.store import Store, UnknownIdError

from .helpers import plain_events, plain_result


async def test_a_renamed_conversation_is_listed_and_found_by_its_new_title(store: Store) -> None:
    conversation_id = await store.create_conversation(title="how do I rebase", model="m", workdir="/w")
    await store.rename_conversation(conversation_id, "git history clean-up")

    row = await store.get_conversation(conversation_id)
    assert row is not None and row.title == "git history clean-up"
    [found] = await store.list_conversations(10, 0, query="clean-up")
    assert found.id == conversation_id


async def test_renaming_an_unknown_conversation_says_so(store: Store) -> None:
    with pytest.raises(UnknownIdError):
        await store.rename_conversation("no-such-id", "x")


async def test_conversation_usage_sums_every_turn_cancelled_ones_included(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    other = await store.create_conversation(title="other", model="m", workdir="/w")
    assert await store.conversation_usage(conversation_id) == Usage()

    for turn_id, usage in (("a", Usage(100, 20, 50, 0)), ("b", Usage(30, 10, 0, 400))):
        await store.begin_turn(conversation_id=conversation_id, turn_id=turn_id, strategy="agent", prompt="p")
        result = plain_result(turn_id, "p", "answer", usage=usage)
        await store.commit_turn(conversation_id, result, plain_events(turn_id, "answer"))
    # A turn cut mid-call: its usage is what the cut call's event reported.
    await store.begin_turn(conversation_id=conversation_id, turn_id="c", strategy="agent", prompt="p")
    cut = [
        NodeStarted(node_id="c", parent_id=None, node_kind="turn", label="agent turn"),
        UsageRecorded(node_id="c", usage=Usage(7, 1, 0, 0), model="m", cut=True),
    ]
    await store.mark_cancelled("c", cut)
    await store.begin_turn(conversation_id=other, turn_id="x", strategy="agent", prompt="p")
    await store.commit_turn(
        other, plain_result("x", "p", "a", usage=Usage(9, 9, 9, 9)), plain_events("x", "a")
    )

    assert await store.conversation_usage(conversation_id) == Usage(137, 31, 50, 400)
