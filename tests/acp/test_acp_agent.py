"""`tui-assist acp` as an editor drives it: the ACP SDK's own client, a real subprocess, the real
Anthropic SDK against the loopback fake, a real store."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sqlite3
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    DeniedOutcome,
    FileEditToolCallContent,
    McpServerStdio,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse
from tests.ui import long_conversation
from tests.wait import wait_until

EDITOR = "str_replace_based_edit_tool"
MCP_SERVER = str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")


class EditorClient:
    """An ACP client that records every update and answers permission requests from a script."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.answers: deque[str | None] = deque()
        """Per permission request: the option kind to choose, or None to cancel it."""
        self.asked: list[Any] = []

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        self.asked.append((tool_call, options))
        kind = self.answers.popleft()
        if kind is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        option = next(o for o in options if o.kind == kind)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=option.option_id, outcome="selected")
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def message(self) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@asynccontextmanager
async def agent(
    fake: FakeAnthropic, tmp_path: Path, *flags: str
) -> AsyncIterator[tuple[Any, EditorClient, Path]]:
    """`tui-assist acp` spawned by the ACP client; yields the connection, the client, and the file
    its stdout was copied to (every line the client read)."""
    client = EditorClient()
    stdout_copy = tmp_path / "acp-stdout.jsonl"
    command = " ".join(shlex.quote(word) for word in [sys.executable, "-m", "tui_assist", "acp", *flags])
    env = dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    async with spawn_agent_process(
        client, "sh", "-c", f"{command} | tee {shlex.quote(str(stdout_copy))}", env=env
    ) as (conn, _process):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.protocol_version == 1
        yield conn, client, stdout_copy


def only_json_rpc(stdout_copy: Path) -> None:
    lines = stdout_copy.read_text().splitlines()
    assert lines
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line


async def test_initialize_new_and_a_streamed_answer(fake: FakeAnthropic, tmp_path: Path, work: Path) -> None:
    commands = work / ".tui-assist" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text("# Greet someone\nSay hello to $ARGUMENTS.\n")
    fake.add(
        Reply([Text("Hello from the agent, streamed in pieces.", deltas=5)]),
        Reply("draft one"),
        Reply("REVISE\nsay two"),
        Reply("draft two"),
        Reply("**PASS**"),
    )
    async with agent(fake, tmp_path) as (conn, client, stdout_copy):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        caps = init.agent_capabilities
        assert init.agent_info is not None and init.agent_info.name == "tui-assist"
        assert caps is not None and caps.load_session
        assert caps.prompt_capabilities is not None
        assert caps.prompt_capabilities.image and caps.prompt_capabilities.embedded_context

        # The editor's own stdio MCP server joins the toolbox.
        server = McpServerStdio(name="testsrv", command=sys.executable, args=[MCP_SERVER], env=[])
        new = await conn.new_session(cwd=str(work), mcp_servers=[server])
        assert new.modes is not None and new.modes.current_mode_id == "default"
        assert [m.id for m in new.modes.available_modes] == ["default", "accept-edits", "plan", "bypass"]
        assert new.config_options is not None
        refine = new.config_options[0]
        assert (refine.id, refine.current_value) == ("refine", "off")
        assert {o.value for o in refine.options} == {"off", "on"}

        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("say hello")])
        assert answer.stop_reason == "end_turn"
        assert any("testsrv" in tool["name"] and "echo" in tool["name"] for tool in fake.requests[0].tools)
        chunks = client.of(AgentMessageChunk)
        assert len(chunks) >= 3
        assert client.message() == "Hello from the agent, streamed in pieces."
        announced = client.of(AvailableCommandsUpdate)
        assert announced and {"refine", "rounds", "cost", "compact", "greet"} <= {
            c.name for c in announced[0].available_commands
        }

        # A headless command answers as the agent's message, without a model call.
        before = len(fake.requests)
        cost = await conn.prompt(session_id=new.session_id, prompt=[text_block("/cost")])
        assert cost.stop_reason == "end_turn" and "Cost of this session" in client.message()
        assert len(fake.requests) == before

        # Refine on: the rounds are the plan, the critic's reply a thought, the last draft ends
        # the message.
        options = await conn.set_config_option(config_id="refine", session_id=new.session_id, value="on")
        assert options is not None
        client.updates.clear()
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("count")])
        assert answer.stop_reason == "end_turn"
        plan = client.of(AgentPlanUpdate)[-1]
        assert [(e.content, e.status) for e in plan.entries] == [
            ("Round 1: generate", "completed"),
            ("Round 1: critic REVISE: say two", "completed"),
            ("Round 2: generate", "completed"),
            ("Round 2: critic PASS", "completed"),
        ]
        assert client.message().startswith("draft one") and client.message().endswith("draft two")
        assert client.of(AgentThoughtChunk), "the critic's reply is a thought"

        # `/refine off` as a prompt: the command's reply, and the option moves in the editor.
        off = await conn.prompt(session_id=new.session_id, prompt=[text_block("/refine off")])
        assert off.stop_reason == "end_turn" and client.message().endswith("Refine OFF (≤3 rounds)")
        [moved] = client.of(ConfigOptionUpdate)
        assert moved.config_options[0].current_value == "off"
    only_json_rpc(stdout_copy)

    # The session is the stored conversation, as `history list` shows it.
    listed = subprocess.run(
        [sys.executable, "-m", "tui_assist", "history", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    rows = json.loads(listed.stdout)
    assert [row["id"] for row in rows] == [new.session_id]
    assert rows[0]["title"] == "say hello"


async def test_bash_permission_reject_then_allow_and_an_edit_diff(
    fake: FakeAnthropic, tmp_path: Path, work: Path
) -> None:
    (work / "notes.txt").write_text("alpha\nbeta\n")
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    # Unsandboxed, so every bash call is put to the editor (a sandboxed one would run unasked).
    config.write_text('sandbox = "off"\n[permissions]\ndeny = ["bash(rm *)"]\n')
    fake.add(
        Reply([ToolUse("bash", {"command": "touch rejected.txt"})]),
        Reply("It was not allowed."),
        Reply([ToolUse("bash", {"command": "echo made > allowed.txt && echo done"})]),
        Reply("Made it."),
        Reply(
            [
                ToolUse(
                    EDITOR,
                    {"command": "str_replace", "path": "notes.txt", "old_str": "beta", "new_str": "gamma"},
                )
            ]
        ),
        Reply("Edited."),
        Reply([ToolUse("bash", {"command": "touch planned.txt"})]),
        Reply("Here is my plan."),
        Reply([ToolUse("bash", {"command": "rm notes.txt"})]),
        Reply("It was denied."),
    )
    async with agent(fake, tmp_path) as (conn, client, stdout_copy):
        session = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id

        client.answers.append("reject_once")
        rejected = await conn.prompt(session_id=session, prompt=[text_block("touch it")])
        assert rejected.stop_reason == "end_turn"
        assert not (work / "rejected.txt").exists()
        call, options = client.asked[0]
        assert {o.kind for o in options} >= {"allow_once", "allow_always", "reject_once"}
        assert call.kind == "execute" and "touch rejected.txt" in call.title

        # Always allow: the proposed rule is saved to the project's settings, as `p` does.
        client.answers.append("allow_always")
        allowed = await conn.prompt(session_id=session, prompt=[text_block("make it")])
        assert allowed.stop_reason == "end_turn"
        assert (work / "allowed.txt").read_text() == "made\n"
        rules = (work / ".tui-assist" / "settings.toml").read_text()
        assert "bash(" in rules, rules
        starts = client.of(ToolCallStart)
        ends = client.of(ToolCallProgress)
        assert [s.kind for s in starts] == ["execute", "execute"]
        assert [e.status for e in ends] == ["failed", "completed"]
        assert ends[1].tool_call_id == starts[1].tool_call_id
        assert "done" in ends[1].content[0].content.text

        client.answers.append("allow_once")
        edited = await conn.prompt(session_id=session, prompt=[text_block("edit it")])
        assert edited.stop_reason == "end_turn"
        start, end = client.of(ToolCallStart)[-1], client.of(ToolCallProgress)[-1]
        assert start.kind == "edit"
        diff = end.content[0]
        assert isinstance(diff, FileEditToolCallContent)
        assert diff.path == str((work / "notes.txt").resolve()) and Path(diff.path).is_absolute()
        assert (diff.old_text, diff.new_text) == ("alpha\nbeta\n", "alpha\ngamma\n")
        asked_diff = client.asked[-1][0].content[0]
        assert (asked_diff.old_text, asked_diff.new_text) == ("alpha\nbeta\n", "alpha\ngamma\n")

        # Plan mode is decided by the agent: the client is not asked, and nothing runs.
        await conn.set_session_mode(session_id=session, mode_id="plan")
        client.answers.append("allow_once")
        planned = await conn.prompt(session_id=session, prompt=[text_block("do it")])
        assert planned.stop_reason == "end_turn"
        assert len(client.asked) == 3 and not (work / "planned.txt").exists()
        assert client.of(ToolCallProgress)[-1].status == "failed"

        # So is a deny rule, in any mode.
        await conn.set_session_mode(session_id=session, mode_id="bypass")
        denied = await conn.prompt(session_id=session, prompt=[text_block("remove it")])
        assert denied.stop_reason == "end_turn"
        assert len(client.asked) == 3 and (work / "notes.txt").exists()
        assert "deny rule" in client.of(ToolCallProgress)[-1].content[0].content.text
    only_json_rpc(stdout_copy)


async def test_cancel_mid_stream_a_cancelled_permission_and_a_spent_budget(
    fake: FakeAnthropic, tmp_path: Path, work: Path
) -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    # A turn's second model call runs out of budget; unsandboxed, the bash call asks the editor.
    config.write_text('sandbox = "off"\nmax_model_requests = 1\n')
    slow = Reply([Text("Partial answer that never finishes", deltas=6)], hold_after=5)
    fake.add(
        slow,
        Reply([ToolUse("bash", {"command": "touch never.txt"})]),
        Reply([ToolUse("bash", {"command": "echo one call"})]),
    )
    async with agent(fake, tmp_path) as (conn, client, _):
        session = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        pending = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text_block("go slowly")]))
        await wait_until(lambda: client.of(AgentMessageChunk), what="the stream began")
        await conn.cancel(session_id=session)
        answer = await asyncio.wait_for(pending, 20)
        assert answer.stop_reason == "cancelled"
        slow.release()

        # A permission request the client cancels stops the turn the same way.
        client.answers.append(None)
        stopped = await conn.prompt(session_id=session, prompt=[text_block("touch it")])
        assert stopped.stop_reason == "cancelled" and client.asked
        assert not (work / "never.txt").exists()

        # A budget that runs out ends the prompt with max_turn_requests.
        client.answers.append("allow_once")
        exhausted = await conn.prompt(session_id=session, prompt=[text_block("one call only")])
        assert exhausted.stop_reason == "max_turn_requests"
    database = sqlite3.connect(tmp_path / "data" / "tui_assist.db")
    outcomes = database.execute("SELECT outcome FROM turns ORDER BY rowid").fetchall()
    assert outcomes == [("cancelled",), ("cancelled",), ("budget_exhausted",)]


async def test_load_replays_a_long_conversation_whole_oldest_first(
    fake: FakeAnthropic, tmp_path: Path, work: Path
) -> None:
    conversation = await long_conversation.seed(tmp_path / "data", work, 30)
    async with agent(fake, tmp_path) as (conn, client, _):
        await conn.load_session(session_id=conversation, cwd=str(work), mcp_servers=[])
        # Everything is sent before the load answers: the first prompt and its answer too.
        assert [u.content.text for u in client.of(UserMessageChunk)] == [
            f"prompt {i}: how do I do step {i}?" for i in range(30)
        ]
        assert [u.content.text for u in client.of(AgentMessageChunk)] == [
            long_conversation.answer(i) for i in range(30)
        ]
        assert [s.title for s in client.of(ToolCallStart)] == [f"ls step{i}" for i in range(4, 30, 5)]


async def test_load_replays_an_ask_conversation(fake: FakeAnthropic, tmp_path: Path, work: Path) -> None:
    fake.add(
        Reply([ToolUse("bash", {"command": "echo from-ask"})]), Reply("The ask answer."), Reply("Follow-up.")
    )
    env = dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_assist",
            "ask",
            "--json",
            "--yes",
            "--workdir",
            str(work),
            "the ask prompt",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    conversation = json.loads(made.stdout)["conversation_id"]
    async with agent(fake, tmp_path) as (conn, client, _):
        loaded = await conn.load_session(session_id=conversation, cwd=str(work), mcp_servers=[])
        assert loaded is not None and loaded.modes is not None
        users = [u.content.text for u in client.of(UserMessageChunk)]
        assert users == ["the ask prompt"]
        assert client.message() == "The ask answer."
        assert [s.kind for s in client.of(ToolCallStart)] == ["execute"]
        assert "from-ask" in client.of(ToolCallProgress)[0].content[0].content.text
        # The loaded conversation goes on: its history is sent with the next prompt.
        answer = await conn.prompt(session_id=conversation, prompt=[text_block("and then?")])
        assert answer.stop_reason == "end_turn"
        assert "the ask prompt" in fake.requests[-1].all_text()


async def test_a_cancel_before_the_turn_started_ends_the_prompt_and_the_next_one_runs(tmp_path: Path) -> None:
    """The ACP host's own cancel, with the turn handed over but not started yet: the prompt answers
    `cancelled` at once, nothing is sent, and the session runs the next prompt."""
    from tests.launchers import HeldLauncher
    from tui_assist.acp.agent import TuiAssistAgent
    from tui_assist.core.conversation import TextBlock
    from tui_assist.providers.scripted import ScriptedProvider
    from tui_assist.session.chat import ChatSession
    from tui_assist.session.config import Settings

    settings = Settings(provider="scripted", workdir=tmp_path)
    provider = ScriptedProvider([[TextBlock("The next one.")]])
    chat = ChatSession(settings, provider_factory=lambda: provider, use_store=False)
    await chat.load()
    client = EditorClient()
    editor_agent = TuiAssistAgent(settings)
    editor_agent.on_connect(client)  # type: ignore[arg-type]
    session = editor_agent._add("s1", chat)
    held = HeldLauncher()
    session.controller.launcher = held
    try:
        prompting = asyncio.ensure_future(editor_agent.prompt([text_block("never sent")], "s1"))
        await wait_until(lambda: held.held, what="the run handed to the launcher")
        await editor_agent.cancel("s1")
        response = await asyncio.wait_for(prompting, 5)
        assert response.stop_reason == "cancelled"
        assert not session.controller.running
        held.release()
        await held.finished()
        assert not provider.requests

        session.controller.launcher = held.start
        response = await editor_agent.prompt([text_block("the next one")], "s1")
        assert response.stop_reason == "end_turn" and client.message() == "The next one."

        # An unknown `/name` gets the line every host says; nothing is sent.
        await editor_agent.prompt([text_block("/modle opus")], "s1")
        assert client.message().endswith(
            "unknown command /modle: did you mean /model? (/help lists the commands)"
        )
        assert len(provider.requests) == 1
    finally:
        await editor_agent.aclose()


async def test_a_loaded_session_goes_on_with_its_last_turns_model(
    fake: FakeAnthropic, tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.ui.test_model_resume_ui import HAIKU, switched_conversation

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # for the session that stores it here
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    fake.add(Reply("one"), Reply("two"), Reply("three"))
    conversation = await switched_conversation(work)
    async with agent(fake, tmp_path) as (conn, _client, _):
        await conn.load_session(session_id=conversation, cwd=str(work), mcp_servers=[])
        answer = await conn.prompt(session_id=conversation, prompt=[text_block("and then?")])
        assert answer.stop_reason == "end_turn"
    assert [r.body["model"] for r in fake.requests] == ["claude-sonnet-4-6", HAIKU, HAIKU]
