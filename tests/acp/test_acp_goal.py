"""`/goal` from an editor: the attempts are the plan, a check is asked about once, the end is said."""

from __future__ import annotations

import json
from pathlib import Path

from acp import text_block
from acp.schema import AgentPlanUpdate

from tests.acp.test_acp_agent import agent
from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse


async def test_goal_runs_until_its_check_passes(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake.add(
        Reply("nothing to do"),
        Reply("REVISE\n[check 1] exited 1: create it"),
        Reply([ToolUse("bash", {"command": "touch done.txt"})]),
        Reply("created it"),
        Reply("PASS\n[check 1] exited 0"),
    )
    async with agent(fake, tmp_path) as (conn, client, _stdout):
        session = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        client.answers.extend(["allow_once"] * 4)
        prompt = '/goal make done.txt exist --check "test -f done.txt"'
        answer = await conn.prompt(session_id=session, prompt=[text_block(prompt)])

    assert answer.stop_reason == "end_turn"
    assert (work / "done.txt").exists()
    assert "Goal achieved after 2 attempt(s)" in client.message()
    asked = [json.dumps(call.raw_input) for call, _options in client.asked]
    assert sum("test -f done.txt" in a for a in asked) <= 1  # approved once when the goal starts
    plan = client.of(AgentPlanUpdate)[-1]
    assert [e.content.split(":")[0] for e in plan.entries][-1].startswith("Attempt 2")
