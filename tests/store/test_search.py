from __future__ import annotations

import pytest

from tui_assist.store import Store
from tui_assist.store.fts import fts_query

from .helpers import commit_plain


@pytest.fixture
async def filled(store: Store) -> Store:
    a = await store.create_conversation(title="Databases", model="m", workdir="/w")
    b = await store.create_conversation(title="Birds", model="m", workdir="/w")
    await commit_plain(
        store, a, "t1", "How do SQLite migrations work?", "Numbered scripts tracked by user_version."
    )
    await commit_plain(store, a, "t2", 'What does foo"bar mean?', "It is a quoted -x flag example.")
    await commit_plain(store, b, "t3", "Do penguins fly?", "No, penguins swim.")
    return store


async def test_search_finds_prompts_and_answers(filled: Store) -> None:
    assert [h.turn_id for h in await filled.search("migrations")] == ["t1"]  # prompt
    assert [h.turn_id for h in await filled.search("numbered")] == ["t1"]  # answer
    assert [h.turn_id for h in await filled.search("penguin")] == ["t3"]  # prefix
    assert [h.turn_id for h in await filled.search("PENGUINS swim")] == ["t3"]
    assert await filled.search("penguins sqlite") == []  # every word must match
    [hit] = await filled.search("swim")
    assert hit.conversation_title == "Birds" and hit.seq == 1 and hit.outcome == "answered"
    assert "[swim]" in hit.answer_snippet


@pytest.mark.parametrize(
    "query", ['foo"bar', "-x", '"', "-", "AND", "NOT x", "a:b", "(x", "*", "NEAR(a b)", "''", "", "   ", "^x"]
)
async def test_hostile_queries_do_not_raise(filled: Store, query: str) -> None:
    await filled.search(query)


async def test_quotes_and_dashes_are_plain_words(filled: Store) -> None:
    assert [h.turn_id for h in await filled.search('foo"bar')] == ["t2"]
    assert [h.turn_id for h in await filled.search("-x")] == ["t2"]
    assert await filled.search('"') == []


async def test_search_follows_updates(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.begin_turn(conversation_id=conversation_id, turn_id="t1", strategy="agent", prompt="kettle")
    assert [h.turn_id for h in await store.search("kettle")] == ["t1"]
    assert await store.search("whistles") == []
    from .helpers import plain_result

    await store.commit_turn(conversation_id, plain_result("t1", "kettle", "it whistles"), [])
    assert [h.turn_id for h in await store.search("whistles")] == ["t1"]


def test_fts_query_quotes_every_term() -> None:
    assert fts_query('foo"bar -x') == '"foo""bar"* "-x"*'
    assert fts_query(' " - ') is None
