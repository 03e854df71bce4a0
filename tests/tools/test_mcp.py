"""MCP tools against a real MCP server (tests/fakes/mcp_server.py) spawned over stdio."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Literal

import pydantic
import pytest

from tests.fakes.mcp_http import serving
from tests.wait import wait_until
from tui_assist.core.approval import ApprovalPolicy, FallbackAction
from tui_assist.core.conversation import Conversation, TextBlock, ToolUseBlock
from tui_assist.core.events import ToolCallFinished, ToolCallStarted
from tui_assist.core.observer import ApprovalDecision, RecordingObserver
from tui_assist.core.tooling import ToolContext, ToolInputError
from tui_assist.core.turn import TurnDeps, TurnResult
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.tools.mcp import McpManager, McpServerConfig, McpTool, format_status, qualified_name
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.agent import AgentTurn

SERVER = str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")


def stdio(*extra: str, **options: Any) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[SERVER, *extra], **options)


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[McpManager]:
    async with McpManager({"testsrv": stdio()}, cwd=tmp_path, log_dir=tmp_path / "logs") as m:
        await m.start()
        yield m


_ids = itertools.count(1)


def use(name: str, **args: Any) -> list[ToolUseBlock]:
    return [ToolUseBlock(f"toolu_{next(_ids)}", name, args)]


async def run_turn(
    manager: McpManager,
    workdir: Path,
    script: list[Any],
    *,
    policy: FallbackAction = "allow",
    decision: ApprovalDecision | None = None,
) -> tuple[TurnResult, RecordingObserver, ScriptedProvider]:
    provider = ScriptedProvider(script)
    deps = TurnDeps(
        provider,
        toolbox_factory(workdir, bash_timeout=5, extra_tools=manager.current_tools),
        approvals=ApprovalPolicy(policy),
    )
    observer = RecordingObserver(decision=decision or ApprovalDecision.allow_once())
    result = await AgentTurn(deps).run(Conversation(), "use the MCP tools", observer)
    return result, observer, provider


def outputs(result: TurnResult) -> list[tuple[str, str, bool]]:
    return [(r.name, r.output, r.is_error) for r in result.evidence]


async def _no_subagents(description: str, prompt: str) -> str:
    raise AssertionError("no sub-agents here")


def tool(manager: McpManager, name: str) -> McpTool:
    found = [t for t in manager.current_tools() if t.spec.name == name]
    assert found, f"{name} not offered"
    assert isinstance(found[0], McpTool)
    return found[0]


async def call(manager: McpManager, name: str, tmp_path: Path, **args: Any) -> tuple[str, bool]:
    t = tool(manager, name)
    out = await t.run(t.parse(args), ToolContext(workdir=tmp_path, node_id="n", run_subagent=_no_subagents))
    return out.content, out.is_error


# --------------------------------------------------------------------------- through a full agent turn


async def test_agent_turn_calls_mcp_tools_by_qualified_name(manager: McpManager, tmp_path: Path) -> None:
    result, observer, provider = await run_turn(
        manager,
        tmp_path,
        [
            [TextBlock("Adding."), *use("testsrv__add", a=2, b=3)],
            use("testsrv__echo", text="hi"),
            use("testsrv__fail"),
            use("testsrv__shout_loud", text="quiet"),
            "2 + 3 = 5",
        ],
    )

    assert (result.outcome, result.answer) == ("answered", "2 + 3 = 5")
    assert outputs(result) == [
        ("testsrv__add", "5", False),
        ("testsrv__echo", "echo: hi", False),
        ("testsrv__fail", "Error executing tool fail", True),
        ("testsrv__shout_loud", "QUIET", False),
    ]
    offered = {spec.name: spec for spec in provider.requests[0].tools}
    assert {"bash", "str_replace_based_edit_tool", "agent", "testsrv__add", "testsrv__shout_loud"} <= set(
        offered
    )
    add = offered["testsrv__add"]
    assert add.input_schema["required"] == ["a", "b"] and add.native_type is None
    assert "Add two integers." in add.description and "'testsrv'" in add.description
    started = [e for e in observer.events if isinstance(e, ToolCallStarted)]
    finished = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert [e.name for e in started] == [e.name for e in finished] == [n for n, _, _ in outputs(result)]
    # The turn closed its toolbox; the shared server is still up for the next turn.
    assert manager.status()[0].state == "ready"
    assert await call(manager, "testsrv__echo", tmp_path, text="again") == ("echo: again", False)


async def test_untrusted_tools_pass_the_approval_policy(tmp_path: Path) -> None:
    servers = {"plain": stdio(), "trusted": stdio(trusted=True)}
    async with McpManager(servers, cwd=tmp_path) as manager:
        await manager.start()
        result, observer, _ = await run_turn(
            manager,
            tmp_path,
            [use("plain__echo", text="a"), use("trusted__echo", text="b"), "done"],
            policy="ask",
            decision=ApprovalDecision.deny(),
        )

    assert [a.tool for a in observer.approvals] == ["plain__echo"]
    assert observer.approvals[0].summary == 'MCP plain: echo {"text": "a"}'
    (_, denied, denied_error), (_, ran, ran_error) = outputs(result)
    assert denied_error and denied.startswith("Denied: the user did not approve this plain__echo call")
    assert (ran, ran_error) == ("echo: b", False)


async def test_server_crashing_mid_call_is_restarted_once(manager: McpManager, tmp_path: Path) -> None:
    result, _, _ = await run_turn(
        manager,
        tmp_path,
        [
            use("testsrv__pid"),
            use("testsrv__crash"),
            use("testsrv__pid"),
            use("testsrv__counter"),
            use("testsrv__crash"),
            use("testsrv__echo", text="still there?"),
            "the server is gone",
        ],
    )

    assert result.outcome == "answered"  # the turn survives
    (_, pid1, _), crash1, (_, pid2, e2), counter, crash2, gone = outputs(result)
    assert crash1[2] and "stopped during the call to crash (connection closed)" in crash1[1]
    assert "it will be restarted for the next call" in crash1[1]
    assert not e2 and pid2 != pid1  # a new process answered
    assert counter[1:] == ("1", False)  # fresh state in the restarted server
    assert crash2[2] and "will not be restarted again" in crash2[1]
    assert gone[2] and gone[1].startswith("MCP server 'testsrv' is unavailable: ")
    status = manager.status()[0]
    assert (status.state, status.restarts) == ("failed", 1)
    assert status.tools  # still listed, so the model can see why calls fail


async def test_slow_tool_hits_the_timeout_and_the_server_stays_up(tmp_path: Path) -> None:
    async with McpManager({"testsrv": stdio(timeout=0.5)}, cwd=tmp_path) as manager:
        await manager.start()
        started = time.monotonic()
        result, _, _ = await run_turn(
            manager, tmp_path, [use("testsrv__slow", seconds=10), use("testsrv__echo", text="after"), "ok"]
        )
        elapsed = time.monotonic() - started

    (_, slow, slow_error), after = outputs(result)
    assert slow_error and slow.startswith("MCP tool slow on 'testsrv' timed out after 0.5 s")
    assert after == ("testsrv__echo", "echo: after", False)
    assert elapsed < 9  # a hang guard: the timeout cut the call short of the tool's 10 s
    assert result.outcome == "answered"


async def test_servers_that_fail_to_start_offer_no_tools_and_the_turn_completes(tmp_path: Path) -> None:
    servers = {
        "missing": McpServerConfig(command=str(tmp_path / "no-such-server")),
        "exits": stdio("--fail-start"),
        "hangs": stdio("--hang-start", startup_timeout=0.5),
        "ok": stdio(),
    }
    async with McpManager(servers, cwd=tmp_path) as manager:
        await manager.start()  # never raises
        states = {s.name: s for s in manager.status()}
        result, _, _ = await run_turn(
            manager, tmp_path, [use("exits__echo", text="x"), use("ok__echo", text="y"), "done anyway"]
        )

    assert states["missing"].state == "failed" and "command not found" in (states["missing"].error or "")
    assert states["exits"].state == "failed"
    assert "stderr: fatal: missing TESTSRV_TOKEN" in (states["exits"].error or "")
    assert (states["hangs"].state, states["hangs"].error) == ("failed", "did not start within 0.5 s")
    assert (states["ok"].state, states["missing"].tools, states["exits"].tools) == ("ready", (), ())
    assert result.outcome == "answered" and result.answer == "done anyway"
    (_, unknown, unknown_error), ok = outputs(result)
    assert unknown_error and unknown.startswith("Unknown tool 'exits__echo'")
    assert ok == ("ok__echo", "echo: y", False)


# --------------------------------------------------------------------------- manager behaviour


async def test_nothing_starts_before_start_and_start_is_idempotent(tmp_path: Path) -> None:
    async with McpManager({"testsrv": stdio(), "off": stdio(disabled=True)}, cwd=tmp_path) as manager:
        assert [s.state for s in manager.status()] == ["idle", "disabled"]
        assert manager.current_tools() == []
        factory = toolbox_factory(tmp_path, extra_tools=manager.current_tools)
        before = [t.spec.name for t in factory().tools]

        await asyncio.gather(manager.start(), manager.start())  # the second waits for the first
        assert "testsrv__echo" in [t.spec.name for t in manager.current_tools()]
        pid = (await call(manager, "testsrv__pid", tmp_path))[0]
        await manager.start()

        after = [t.spec.name for t in factory().tools]
        assert before == ["bash", "str_replace_based_edit_tool", "glob", "grep", "agent", "todo_write"]
        assert after[:6] == before and "testsrv__echo" in after
        assert (await call(manager, "testsrv__pid", tmp_path))[0] == pid  # same process
        assert [s.state for s in manager.status()] == ["ready", "disabled"]
    assert [s.state for s in manager.status()] == ["stopped", "disabled"]
    content, is_error = await tool_after_close(manager, tmp_path)
    assert is_error and content == "MCP server 'testsrv' is unavailable: the session is closing"


async def tool_after_close(manager: McpManager, tmp_path: Path) -> tuple[str, bool]:
    server = manager._servers["testsrv"]
    out = await server.call("echo", {"text": "late"})
    return out.content, out.is_error


async def test_explicit_restart_brings_a_failed_server_back(manager: McpManager, tmp_path: Path) -> None:
    for _ in range(2):
        await call(manager, "testsrv__crash", tmp_path)
        await call(manager, "testsrv__echo", tmp_path, text="x")
    assert manager.status()[0].state == "failed"

    status = await manager.restart("testsrv")

    assert status.state == "ready" and status.error is None
    assert await call(manager, "testsrv__echo", tmp_path, text="back") == ("echo: back", False)


async def test_status_lines_and_input_checks(manager: McpManager) -> None:
    lines = format_status(manager.status())
    add = tool(manager, "testsrv__add")

    assert lines[0] == "testsrv: ready (stdio), 10 tools"
    assert lines[1].endswith("mcp_server.py")
    assert "  - testsrv__shout_loud" in lines
    assert format_status([]) == ["no MCP servers configured"]
    with pytest.raises(ToolInputError, match="missing b"):
        add.parse({"a": 1})
    assert add.side_effecting({}) is True
    assert add.summary({"a": 1, "b": 2}) == 'MCP testsrv: add {"a": 1, "b": 2}'


def test_results_become_text_for_the_model() -> None:
    from mcp_types import (
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    from tui_assist.tools.mcp.sdk import to_output as _to_output

    mixed = CallToolResult(
        content=[
            TextContent(text="first"),
            ImageContent(data="aGVsbG8h", mime_type="image/png"),
            ResourceLink(name="readme", uri="file:///r.md"),
            EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="inline text")),
        ]
    )
    assert _to_output(mixed, 1000).content == (
        "first\n[image image/png, 6 bytes, not shown]\n[resource file:///r.md: readme]\ninline text"
    )
    structured = _to_output(CallToolResult(content=[], structured_content={"n": 1}), 1000)
    assert (structured.content, structured.is_error) == ('{"n": 1}', False)
    error = _to_output(CallToolResult(content=[], is_error=True), 1000)
    assert (error.content, error.is_error) == ("the tool reported an error without a message", True)
    long = _to_output(CallToolResult(content=[TextContent(text="x" * 500)]), 50).content
    assert "characters truncated" in long and len(long) < 120


@pytest.fixture
def http_server() -> Iterator[str]:
    with serving("http") as url:
        yield url


async def test_streamable_http_server(http_server: str, tmp_path: Path) -> None:
    async with McpManager({"remote": McpServerConfig(url=http_server, trusted=True)}) as manager:
        await manager.start()
        assert manager.status()[0].state == "ready", manager.status()[0].error
        assert await call(manager, "remote__add", tmp_path, a=40, b=2) == ("42", False)
        assert tool(manager, "remote__add").side_effecting({}) is False


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_http_headers_expand_the_environment_and_the_server_checks_them(
    transport: Literal["http", "sse"], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TA_TOKEN", "s3cret")
    with serving(transport, token="s3cret") as url:
        config = {"url": url, "headers": {"Authorization": "Bearer ${TA_TOKEN}"}, "trusted": True}
        if transport == "sse":
            config["transport"] = "sse"
        good = McpServerConfig.model_validate(config)
        assert good.transport == transport and good.headers["Authorization"] == "Bearer ${TA_TOKEN}"
        literal = good.model_copy(update={"headers": {"Authorization": "Bearer wrong"}})
        unset = good.model_copy(update={"headers": {"Authorization": "Bearer ${TA_UNSET_TOKEN}"}})
        servers = {"remote": good, "literal": literal, "unset": unset}
        async with McpManager(servers) as manager:
            await manager.start()
            states = {s.name: s for s in manager.status()}
            assert states["remote"].state == "ready", states["remote"].error
            assert await call(manager, "remote__echo", tmp_path, text="hi") == ("echo: hi", False)
            assert states["literal"].state == "failed"
            assert "401" in (states["literal"].error or "") and "token" in (states["literal"].error or "")
            assert states["unset"].state == "failed"
            assert "${TA_UNSET_TOKEN}, which is not set" in (states["unset"].error or "")
            assert "s3cret" not in repr(manager.status())


# --------------------------------------------------------------------------- names and config


def test_qualified_names_are_sanitized_and_unique() -> None:
    assert qualified_name("files", "read_file") == "files__read_file"
    assert qualified_name("my server", "get.thing/v2") == "my_server__get_thing_v2"
    long = qualified_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long != qualified_name("s" * 40, "t" * 41)
    clash = qualified_name("a b", "c", taken={"a_b__c"})
    assert clash != "a_b__c" and clash.startswith("a_b__c_") and len(clash) <= 64


def test_config_takes_the_usual_mcp_servers_shape() -> None:
    stdio_cfg = McpServerConfig.model_validate(
        {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"K": "v"}}
    )
    assert (stdio_cfg.transport, stdio_cfg.target, stdio_cfg.trusted) == (
        "stdio",
        "npx -y @modelcontextprotocol/server-filesystem .",
        False,
    )
    http_cfg = McpServerConfig.model_validate(
        {"type": "http", "url": "http://localhost:9000/mcp", "timeout": 5}
    )
    assert (http_cfg.transport, http_cfg.timeout) == ("http", 5)
    for bad in (
        {},
        {"command": "x", "url": "http://h"},
        {"type": "stdio", "url": "http://h"},
        {"command": "x", "trused": True},
    ):
        with pytest.raises(pydantic.ValidationError):
            McpServerConfig.model_validate(bad)


def test_importing_the_module_does_not_import_the_sdk() -> None:
    code = "import sys, tui_assist.tools.mcp, tui_assist.tools.registry; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


async def test_server_that_dies_between_calls_is_restarted_on_next_use(
    manager: McpManager, tmp_path: Path
) -> None:
    import os
    import signal

    pid = int((await call(manager, "testsrv__pid", tmp_path))[0])
    os.kill(pid, signal.SIGKILL)
    await wait_until(lambda: manager.status()[0].state != "ready", what="the crash noticed")
    assert manager.status()[0].state == "crashed"

    content, is_error = await call(manager, "testsrv__pid", tmp_path)

    assert not is_error and int(content) != pid
    assert (manager.status()[0].state, manager.status()[0].restarts) == ("ready", 1)


async def test_cancelling_a_turn_while_a_server_starts_leaves_it_startable(tmp_path: Path) -> None:
    async with McpManager({"testsrv": stdio()}, cwd=tmp_path) as manager:
        task = asyncio.create_task(manager.start())
        await wait_until(lambda: manager.status()[0].state == "starting")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert manager.status()[0].state == "idle"

        await manager.start()

        assert manager.status()[0].state == "ready"


# --------------------------------------------------------------------------- cwd, ${VAR}, headersHelper


async def test_a_stdio_server_starts_in_its_cwd_with_variables_in_command_and_args(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TA_PYTHON", sys.executable)
    monkeypatch.setenv("TA_MODE", "verbose")
    (tmp_path / "srv").mkdir()
    config = McpServerConfig(
        command="${TA_PYTHON}", args=[SERVER, "--mode=${TA_MODE}", "--level=${TA_LEVEL:-3}"], cwd=Path("srv")
    )
    async with McpManager({"placed": config}, cwd=tmp_path) as manager:
        await manager.start()
        assert manager.status()[0].state == "ready", manager.status()[0].error
        out, is_error = await call(manager, "placed__where", tmp_path)
    assert not is_error
    assert out == f"{tmp_path / 'srv'} --mode=verbose --level=3"


async def test_a_projects_server_cannot_read_a_secret_variable_even_when_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: the manager itself expands only allowed variables for a project's config."""
    monkeypatch.setenv("TA_API_KEY", "s3cret")
    config = stdio("--key=${TA_API_KEY}", origin="project")
    async with McpManager({"proj": config}, cwd=tmp_path) as manager:
        await manager.start()
        status = manager.status()[0]
    assert status.state == "failed"
    assert "names ${TA_API_KEY}, which this config may not read" in (status.error or "")
    assert '[mcp] pass_env = ["TA_API_KEY"]' in (status.error or "")
    allowed = McpManager({"proj": config}, cwd=tmp_path, pass_env=["TA_API_KEY"])
    async with allowed:
        await allowed.start()
        assert allowed.status()[0].state == "ready", allowed.status()[0].error
        assert (await call(allowed, "proj__where", tmp_path))[0].endswith("--key=s3cret")


async def test_headers_helper_output_is_sent_as_headers(tmp_path: Path) -> None:
    helper = tmp_path / "token.sh"
    helper.write_text('#!/bin/sh\necho "{\\"Authorization\\": \\"Bearer $(cat token.txt)\\"}"\n')
    helper.chmod(0o755)
    (tmp_path / "token.txt").write_text("fresh-token")
    with serving("http", token="fresh-token") as url:
        good = McpServerConfig.model_validate({"url": url, "headersHelper": "./token.sh", "trusted": True})
        failing = good.model_copy(update={"headers_helper": "echo oops >&2; exit 4"})
        not_json = good.model_copy(update={"headers_helper": "echo not json"})
        servers = {"helped": good, "failing": failing, "not_json": not_json}
        async with McpManager(servers, cwd=tmp_path) as manager:
            await manager.start()
            states = {s.name: s for s in manager.status()}
            assert states["helped"].state == "ready", states["helped"].error
            assert await call(manager, "helped__echo", tmp_path, text="hi") == ("echo: hi", False)
    assert states["failing"].state == "failed"
    assert "its headersHelper failed: oops" in (states["failing"].error or "")
    assert "must print a JSON object" in (states["not_json"].error or "")
