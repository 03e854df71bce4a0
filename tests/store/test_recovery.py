from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui_assist.core.conversation import Message
from tui_assist.store import Store

from .helpers import commit_plain

ROOT = Path(__file__).resolve().parents[2]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")


@posix_only
async def test_killed_processes_running_turns_are_cancelled_on_next_open(data_dir: Path) -> None:
    conversations: list[str] = []
    for i in range(5):  # each run recovers the turn the previous run's SIGKILL cut
        proc = subprocess.run(
            [sys.executable, "-m", "tests.store.worker_process", "crash", str(data_dir), str(i)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == -9, proc.stderr
        report = json.loads(proc.stdout)
        assert report["recovered"] == ([] if i == 0 else [f"{i - 1}cut"])
        conversations.append(report["conversation_id"])

    store = await Store.open(data_dir)
    try:
        assert store.recovered == ["4cut"]
        assert await store.integrity_check() == "ok"
        for i, conversation_id in enumerate(conversations):
            cut, done = await store.get_turn(f"{i}cut"), await store.get_turn(f"{i}done")
            assert cut is not None and cut.outcome == "cancelled" and cut.error
            assert done is not None and done.outcome == "answered" and done.answer == "kept"
            assert await store.load_history(conversation_id) == [
                Message.user("first"),
                Message.assistant("kept"),
            ]
        outcomes = sorted((a.turn_id, a.outcome) for a in await store.audit_lines())
        expected = [(f"{i}cut", "cancelled") for i in range(5)] + [(f"{i}done", "answered") for i in range(5)]
        assert outcomes == sorted(expected)
    finally:
        await store.close()
    again = await Store.open(data_dir)  # recovery happens once
    try:
        assert again.recovered == []
        assert len(await again.audit_lines()) == 10
    finally:
        await again.close()


async def test_a_live_instance_running_turn_is_left_alone(data_dir: Path) -> None:
    first = await Store.open(data_dir)
    try:
        conversation_id = await first.create_conversation(title="t", model="m", workdir="/w")
        await first.begin_turn(conversation_id=conversation_id, turn_id="live", strategy="agent", prompt="p")
        second = await Store.open(data_dir)  # e.g. a second terminal starting meanwhile
        try:
            assert second.recovered == []
            turn = await second.get_turn("live")
            assert turn is not None and turn.outcome == "running"
            assert await second.load_history(conversation_id) == []
        finally:
            await second.close()
        turn = await first.get_turn("live")
        assert turn is not None and turn.outcome == "running"
    finally:
        await first.close()  # closing the owner cancels what it left unfinished
    store = await Store.open(data_dir)
    try:
        turn = await store.get_turn("live")
        assert turn is not None and turn.outcome == "cancelled"
    finally:
        await store.close()


async def test_committed_turns_survive_reopen(data_dir: Path) -> None:
    store = await Store.open(data_dir)
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await commit_plain(store, conversation_id, "t1", "p", "a")
    await store.close()
    store = await Store.open(data_dir)
    try:
        assert store.recovered == []
        assert await store.load_history(conversation_id) == [Message.user("p"), Message.assistant("a")]
    finally:
        await store.close()


async def test_close_is_idempotent_and_releases_the_instance_lock(data_dir: Path) -> None:
    store = await Store.open(data_dir)
    await store.close()
    await store.close()
    assert list((data_dir / "locks").iterdir()) == []
