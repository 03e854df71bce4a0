"""SIGKILL a real `tui-assist ask` mid-stream, again and again: nothing committed is lost."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply, Text
from tui_assist.core.conversation import Message
from tui_assist.store.db import Store

KILLS = 20
BATCH = 4  # processes cut at once, to keep the test short on 2 cores


def spawn(fake: FakeAnthropic, home: Path, work: Path, prompt: str) -> subprocess.Popen[str]:
    env = dict(
        os.environ, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake.base_url, TUI_ASSIST_HOME=str(home)
    )
    return subprocess.Popen(
        [sys.executable, "-m", "tui_assist", "ask", "--continue", "--json", "--workdir", str(work), prompt],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_sigkill_mid_stream_keeps_the_database_whole(fake: FakeAnthropic, tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    fake.add(Reply("the committed answer"))
    first = spawn(fake, home, work, "the committed prompt")
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    conversation_id = json.loads(out)["conversation_id"]

    for batch in range(KILLS // BATCH):
        replies = [Reply([Text("a long answer " * 50, deltas=40)], hold_after=6) for _ in range(BATCH)]
        fake.add(*replies)
        procs = [spawn(fake, home, work, f"cut prompt {batch}-{i}") for i in range(BATCH)]
        for reply in replies:  # every process is now mid-stream
            assert await asyncio.to_thread(reply.held.wait, 60)
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            assert proc.returncode == -signal.SIGKILL

    store = await Store.open(home)
    try:
        assert await store.integrity_check() == "ok"
        assert len(store.recovered) == BATCH  # the last batch; each earlier one was recovered by the next
        turns = await store.turns_page(conversation_id, limit=100)
        assert len(turns) == 1 + KILLS
        assert [t.outcome for t in turns] == ["answered"] + ["cancelled"] * KILLS
        assert turns[0].answer == "the committed answer"
        history = await store.load_history(conversation_id)
        assert history == [Message.user("the committed prompt"), Message.assistant("the committed answer")]
    finally:
        await store.close()
