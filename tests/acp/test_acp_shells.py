"""ACP: a background shell is an `execute` tool call that updates, and ends with the session."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block
from acp.schema import ToolCallProgress, ToolCallStart

from tests.acp.test_acp_agent import agent
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.tools.processes import process_alive, wait_until_dead
from tests.wait import wait_until


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


async def test_a_background_shell_is_an_execute_call_that_updates_and_ends_with_the_session(
    fake: FakeAnthropic, tmp_path: Path, work: Path
) -> None:
    server = "echo $$ > server.pid; while true; do echo server-up; sleep 0.1; done"
    fake.add(Reply([ToolUse("bash", {"command": server, "run_in_background": True})]), Reply("Started."))
    async with agent(fake, tmp_path) as (conn, client, _stdout):
        new = await conn.new_session(cwd=str(work), mcp_servers=[])
        client.answers.append("allow_once")  # the same approval as any bash call
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("start the server")])
        assert answer.stop_reason == "end_turn" and len(client.asked) == 1
        [start] = [u for u in client.of(ToolCallStart) if u.tool_call_id == "background-bash_1"]
        assert (start.kind, start.status) == ("execute", "in_progress")

        def printed() -> bool:
            return any(
                u.tool_call_id == "background-bash_1"
                and u.content
                and "server-up" in u.content[0].content.text
                for u in client.of(ToolCallProgress)
            )

        await wait_until(printed, what="the shell's output as an update")
        pid = int((work / "server.pid").read_text())
        assert process_alive(pid)
    assert await wait_until_dead(pid)
