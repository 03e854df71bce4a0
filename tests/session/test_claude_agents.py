"""A Claude Code agent file, as found on public setups, runs as written: the real SDK against the
loopback fake, which records each request (the sub-agent's model id and tools)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.session.test_hooks import open_session, opened, work, write_agent, write_config
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.chat import ChatSession

__all__ = ["opened", "work"]  # fixtures

VALIDATOR = """---
name: validator
description: >-
  Read-only validator.
  Checks the work, never changes it.
disallowedTools:
  - Write
  - Edit
model: haiku
---
You are VALIDATOR-PROMPT.
"""

SEARCHER = """---
name: searcher
description: Finds things
tools: Bash, WebFetch
model: opus
---
You search.
"""


async def test_claude_agents_get_their_model_ids_and_tools(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    write_config(tmp_path, "[tools.web]\nfetch = true\n")
    claude_agents = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "agents"
    write_agent(claude_agents / "quality", "validator", VALIDATOR)  # a subfolder of ~/.claude/agents
    write_agent(claude_agents, "searcher", SEARCHER)
    fake.add(
        Reply([ToolUse("agent", {"description": "check", "prompt": "go", "subagent_type": "validator"})]),
        Reply("fine"),
        Reply([ToolUse("agent", {"description": "look", "prompt": "go", "subagent_type": "searcher"})]),
        Reply("found"),
        Reply("done"),
    )
    session = await open_session(work, tmp_path, opened)
    await session.run_turn("validate then search", RecordingObserver())
    main, validator, _, searcher, _ = (r for r in fake.requests if r.path == "/v1/messages")
    main_tools = [t["name"] for t in main.tools]
    assert "str_replace_based_edit_tool" in main_tools
    assert validator.body["model"] == "claude-haiku-4-5"
    # `disallowedTools: Write, Edit` takes the editor's writes away; it keeps `Read` (as in Claude Code).
    assert [t["name"] for t in validator.tools] == main_tools
    assert searcher.body["model"] == "claude-opus-4-6"
    assert [t["name"] for t in searcher.tools] == ["bash", "web_fetch"]


READER = """---
name: reader
description: Reads, never writes
tools: Read, Grep
---
You read.
"""


async def test_an_agent_given_read_views_files_but_cannot_write_them(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    write_config(tmp_path, "")  # every side-effecting call is allowed: only `Read` stops the write
    write_agent(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "agents", "reader", READER)
    (work / "notes.txt").write_text("the notes\n")
    fake.add(
        Reply([ToolUse("agent", {"description": "read", "prompt": "go", "subagent_type": "reader"})]),
        Reply([ToolUse("str_replace_based_edit_tool", {"command": "view", "path": "notes.txt"})]),
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "new.txt", "file_text": "x"},
                )
            ]
        ),
        Reply("read it"),
        Reply("done"),
    )
    session = await open_session(work, tmp_path, opened)
    await session.run_turn("read the notes", RecordingObserver())
    requests = [r for r in fake.requests if r.path == "/v1/messages"]
    assert [t["name"] for t in requests[1].tools] == ["str_replace_based_edit_tool", "grep"]
    viewed, refused = (json.dumps(r.messages[-1]["content"]) for r in requests[2:4])
    assert "the notes" in viewed
    assert "may only read with str_replace_based_edit_tool" in refused
    assert not (work / "new.txt").exists()
