from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tui_assist.core.conversation import Message, Usage
from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
)
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.store import Store, StoreError, UnknownIdError

from .helpers import (
    REFINE_ANSWER,
    REFINE_PROMPT,
    commit_plain,
    plain_events,
    plain_result,
    run_agent_turn,
    run_refine,
)


def _count(path: Path, table: str, turn_id: str) -> int:
    with sqlite3.connect(path) as raw:
        return raw.execute(f"SELECT COUNT(*) FROM {table} WHERE turn_id = ?", (turn_id,)).fetchone()[0]


def _turn(path: Path, turn_id: str) -> tuple:
    """The turn row as another connection (another process) sees it: committed data only."""
    with sqlite3.connect(path) as raw:
        return raw.execute(
            "SELECT outcome, answer, rounds, tool_calls FROM turns WHERE id = ?", (turn_id,)
        ).fetchone()


async def test_begin_turn_commits_a_running_row_at_once(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.begin_turn(conversation_id=conversation_id, turn_id="t1", strategy="agent", prompt="hi")
    assert _turn(store.path, "t1") == ("running", "", 0, 0)
    assert await store.load_history(conversation_id) == []


async def test_commit_turn_writes_everything(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    run = await run_refine(store, tmp_path, conversation_id, "r1")
    assert run.result.outcome == "answered" and len(run.result.rounds) == 2
    assert _turn(store.path, "r1") == ("answered", REFINE_ANSWER, 2, 2)
    assert _count(store.path, "messages", "r1") == 2
    assert _count(store.path, "rounds", "r1") == 2
    assert _count(store.path, "tool_calls", "r1") == 2
    assert _count(store.path, "events", "r1") > 10
    assert _count(store.path, "audit", "r1") == 1

    turn = await store.get_turn("r1")
    assert turn is not None
    assert turn.usage == run.result.usage and turn.usage.input_tokens > 0
    rounds = await store.rounds("r1")
    assert [(r.index, r.verdict, r.feedback) for r in rounds] == [
        (1, "revise", "Add the numbers."),
        (2, "pass", ""),
    ]
    assert [c.call.name for c in rounds[0].evidence] == ["echo"]
    assert [c.call.name for c in rounds[1].evidence] == ["agent"]
    assert rounds[1].evidence[0].call.output == "1 2 3"
    assert list(rounds[0].transcript) == run.result.rounds[0].transcript
    assert [c.call for c in rounds[0].evidence] == run.result.rounds[0].evidence
    conversation = await store.get_conversation(conversation_id)
    assert conversation is not None and conversation.turn_count == 1


async def test_failed_commit_writes_nothing_but_the_running_row(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    prompt, answer = "please break", "broken answer"
    await store.begin_turn(conversation_id=conversation_id, turn_id="bad", strategy="agent", prompt=prompt)
    before = await store.get_conversation(conversation_id)
    result = plain_result("bad", prompt, answer)
    # rows for the turn, its history and its rounds are written before the tool calls; the
    # unserializable input makes the tool-call insert fail mid-transaction
    result.evidence.append(ToolCallRecord("n1", "p1", "echo", {"oops": object()}, "out", False, 0.1))
    with pytest.raises(TypeError):
        await store.commit_turn(conversation_id, result, plain_events("bad", answer))

    assert _turn(store.path, "bad") == ("running", "", 0, 0)
    for table in ("messages", "rounds", "tool_calls", "events", "audit"):
        assert _count(store.path, table, "bad") == 0, table
    assert await store.load_history(conversation_id) == []
    assert await store.search("broken") == []
    assert await store.get_conversation(conversation_id) == before

    # the connection is not left inside the failed transaction
    await commit_plain(store, conversation_id, "good", "next question", "fine answer")
    assert _turn(store.path, "good")[0] == "answered"
    assert [m.text for m in await store.load_history(conversation_id)] == ["next question", "fine answer"]


async def test_failed_commit_of_a_round_rolls_back_history(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.begin_turn(conversation_id=conversation_id, turn_id="bad", strategy="refine", prompt="p")
    run_conversation = await store.create_conversation(title="other", model="m", workdir="/w")
    run = await run_refine(store, tmp_path, run_conversation, "donor")
    result = run.result
    result.turn_id = "bad"
    result.rounds[-1].evidence.append(ToolCallRecord("n1", "p1", "echo", {"x": {1, 2}}, "out", False, 0.1))
    with pytest.raises(TypeError):
        await store.commit_turn(conversation_id, result, run.recorded)
    assert _turn(store.path, "bad") == ("running", "", 0, 0)
    for table in ("messages", "rounds", "tool_calls", "events", "audit"):
        assert _count(store.path, table, "bad") == 0, table


async def test_refine_history_is_only_the_clean_pair(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await run_refine(store, tmp_path, conversation_id, "r1")
    history = await store.load_history(conversation_id)
    assert history == [Message.user(REFINE_PROMPT), Message.assistant(REFINE_ANSWER)]


async def test_agent_history_keeps_the_whole_transcript(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    first = await run_agent_turn(store, tmp_path, conversation_id, "a1", "first?", "first!")
    second = await run_agent_turn(store, tmp_path, conversation_id, "a2", "second?", "second!")
    history = await store.load_history(conversation_id)
    assert history == first.result.history + second.result.history
    assert any(m.tool_uses for m in history)  # tool_use and tool_result blocks survive the round trip
    calls = await store.tool_calls("a1")
    assert [(c.call.name, c.call.input, c.call.output, c.round_index) for c in calls] == [
        ("echo", {"text": "first?"}, "echo: first?", None)
    ]


async def test_error_outcome_adds_no_history(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.begin_turn(conversation_id=conversation_id, turn_id="e1", strategy="agent", prompt="p")
    result = plain_result("e1", "p", "")
    result.outcome, result.history, result.error = "error", [], "provider failed"
    await store.commit_turn(conversation_id, result, [])
    turn = await store.get_turn("e1")
    assert turn is not None and turn.outcome == "error" and turn.error == "provider failed"
    assert await store.load_history(conversation_id) == []


async def test_mark_cancelled_keeps_events_and_adds_no_history(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.begin_turn(conversation_id=conversation_id, turn_id="c1", strategy="refine", prompt="p")
    events = [
        NodeStarted(node_id="c1", parent_id=None, node_kind="turn", label="refine turn"),
        NodeStarted(node_id="r", parent_id="c1", node_kind="round", label="round 1"),
        NodeStarted(node_id="g", parent_id="r", node_kind="generate", label="generate"),
        UsageRecorded(node_id="g", usage=Usage(7, 3)),
        ToolCallStarted(node_id="t", parent_id="g", call_id="x", name="echo", input={"text": "a"}),
        ToolCallFinished(node_id="t", call_id="x", name="echo", output="cancelled", is_error=True),
        NodeFinished(node_id="g", status="cancelled", outcome="cancelled"),
        NodeFinished(node_id="r", status="cancelled", outcome="cancelled"),
        NodeFinished(node_id="c1", status="cancelled", outcome="cancelled"),
    ]
    await store.mark_cancelled("c1", events)
    await store.mark_cancelled("c1", events)  # idempotent
    turn = await store.get_turn("c1")
    assert turn is not None
    assert (turn.outcome, turn.usage, turn.rounds, turn.tool_calls) == ("cancelled", Usage(7, 3), 1, 1)
    assert await store.turn_events("c1") == events
    calls = await store.tool_calls("c1")
    assert [(c.call.name, c.round_index, c.call.is_error) for c in calls] == [("echo", 1, True)]
    assert await store.load_history(conversation_id) == []
    assert [line.outcome for line in await store.audit_lines()] == ["cancelled"]
    with pytest.raises(StoreError):
        await store.commit_turn(conversation_id, plain_result("c1", "p", "late"), [])


async def test_unknown_ids_and_double_commit_are_refused(store: Store) -> None:
    with pytest.raises(UnknownIdError):
        await store.begin_turn(conversation_id="nope", turn_id="t", strategy="agent", prompt="p")
    with pytest.raises(UnknownIdError):
        await store.mark_cancelled("nope", [])
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await commit_plain(store, conversation_id, "t1", "p", "a")
    with pytest.raises(StoreError):
        await store.commit_turn(conversation_id, plain_result("t1", "p", "a"), [])
    with pytest.raises(StoreError):
        await store.begin_turn(conversation_id=conversation_id, turn_id="t1", strategy="agent", prompt="p")
    assert len(await store.load_history(conversation_id)) == 2


async def test_commit_without_begin_inserts_the_turn(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.commit_turn(conversation_id, plain_result("t1", "p", "a"), [])
    turn = await store.get_turn("t1")
    assert turn is not None and (turn.seq, turn.outcome, turn.prompt) == (1, "answered", "p")


async def test_latest_conversation_and_listing(store: Store) -> None:
    assert await store.latest_conversation_id() is None
    a = await store.create_conversation(title="Alpha talk", model="m", workdir="/w")
    b = await store.create_conversation(title="Beta talk", model="m", workdir="/w")
    assert await store.latest_conversation_id() == b
    await commit_plain(store, a, "t1", "p", "x")
    assert await store.latest_conversation_id() == a
    assert [c.id for c in await store.list_conversations()] == [a, b]
    assert [c.id for c in await store.list_conversations(query="beta")] == [b]
    assert [c.id for c in await store.list_conversations(limit=1, offset=1)] == [b]
    assert await store.list_conversations(query="100%_") == []
    assert await store.resolve_conversation_id(a) == a
    assert await store.resolve_conversation_id(a[:8]) == a
    with pytest.raises(UnknownIdError):
        await store.resolve_conversation_id("zzzz-not-an-id")


async def test_a_turn_id_resolves_from_itself_or_its_unique_prefix(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    for turn_id in ("ab", "abc", "abd", "x_y"):
        await commit_plain(store, conversation_id, turn_id, "p", "a")
    assert await store.resolve_turn_id("ab") == "ab"  # exact, though "abc" and "abd" start with it
    assert await store.resolve_turn_id("abc") == "abc"
    assert await store.resolve_turn_id("x_") == "x_y"
    for text, error in (
        ("a", "more than one turn id starts with 'a'"),
        ("zz", "no turn with id 'zz'"),
        ("", "no turn with id ''"),
        ("x%", "no turn with id 'x%'"),  # a LIKE wildcard matches only itself
    ):
        with pytest.raises(UnknownIdError, match=error):
            await store.resolve_turn_id(text)


async def test_turns_page_walks_a_conversation_in_pages(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    for i in range(1, 26):
        await commit_plain(store, conversation_id, f"t{i}", f"prompt {i}", f"answer {i}")
    tail = await store.turns_page(conversation_id, limit=10)
    assert [t.seq for t in tail] == list(range(16, 26))
    back = await store.turns_page(conversation_id, limit=10, before_seq=tail[0].seq)
    assert [t.seq for t in back] == list(range(6, 16))
    forward = await store.turns_page(conversation_id, limit=10, after_seq=20)
    assert [t.seq for t in forward] == list(range(21, 26))
    page = await store.turns_page(conversation_id, limit=3, offset=4)
    assert [t.prompt for t in page] == ["prompt 5", "prompt 6", "prompt 7"]
    with pytest.raises(ValueError):
        await store.turns_page(conversation_id, before_seq=3, offset=1)


async def test_events_of_reads_a_page_of_turns_events_in_one_go(store: Store) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    logs: dict[str, list[TurnEvent]] = {}
    for turn_id in ("a", "b", "c"):
        await store.begin_turn(conversation_id=conversation_id, turn_id=turn_id, strategy="agent", prompt="p")
        logs[turn_id] = [
            NodeStarted(node_id=turn_id, parent_id=None, node_kind="turn", label="agent turn"),
            NodeFinished(node_id=turn_id, status="cancelled", outcome="cancelled"),
        ]
        await store.mark_cancelled(turn_id, logs[turn_id])
    page = await store.events_of(["c", "a", "nothing-stored"])
    assert page == {"c": logs["c"], "a": logs["a"], "nothing-stored": []}
    assert await store.events_of([]) == {}


async def test_messages_of_reads_a_page_of_turns_messages_in_one_go(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    first = await run_agent_turn(store, tmp_path, conversation_id, "a1", "first?", "first!")
    second = await run_agent_turn(store, tmp_path, conversation_id, "a2", "second?", "second!")
    page = await store.messages_of(["a2", "a1", "nothing-stored"])
    assert page == {"a2": second.result.history, "a1": first.result.history, "nothing-stored": []}
    users = await store.messages_of(["a1"], role="user")
    assert users == {"a1": [m for m in first.result.history if m.role == "user"]}
    assert users["a1"][0].text == "first?"
    assert await store.messages_of([]) == {}
