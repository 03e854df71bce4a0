"""The user's hooks through the real agent loop: real executables, the real SDK, the loopback fake."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.tools.processes import process_alive
from tests.wait import wait_until
from tui_assist.core.events import NodeFinished, NodeStarted
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource
from tui_assist.session.hooks import PromptRefused


@pytest.fixture
def work(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    path = tmp_path / "work"
    path.mkdir()
    return path


def script(folder: Path, name: str, body: str) -> Path:
    """A real executable hook script."""
    path = folder / name
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def write_config(tmp_path: Path, hooks: str) -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'approval = {{ default = "allow" }}\nsandbox = "off"\n{hooks}')


def hook(event: str, command: Path | str, *, matcher: str = "", timeout: float | None = None) -> str:
    extra = f"matcher = {json.dumps(matcher)}\n" if matcher else ""
    extra += f"timeout = {timeout}\n" if timeout is not None else ""
    return f"[[hooks.{event}]]\ncommand = {json.dumps(str(command))}\n{extra}"


@pytest.fixture
async def opened(work: Path, tmp_path: Path) -> AsyncIterator[list[ChatSession]]:
    sessions: list[ChatSession] = []
    yield sessions
    for session in sessions:
        await session.aclose()


async def open_session(work: Path, tmp_path: Path, opened: list[ChatSession]) -> ChatSession:
    session = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data"), "workdir": str(work)}))
    await session.load()
    assert session.provider is not None, session.provider_problem
    opened.append(session)
    return session


def hook_nodes(observer: RecordingObserver) -> list[NodeStarted]:
    return [e for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "hook"]


GUARD = """#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as log:
    log.write(json.dumps({"payload": data, "env": sorted(os.environ), "cwd": os.getcwd()}) + "\\n")
if "rm -rf" in data.get("tool_input", {}).get("command", ""):
    print("rm -rf is not allowed here; delete files one by one", file=sys.stderr)
    sys.exit(2)
"""


async def test_pre_tool_use_exit_2_blocks_rm_rf_and_the_model_sees_stderr(
    fake: FakeAnthropic,
    work: Path,
    tmp_path: Path,
    opened: list[ChatSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hook_log = tmp_path / "hook-log.jsonl"
    monkeypatch.setenv("HOOK_LOG", str(hook_log))
    monkeypatch.setenv("MY_SERVICE_TOKEN", "s3cret")
    guard = script(tmp_path, "guard.py", GUARD)
    write_config(tmp_path, hook("PreToolUse", guard, matcher="bash"))
    (work / "victim").mkdir()
    (work / "victim" / "keep.txt").write_text("precious")
    fake.add(
        Reply([ToolUse("bash", {"command": "rm -rf victim"})]),
        Reply([ToolUse("bash", {"command": "echo fine"})]),
        Reply("I was not allowed to delete it."),
    )
    session = await open_session(work, tmp_path, opened)
    observer = RecordingObserver()
    outcome = await session.run_turn("delete victim", observer)

    assert outcome.result.outcome == "answered"
    assert (work / "victim" / "keep.txt").read_text() == "precious"
    result = fake.requests[1].messages[-1]["content"][0]
    assert result["type"] == "tool_result" and result.get("is_error") is True
    assert "rm -rf is not allowed here" in json.dumps(result["content"])
    # The second call passed the same hook and ran.
    assert "fine" in json.dumps(fake.requests[2].messages[-1]["content"][0]["content"])

    runs = [json.loads(line) for line in hook_log.read_text().splitlines()]
    assert len(runs) == 2
    payload = runs[0]["payload"]
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "Bash"  # Claude Code's vocabulary
    assert payload["tool_input"] == {"command": "rm -rf victim"}
    assert payload["permission_mode"] == "default"
    assert payload["tool_use_id"] == fake.requests[1].messages[-1]["content"][0]["tool_use_id"]
    assert payload["session_id"] == outcome.conversation_id and payload["session_id"]
    assert payload["turn_id"] == outcome.result.turn_id
    assert payload["cwd"] == str(work)
    assert Path(runs[0]["cwd"]).resolve() == work.resolve()
    # The shell's environment policy: no secrets.
    assert "ANTHROPIC_API_KEY" not in runs[0]["env"] and "MY_SERVICE_TOKEN" not in runs[0]["env"]
    assert "HOOK_LOG" in runs[0]["env"]

    nodes = hook_nodes(observer)
    assert [n.label.split(" ")[1] for n in nodes] == ["PreToolUse", "PreToolUse"]
    assert nodes[0].label.startswith("hook: PreToolUse ") and nodes[0].detail == str(guard)
    ends = {e.node_id: e for e in observer.events if isinstance(e, NodeFinished)}
    assert ends[nodes[0].node_id].outcome == "blocked"
    assert "rm -rf is not allowed" in ends[nodes[0].node_id].output
    assert ends[nodes[1].node_id].outcome == "done"

    assert session.store is not None
    line = (await session.store.audit_lines())[-1]
    assert (line.hooks_run, line.hooks_blocked) == (2, 1)
    assert "delete victim" not in line.to_json()


FORMATTER = """#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"]["file_path"]
with open(path) as f:
    text = f.read()
with open(path, "w") as f:
    f.write(text.replace("=", " = "))
"""


async def test_post_tool_use_runs_a_formatter_after_an_edit(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    fmt = script(tmp_path, "fmt.py", FORMATTER)
    complain = script(tmp_path, "complain.sh", "#!/bin/sh\necho 'lint: line 1 is too terse' >&2\nexit 2\n")
    write_config(
        tmp_path,
        # A matcher written for Claude Code's tool names works too.
        hook("PostToolUse", fmt, matcher="Write|Edit|MultiEdit")
        + hook("PostToolUse", f"touch {tmp_path / 'bash-hook-ran'}", matcher="Bash")
        + hook("PostToolUse", complain, matcher="str_replace_based_edit_tool"),
    )
    fake.add(
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool", {"command": "create", "path": "a.py", "file_text": "x=1\n"}
                )
            ]
        ),
        Reply("Created."),
    )
    session = await open_session(work, tmp_path, opened)
    outcome = await session.run_turn("make a.py", RecordingObserver())
    assert outcome.result.outcome == "answered"
    assert (work / "a.py").read_text() == "x = 1\n"
    assert not (tmp_path / "bash-hook-ran").exists()
    # A PostToolUse exit 2 hands its stderr to the model with the result.
    result = json.dumps(fake.requests[1].messages[-1]["content"][0]["content"])
    assert "PostToolUse hook: lint: line 1 is too terse" in result


async def test_user_prompt_submit_exit_2_makes_no_model_call(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    refuse = script(
        tmp_path,
        "refuse.py",
        "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\n"
        "if 'password' in d['prompt']:\n    print('no secrets in prompts', file=sys.stderr); sys.exit(2)\n"
        "print('Today the build is red.')\n",
    )
    write_config(tmp_path, hook("UserPromptSubmit", refuse))
    fake.add(Reply("ok"))
    session = await open_session(work, tmp_path, opened)
    observer = RecordingObserver()
    with pytest.raises(PromptRefused, match="no secrets in prompts"):
        await session.prompt_hooks("my password is hunter2")
    assert [r for r in fake.requests if r.path == "/v1/messages"] == []
    # Exit 0: its stdout is context for the model, the stored prompt stays as typed.
    await session.prompt_hooks("what now?")
    outcome = await session.run_turn("what now?", observer)
    assert outcome.result.outcome == "answered"
    assert "Today the build is red." in fake.requests[0].all_text()
    assert outcome.result.prompt == "what now?"


async def test_stop_exit_2_continues_at_most_three_times(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    nag = script(tmp_path, "nag.sh", "#!/bin/sh\necho 'run the tests first' >&2\nexit 2\n")
    write_config(tmp_path, hook("Stop", nag))
    fake.add(Reply("done 1"), Reply("done 2"), Reply("done 3"), Reply("done 4"), Reply("never sent"))
    session = await open_session(work, tmp_path, opened)
    outcome = await session.run_turn("do it", RecordingObserver())
    requests = [r for r in fake.requests if r.path == "/v1/messages"]
    assert len(requests) == 4
    assert outcome.result.answer == "done 4"
    assert requests[1].messages[-1]["content"][0]["text"] == "run the tests first"


async def test_a_timeout_or_a_failing_hook_is_a_warning(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    slow = script(tmp_path, "slow.sh", "#!/bin/sh\nsleep 30\n")
    broken = script(tmp_path, "broken.sh", "#!/bin/sh\necho oops >&2\nexit 1\n")
    write_config(tmp_path, hook("Stop", slow, timeout=0.5) + hook("Stop", broken))
    fake.add(Reply("answer"))
    session = await open_session(work, tmp_path, opened)
    outcome = await session.run_turn("hi", RecordingObserver())
    assert outcome.result.outcome == "answered" and outcome.result.answer == "answer"
    assert any("timed out after 0.5 s" in w for w in outcome.warnings), outcome.warnings
    assert any("exit status 1" in w and "oops" in w for w in outcome.warnings), outcome.warnings


async def test_session_start_stdout_is_context_of_the_first_turn(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    start = script(tmp_path, "start.sh", "#!/bin/sh\necho 'branch: feature/x'\n")
    write_config(tmp_path, hook("SessionStart", start))
    fake.add(Reply("one"), Reply("two"))
    session = await open_session(work, tmp_path, opened)
    observer = RecordingObserver()
    outcome = await session.run_turn("first", observer)
    await session.run_turn("second", RecordingObserver())
    first, second = (r for r in fake.requests if r.path == "/v1/messages")
    # It ran before the turn's node began, and shows under it, right after it starts.
    starts = [e for e in observer.events if isinstance(e, NodeStarted)]
    assert starts[0].node_id == outcome.result.turn_id and starts[0].parent_id is None
    assert starts[1].node_kind == "hook" and starts[1].parent_id == outcome.result.turn_id
    assert starts[1].label.startswith("hook: SessionStart ")
    assert "branch: feature/x" in json.dumps(first.messages[-1])
    # It ran once: the second turn's own message has no new copy.
    assert "branch: feature/x" not in json.dumps(second.messages[-1])


REVIEWER = """---
name: reviewer
description: Reviews changes for bugs
tools: Bash
model: claude-haiku-4-5
---
You are REVIEWER-PROMPT: read the diff, report bugs only.
"""


def write_agent(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


async def test_a_custom_sub_agent_gets_its_prompt_tools_and_model(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    write_config(tmp_path, "")
    write_agent(tmp_path / "xdg_config_home" / "tui-assist" / "agents", "reviewer", REVIEWER)
    fake.add(
        Reply(
            [ToolUse("agent", {"description": "review it", "prompt": "check", "subagent_type": "reviewer"})]
        ),
        Reply("no bugs"),
        Reply([ToolUse("agent", {"description": "x", "prompt": "y", "subagent_type": "nobody"})]),
        Reply("done"),
    )
    session = await open_session(work, tmp_path, opened)
    observer = RecordingObserver()
    outcome = await session.run_turn("review", observer)
    assert outcome.result.answer == "done"
    main, sub, _, after = (r for r in fake.requests if r.path == "/v1/messages")
    agent_tool = next(t for t in main.tools if t["name"] == "agent")
    assert "reviewer: Reviews changes for bugs" in agent_tool["description"]
    assert agent_tool["input_schema"]["properties"]["subagent_type"]["enum"] == ["reviewer"]
    assert "REVIEWER-PROMPT" in json.dumps(sub.system)
    assert "REVIEWER-PROMPT" not in json.dumps(main.system)
    assert [t["name"] for t in sub.tools] == ["bash"]
    assert (sub.body["model"], main.body["model"]) == ("claude-haiku-4-5", "claude-sonnet-4-6")
    assert any(
        isinstance(e, NodeStarted) and e.node_kind == "agent" and e.label == "reviewer: review it"
        for e in observer.events
    )
    # An unknown subagent_type is a tool error the model sees.
    result = after.messages[-1]["content"][0]
    assert result.get("is_error") is True
    assert "Unknown subagent_type 'nobody'. Available: reviewer." in json.dumps(result["content"])


async def test_project_agents_and_hooks_wait_for_trust(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    write_config(tmp_path, "")
    write_agent(work / ".claude" / "agents", "planner", REVIEWER.replace("reviewer", "planner"))
    settings = work / ".tui-assist" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('[[hooks.Stop]]\ncommand = "touch stopped"\n')
    fake.add(Reply("one"), Reply("two"))
    session = await open_session(work, tmp_path, opened)
    assert session.extensions is not None and session.extensions.trust == "untrusted"
    assert session.extensions.pending() == [
        "hook Stop: touch stopped",
        f"agent planner: {work / '.claude' / 'agents' / 'planner.md'}",
    ]
    await session.run_turn("hi", RecordingObserver())
    first = next(r for r in fake.requests if r.path == "/v1/messages")
    assert "planner" not in json.dumps(first.tools)
    assert not (work / "stopped").exists()

    assert session.trust_project()
    await session.run_turn("again", RecordingObserver())
    second = [r for r in fake.requests if r.path == "/v1/messages"][1]
    assert "planner" in json.dumps(second.tools)
    assert (work / "stopped").exists()


async def test_pre_compact_runs_under_the_compact_node(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    seen = tmp_path / "compact.json"
    write_config(tmp_path, hook("PreCompact", f"cat > {seen}"))
    fake.add(Reply("one"), Reply("two"), Reply("SUMMARY of the first turn"))
    session = await open_session(work, tmp_path, opened)
    await session.run_turn("first", RecordingObserver())
    await session.run_turn("second", RecordingObserver())
    observer = RecordingObserver()
    assert await session.compact(observer=observer) is not None
    payload = json.loads(seen.read_text())
    assert (payload["hook_event_name"], payload["trigger"]) == ("PreCompact", "manual")
    assert payload["session_id"] == session.conversation_id
    compact = next(e for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "compact")
    (node,) = hook_nodes(observer)
    assert node.parent_id == compact.node_id


async def test_a_cancelled_turn_kills_the_running_hook(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    import asyncio

    pid_file = tmp_path / "pid"
    slow = script(tmp_path, "slow.sh", f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    write_config(tmp_path, hook("PreToolUse", slow))
    fake.add(Reply([ToolUse("bash", {"command": "echo hi"})]), Reply("never"))
    session = await open_session(work, tmp_path, opened)
    turn = asyncio.create_task(session.run_turn("go", RecordingObserver()))
    await wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the hook started")
    pid = int(pid_file.read_text())
    assert session.interrupt()
    outcome = await turn
    assert outcome.result.outcome == "cancelled"
    # Killed: gone, or a zombie until the event loop's child watcher reaps it.
    await wait_until(lambda: not process_alive(pid), what="the hook ended with its cancelled turn")


def json_hook(folder: Path, name: str, reply: Mapping[str, object]) -> Path:
    """A hook script that prints `reply` as its JSON output."""
    return script(folder, name, f"#!/bin/sh\ncat > /dev/null\necho '{json.dumps(reply)}'\n")


async def test_continue_false_stops_the_turn_after_the_call_and_says_why(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    stop = json_hook(tmp_path, "stop.sh", {"continue": False, "stopReason": "the build is broken"})
    write_config(tmp_path, hook("PreToolUse", stop, matcher="Bash"))
    fake.add(Reply([ToolUse("bash", {"command": "touch made"})]), Reply("never sent"))
    session = await open_session(work, tmp_path, opened)
    outcome = await session.run_turn("go", RecordingObserver())
    assert [r for r in fake.requests if r.path == "/v1/messages"][1:] == []
    assert not (work / "made").exists()
    assert "a PreToolUse hook stopped the turn: the build is broken" in outcome.warnings


async def test_prompt_and_post_tool_json_output(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    context = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1"}
    }
    after = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "3 files changed"}}
    write_config(
        tmp_path,
        # Claude Code's nested shape, written in TOML.
        "[[hooks.UserPromptSubmit]]\n"
        f'hooks = [{{ type = "command", command = {json.dumps(str(json_hook(tmp_path, "ctx.sh", context)))} }}]\n'
        '[[hooks.PostToolUse]]\nmatcher = "Bash"\n'
        f'hooks = [{{ type = "command", command = {json.dumps(str(json_hook(tmp_path, "after.sh", after)))} }}]\n',
    )
    fake.add(Reply([ToolUse("bash", {"command": "echo hi"})]), Reply("ok"))
    session = await open_session(work, tmp_path, opened)
    await session.prompt_hooks("what now?")
    await session.run_turn("what now?", RecordingObserver())
    first, second = (r for r in fake.requests if r.path == "/v1/messages")
    assert "ticket ABC-1" in first.all_text() and "hookSpecificOutput" not in first.all_text()
    assert "PostToolUse hook context: 3 files changed" in json.dumps(
        second.messages[-1]["content"][0]["content"]
    )

    block = json_hook(tmp_path, "block.sh", {"decision": "block", "reason": "prompts need a ticket"})
    write_config(tmp_path, hook("UserPromptSubmit", block))
    refusing = await open_session(work, tmp_path, opened)
    with pytest.raises(PromptRefused, match="prompts need a ticket"):
        await refusing.prompt_hooks("hi")


async def test_pre_tool_use_json_rewrites_the_input_and_ask_forces_the_dialog(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "the hook wants you to see this",
            "updatedInput": {"command": "touch rewritten"},
        }
    }
    # `approval = { default = "allow" }` would run it unasked; the hook's `ask` asks anyway.
    write_config(tmp_path, hook("PreToolUse", json_hook(tmp_path, "rewrite.sh", rewrite), matcher="Bash"))
    fake.add(Reply([ToolUse("bash", {"command": "touch original"})]), Reply("done"))
    session = await open_session(work, tmp_path, opened)
    observer = RecordingObserver()
    await session.run_turn("go", observer)
    assert (work / "rewritten").exists() and not (work / "original").exists()
    (asked,) = observer.approvals
    assert asked.input == {"command": "touch rewritten"}


async def test_continue_false_in_a_sub_agent_ends_the_whole_turn(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    stop = json_hook(tmp_path, "stop.sh", {"continue": False, "stopReason": "quota reached"})
    write_config(tmp_path, hook("PreToolUse", stop, matcher="Bash"))
    fake.add(
        Reply([ToolUse("agent", {"description": "build", "prompt": "run the build"})]),
        Reply([ToolUse("bash", {"command": "touch built"})]),
        Reply("never sent: the sub-agent's next request"),
        Reply("never sent: the parent's next request"),
    )
    session = await open_session(work, tmp_path, opened)
    outcome = await session.run_turn("go", RecordingObserver())
    assert len([r for r in fake.requests if r.path == "/v1/messages"]) == 2
    assert not (work / "built").exists()
    assert "a PreToolUse hook stopped the turn: quota reached" in outcome.warnings


async def test_session_start_runs_again_after_a_compaction_with_source_compact(
    fake: FakeAnthropic, work: Path, tmp_path: Path, opened: list[ChatSession]
) -> None:
    seen = tmp_path / "starts.jsonl"
    write_config(
        tmp_path,
        '[[hooks.SessionStart]]\nmatcher = "startup|compact"\n'
        f'hooks = [{{ type = "command", command = {json.dumps(f"cat >> {seen}; echo >> {seen}")} }}]\n',
    )
    fake.add(Reply("one"), Reply("two"), Reply("SUMMARY of the first turn"), Reply("three"))
    session = await open_session(work, tmp_path, opened)
    await session.run_turn("first", RecordingObserver())
    await session.run_turn("second", RecordingObserver())
    assert await session.compact() is not None
    await session.run_turn("third", RecordingObserver())
    sources = [json.loads(line)["source"] for line in seen.read_text().splitlines() if line.strip()]
    assert sources == ["startup", "compact"]
