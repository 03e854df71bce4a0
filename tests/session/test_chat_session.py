"""`ChatSession` on its own, with no host: a turn's life in the store, the conversations it
opens, renames and resumes, and what it exports.

The session is real (scripted provider, real strategies, a real SQLite store under `tmp_path`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.helpers import BlockingProvider, FakeToolbox
from tui_assist.core.conversation import TextBlock
from tui_assist.core.observer import RecordingObserver
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import UNTITLED, ChatSession
from tui_assist.session.config import Settings


def _replies(*texts: str) -> ScriptedProvider:
    return ScriptedProvider([[TextBlock(text)] for text in texts])


async def _loaded(tmp_path: Path, provider: Any) -> ChatSession:
    session = ChatSession(
        Settings(provider="scripted", workdir=tmp_path, data_dir=tmp_path / "data"),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )
    await session.load()
    assert session.store is not None
    return session


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[ChatSession]:
    chat = await _loaded(tmp_path, _replies("First answer.", "Second answer.", "Third answer."))
    yield chat
    await chat.aclose()


async def test_the_first_turn_stores_the_conversation_titled_by_its_prompt(session: ChatSession) -> None:
    assert session.store is not None and session.conversation_id is None
    outcome = await session.run_turn("how are you", RecordingObserver())
    assert outcome.saved and outcome.result.answer == "First answer."
    assert outcome.conversation_id == session.conversation_id is not None
    row = await session.store.get_conversation(session.conversation_id)
    assert row is not None and row.title == "how are you" and row.turn_count == 1
    turn = await session.store.get_turn(outcome.result.turn_id)
    assert turn is not None and turn.outcome == "answered" and turn.answer == "First answer."
    assert [m.role for m in session.conversation.messages] == ["user", "assistant"]


async def test_an_interrupted_turn_is_stored_as_cancelled_with_its_partial_answer(tmp_path: Path) -> None:
    provider = BlockingProvider("Half an ans")
    session = await _loaded(tmp_path, provider)
    try:
        turn = asyncio.create_task(session.run_turn("tell me", RecordingObserver()))
        await asyncio.wait_for(provider.started.wait(), 10)
        assert session.running and session.interrupt()
        outcome = await turn
        assert outcome.result.outcome == "cancelled" and outcome.saved and provider.cancelled
        assert not session.running and not session.interrupt()
        assert session.store is not None
        row = await session.store.get_turn(outcome.result.turn_id)
        assert row is not None and row.outcome == "cancelled"
        # The next turn is sent what was said: the prompt and the answer as far as it got.
        assert session.conversation.messages[0].role == "user"
        assert "Half an ans" in str(session.conversation.messages[-1])
    finally:
        await session.aclose()


async def test_a_title_given_before_the_first_turn_is_the_conversations(session: ChatSession) -> None:
    assert await session.rename("  my   plans  ") == "my plans"
    await session.run_turn("first question", RecordingObserver())
    assert session.store is not None and session.conversation_id is not None
    row = await session.store.get_conversation(session.conversation_id)
    assert row is not None and row.title == "my plans"
    await session.rename("later name")
    row = await session.store.get_conversation(session.conversation_id)
    assert row is not None and row.title == "later name"
    with pytest.raises(ValueError):
        await session.rename("   ")


async def test_a_conversation_started_before_its_first_turn_is_titled_by_that_turn(
    session: ChatSession,
) -> None:
    conversation_id = await session.start_conversation()
    assert session.store is not None
    row = await session.store.get_conversation(conversation_id)
    assert row is not None and row.title == UNTITLED and row.turn_count == 0
    await session.run_turn("what the ACP session asked", RecordingObserver())
    assert session.conversation_id == conversation_id
    row = await session.store.get_conversation(conversation_id)
    assert row is not None and row.title == "what the ACP session asked" and row.turn_count == 1


async def test_a_new_conversation_starts_over_and_the_old_one_can_be_continued(session: ChatSession) -> None:
    spent = (await session.run_turn("one", RecordingObserver())).result.usage
    first = session.conversation_id
    assert first is not None and spent.output_tokens > 0
    session.meter.add(spent, None, "scripted")  # as the controller does from the turn's events
    session.new_conversation()
    assert session.conversation_id is None and not session.conversation.messages
    assert session.meter.usage.output_tokens == 0
    await session.run_turn("two", RecordingObserver())
    second = session.conversation_id
    assert second not in (None, first)

    assert await session.find_conversation() == second  # the latest
    assert await session.find_conversation(first[:8]) == first
    await session.open_conversation(first[:8])
    assert session.conversation_id == first
    assert [m.role for m in session.conversation.messages] == ["user", "assistant"]
    assert session.meter.usage == spent  # what it spent, read back from the store
    outcome = await session.run_turn("three", RecordingObserver())
    assert outcome.conversation_id == first and len(session.conversation.messages) == 4


async def test_continue_latest_opens_the_newest_or_says_there_is_none(tmp_path: Path) -> None:
    session = await _loaded(tmp_path, _replies("An answer."))
    try:
        assert not await session.continue_latest()
        await session.run_turn("hello", RecordingObserver())
        stored = session.conversation_id
        session.new_conversation()
        assert await session.continue_latest() and session.conversation_id == stored
    finally:
        await session.aclose()


async def test_resume_redraws_the_newest_turns_and_sends_the_whole_history(session: ChatSession) -> None:
    for prompt in ("one", "two", "three"):
        await session.run_turn(prompt, RecordingObserver())
    conversation_id = session.conversation_id
    assert conversation_id is not None
    session.new_conversation()

    shown = await session.resume(conversation_id, limit=2)
    assert [(t.prompt, t.answer) for t in shown] == [("two", "Second answer."), ("three", "Third answer.")]
    assert all(t.events for t in shown)  # each with its event log, to replay into the views
    assert len(session.conversation.messages) == 6  # the next turn is sent all three
    earlier = await session.stored_page(conversation_id, before=shown[0].seq)
    assert [t.prompt for t in earlier] == ["one"]


async def test_export_gives_the_stored_turns(session: ChatSession) -> None:
    await session.run_turn("what is up", RecordingObserver())
    document = await session.export("md")
    assert "what is up" in document and "First answer." in document
    assert "First answer." in session.export_markdown()
