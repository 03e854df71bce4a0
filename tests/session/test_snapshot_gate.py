"""The snapshot before a turn runs alongside the model's first request and gates only the calls
that may change files.

A real `ChatSession` (real store, the real SDK against the loopback fake, real tools and real git),
with git behind a wrapper that waits for the test to let it run: the snapshot is held up for as
long as the test wants, so what waits for it and what does not is seen, not guessed from timing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, RecordedRequest, Reply, ToolUse
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource
from tui_assist.session.rewind import apply_rewind, plan_rewind


class HeldGit:
    """`git` on the PATH that waits until `release()` before running the real git."""

    def __init__(self, folder: Path) -> None:
        real = shutil.which("git")
        assert real is not None
        folder.mkdir()
        self.flag = folder / "released"
        wrapper = folder / "git"
        wrapper.write_text(
            f'#!/bin/sh\nwhile [ ! -e "{self.flag}" ]; do sleep 0.01; done\nexec "{real}" "$@"\n'
        )
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        self.folder = folder

    def release(self) -> None:
        self.flag.touch()

    @property
    def released(self) -> bool:
        return self.flag.exists()


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldGit]:
    git = HeldGit(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{git.folder}:{os.environ.get('PATH', '')}")
    # Let git go in the end whatever happens, so a regression fails the test instead of hanging it.
    safety = threading.Timer(15, git.release)
    safety.start()
    yield git
    safety.cancel()


@pytest.fixture
async def session(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ChatSession]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("before the turn\n")
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('approval = { default = "allow" }\n')
    chat = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data"), "workdir": str(work)}))
    await chat.load()
    assert chat.provider is not None and chat.store is not None and chat.checkpoints is not None
    yield chat
    await chat.aclose()


async def test_a_read_only_turn_ends_while_its_snapshot_is_held_and_records_it_later(
    held: HeldGit, session: ChatSession, fake: FakeAnthropic
) -> None:
    # (`held` first: git is held from the session's first snapshot, its warm-up, on.)
    seen_held: list[bool] = []

    def answer(request: RecordedRequest) -> Reply:
        seen_held.append(not held.released)  # the request arrived while git was still held
        return Reply("Just an answer.")

    fake.add(answer)
    outcome = await session.run_turn("what is in notes.txt?", RecordingObserver())
    assert outcome.result.answer == "Just an answer." and outcome.saved
    # Answered and stored with git still held: a turn that changes no file never waits for it.
    assert seen_held == [True] and not held.released
    assert session.store is not None and session.checkpoints is not None
    store, data_dir = session.store, session.checkpoints.checkpoints.data_dir
    assert await store.turn_checkpoint(outcome.result.turn_id) is None
    held.release()
    # Its pair (the snapshot before it, twice: it changed nothing) is recorded once git is done.
    row = None
    for _ in range(500):
        row = await store.turn_checkpoint(outcome.result.turn_id)
        if row is not None and row.after is not None:
            break
        await asyncio.sleep(0.02)
    assert row is not None and row.after == row.before
    plan = await plan_rewind(store, data_dir, outcome.result.turn_id, "files")
    assert plan.problem is None and plan.files is not None and plan.files.is_empty


async def test_a_write_in_the_first_reply_waits_for_the_snapshot_and_rewind_restores(
    session: ChatSession, fake: FakeAnthropic, held: HeldGit, tmp_path: Path
) -> None:
    work = tmp_path / "work"

    def write(request: RecordedRequest) -> Reply:
        # Held for a while after the request: were the write not gated, it would land in the
        # snapshot meant to hold the state before the turn.
        threading.Timer(0.5, held.release).start()
        return Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "notes.txt", "file_text": "changed by the turn\n"},
                )
            ]
        )

    fake.add(write, Reply("Changed it."))
    outcome = await session.run_turn("rewrite notes.txt", RecordingObserver())
    assert outcome.result.answer == "Changed it." and outcome.saved
    assert (work / "notes.txt").read_text() == "changed by the turn\n"
    assert session.store is not None and session.checkpoints is not None
    plan = await plan_rewind(
        session.store, session.checkpoints.checkpoints.data_dir, outcome.result.turn_id, "files"
    )
    assert plan.files is not None and plan.problem is None
    await apply_rewind(session.store, session.checkpoints.checkpoints.data_dir, plan)
    assert (work / "notes.txt").read_text() == "before the turn\n"
