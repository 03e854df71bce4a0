"""`tui-assist ask` as a user runs it: a real subprocess, the real SDK, the loopback fake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, Hang, Reply, Text, ToolUse
from tests.wait import wait_until_sync
from tui_assist.cli import main


def ask(
    *args: str,
    fake: FakeAnthropic | None = None,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    if fake is not None:
        full_env |= {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    full_env |= env or {}
    return subprocess.run(
        [sys.executable, "-m", "tui_assist", "ask", *args, "--workdir", str(cwd)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
        input=stdin,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_scripted_provider_answers_offline(tmp_path: Path, work: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([[{"type": "text", "text": "Hello from the script."}]]))
    proc = ask("--provider", "scripted", "--script", str(script), "hi", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Hello from the script."


def test_json_multi_tool_agent_turn(fake: FakeAnthropic, work: Path) -> None:
    fake.add(
        Reply([Text("Creating it."), ToolUse("bash", {"command": "mkdir -p out && echo 3 > out/n.txt"})]),
        Reply([ToolUse("str_replace_based_edit_tool", {"command": "view", "path": "out/n.txt"})]),
        Reply("out/n.txt holds 3."),
    )
    proc = ask("--json", "--yes", "make the file", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"conversation_id", "turn_id", "strategy", "answer", "outcome", "rounds", "usage"}
    assert (data["strategy"], data["outcome"], data["answer"], data["rounds"]) == (
        "agent",
        "answered",
        "out/n.txt holds 3.",
        [],
    )
    assert data["usage"]["input_tokens"] > 0 and data["usage"]["output_tokens"] > 0
    assert (work / "out" / "n.txt").read_text() == "3\n"


def test_without_yes_side_effects_are_denied_with_a_hint(fake: FakeAnthropic, work: Path) -> None:
    fake.add(Reply([ToolUse("bash", {"command": "touch made.txt"})]), Reply("I could not run it."))
    proc = ask("--json", "touch it", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert not (work / "made.txt").exists()
    result = fake.requests[1].messages[-1]["content"][0]
    assert result["is_error"] is True and "--yes" in result["content"]


def test_refine_json_lists_each_round(fake: FakeAnthropic, work: Path) -> None:
    fake.add(
        Reply([ToolUse("bash", {"command": "echo 1"})]),
        Reply("one"),
        Reply("REVISE\nsay two"),
        Reply("two"),
        Reply("**PASS**"),
    )
    proc = ask("--refine", "--json", "--yes", "count", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["strategy"], data["outcome"], data["answer"]) == ("refine", "answered", "two")
    assert data["rounds"] == [
        {"index": 1, "answer": "one", "verdict": "revise", "feedback": "say two", "tool_calls": 1},
        {"index": 2, "answer": "two", "verdict": "pass", "feedback": "", "tool_calls": 0},
    ]


def test_unverified_still_exits_zero(fake: FakeAnthropic, work: Path) -> None:
    fake.add(Reply("a"), Reply("REVISE"))
    proc = ask("--refine", "--rounds", "1", "--json", "x", fake=fake, cwd=work)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["outcome"] == "unverified"


def test_provider_failure_prints_json_and_exits_one(fake: FakeAnthropic, work: Path) -> None:
    fake.add(Error(400, message="prompt is too long"))
    proc = ask("--json", "hi", fake=fake, cwd=work)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["outcome"] == "error" and "prompt is too long" in data["error"]
    assert len(proc.stderr.strip().splitlines()) == 1


def test_continue_appends_and_starts_new_when_none(fake: FakeAnthropic, work: Path, tmp_path: Path) -> None:
    data_env = {"TUI_ASSIST_HOME": str(tmp_path / "home")}
    fake.add(Reply("first"), Reply("second"))
    one = json.loads(ask("--continue", "--json", "q1", fake=fake, cwd=work, env=data_env).stdout)
    two = json.loads(ask("--continue", "--json", "q2", fake=fake, cwd=work, env=data_env).stdout)
    assert one["conversation_id"] == two["conversation_id"]
    shape = [(m["role"], m["content"][0]["text"]) for m in fake.requests[1].messages]
    assert shape == [("user", "q1"), ("assistant", "first"), ("user", "q2")]


def test_no_credentials_is_one_clear_line(work: Path) -> None:
    proc = ask("hi", cwd=work)
    assert proc.returncode == 1
    assert (
        proc.stderr.count("\n") == 1
        and "ANTHROPIC_API_KEY" in proc.stderr
        and "--provider scripted" in proc.stderr
    )


def test_usage_errors_exit_two(fake: FakeAnthropic, work: Path) -> None:
    assert ask("", fake=fake, cwd=work).returncode == 2
    unknown = ask("--conversation", "nope", "hi", fake=fake, cwd=work)
    assert unknown.returncode == 2 and "nope" in unknown.stderr
    assert ask("--rounds", "zero", "x", fake=fake, cwd=work).returncode == 2


# --------------------------------------------------------------------------- in process, against faults


@pytest.fixture
def api(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    return fake


def ask_in_process(
    capsys: pytest.CaptureFixture[str], *args: str, cwd: Path
) -> tuple[int, dict[str, Any], str]:
    code = main(["ask", "--json", *args, "--workdir", str(cwd)])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_an_empty_first_reply_is_asked_again_and_the_conversation_goes_on(
    api: FakeAnthropic, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.add(Reply([]), Reply("The first answer."), Reply("The second answer."))

    code_one, one, _ = ask_in_process(capsys, "q1", cwd=work)
    code_two, two, _ = ask_in_process(capsys, "--continue", "q2", cwd=work)

    assert (code_one, one["outcome"], one["answer"]) == (0, "answered", "The first answer.")
    assert (code_two, two["outcome"], two["answer"]) == (0, "answered", "The second answer.")
    assert one["conversation_id"] == two["conversation_id"]
    assert [r.status for r in api.requests] == [200, 200, 200]  # the fake answers 400 to empty content
    sent = [(m["role"], [b.get("text") for b in m["content"]]) for m in api.requests[-1].messages]
    assert sent == [("user", ["q1"]), ("assistant", ["The first answer."]), ("user", ["q2"])]


def test_a_reply_that_stays_empty_is_an_error_and_the_conversation_goes_on(
    api: FakeAnthropic, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.add(Reply([]), Reply([Text("", deltas=1)]), Reply("Back again."))

    code_one, one, err = ask_in_process(capsys, "q1", cwd=work)
    code_two, two, _ = ask_in_process(capsys, "--continue", "q2", cwd=work)

    assert (code_one, one["outcome"], one["answer"]) == (1, "error", "")
    assert one["error"] == "the model sent an empty reply (2 attempts, stop reason end_turn)"
    assert len(err.strip().splitlines()) == 1 and "empty reply" in err
    assert (code_two, two["outcome"], two["answer"]) == (0, "answered", "Back again.")
    assert api.requests[-1].status == 200
    assert api.requests[-1].messages[-1]["content"][0]["text"] == "q2"


def test_request_timeout_from_the_config_ends_a_silent_server(
    api: FakeAnthropic, work: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("request_timeout = 0.3\n")
    api.add(Hang(30), Hang(30), Hang(30))

    code, data, err = ask_in_process(capsys, "hi", cwd=work)

    assert (code, data["outcome"]) == (1, "error")
    assert data["error"] == f"Anthropic API at {api.base_url} did not answer within 0.3 s (request_timeout)"
    assert len(err.strip().splitlines()) == 1


def test_a_refine_turn_stopped_by_its_budget_keeps_its_tool_calls(
    api: FakeAnthropic, work: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("max_tool_calls = 4\n")
    api.add(*(Reply([ToolUse("bash", {"command": f"echo step {i}"}, id=f"toolu_{i}")]) for i in range(6)))

    code, data, _ = ask_in_process(capsys, "--refine", "--yes", "keep going", cwd=work)

    assert data["outcome"] == "budget_exhausted" and code == 0
    assert [(r["index"], r["tool_calls"]) for r in data["rounds"]] == [(1, 4)]
    conversation = data["conversation_id"]
    assert main(["history", "show", conversation, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["turns"][0]["tool_calls"] == 4
    assert main(["history", "export", conversation, "--format", "md"]) == 0
    assert capsys.readouterr().out.count("echo step") >= 4
    assert main(["stats", "--json"]) == 0
    assert '"tool_calls": 4' in capsys.readouterr().out


def _read_text_deltas(proc: subprocess.Popen[str], streamed: list[str]) -> None:
    for line in proc.stdout or ():
        event = json.loads(line)
        if event.get("type") == "text":
            streamed.append(event["text"])


def test_sigint_stores_the_interrupted_turn_and_the_next_ask_carries_it(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    import signal

    held = Reply([Text("Halfway through the answer " * 3, deltas=12)], hold_after=8)
    fake.add(Reply([ToolUse("bash", {"command": "echo seen-it"})]), held, Reply("Steered."))
    env = dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    argv = [sys.executable, "-m", "tui_assist", "ask", "--yes", "--workdir", str(work)]
    proc = subprocess.Popen(
        [*argv, "--output-format", "stream-json", "long job"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    streamed: list[str] = []  # the text deltas the client has read, as it prints them
    threading.Thread(target=_read_text_deltas, args=(proc, streamed), daemon=True).start()
    try:
        assert held.held.wait(30), "the second reply never started streaming"
        wait_until_sync(lambda: "Halfway through" in "".join(streamed), 30, what="the first deltas read")
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        held.release()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err

    again = subprocess.run(
        [*argv, "--continue", "--json", "do it this way"], env=env, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0, again.stderr
    sent = fake.requests[-1].messages
    assert sent[0]["content"][0]["text"] == "long job"
    assert "seen-it" in json.dumps(sent[2]["content"])
    assert sent[3]["content"][-1]["text"].endswith("[interrupted by the user]")
    assert "Halfway through" in sent[3]["content"][-1]["text"]
    assert json.loads(again.stdout)["answer"] == "Steered."


def test_every_hook_of_a_first_ask_gets_the_conversation_id(
    fake: FakeAnthropic, work: Path, tmp_path: Path
) -> None:
    logged = tmp_path / "hooks.jsonl"
    logger = tmp_path / "log_stdin.py"
    logger.write_text(
        f"import sys\nwith open({str(logged)!r}, 'a') as log:\n    log.write(sys.stdin.read() + '\\n')\n"
    )
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    command = json.dumps(f"{sys.executable} {logger}")
    config.write_text(
        "".join(
            f"[[hooks.{event}]]\ncommand = {command}\n"
            for event in ("UserPromptSubmit", "PreToolUse", "Stop")
        )
    )
    fake.add(Reply([ToolUse("bash", {"command": "echo hi"})]), Reply("Done."))
    proc = ask("--json", "--yes", "say hi", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    conversation = json.loads(proc.stdout)["conversation_id"]
    payloads = [json.loads(line) for line in logged.read_text().splitlines()]
    assert [p["hook_event_name"] for p in payloads] == ["UserPromptSubmit", "PreToolUse", "Stop"]
    assert {p["session_id"] for p in payloads} == {conversation}
    # The conversation made before the prompt's hooks is the one the turn is stored in, titled by it.
    listed = subprocess.run(
        [sys.executable, "-m", "tui_assist", "history", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [(row["id"], row["title"]) for row in json.loads(listed.stdout)] == [(conversation, "say hi")]


async def test_sigint_before_the_turn_started_ends_its_run_and_frees_the_controller(tmp_path: Path) -> None:
    """`ask`'s own signal handler, with the turn handed over but not started yet: the run ends at
    once as cancelled (nothing sent, nothing stored), and the controller can run the next prompt."""
    import asyncio
    import signal

    from tests.launchers import HeldLauncher
    from tests.wait import wait_until
    from tui_assist.cli.ask import run_interruptible
    from tui_assist.core.conversation import TextBlock
    from tui_assist.providers.scripted import ScriptedProvider
    from tui_assist.session.chat import ChatSession
    from tui_assist.session.config import Settings
    from tui_assist.session.controller import TurnController
    from tui_assist.session.headless import HeadlessHost

    provider = ScriptedProvider([[TextBlock("Next.")]])
    session = ChatSession(
        Settings(provider="scripted", workdir=tmp_path), provider_factory=lambda: provider, use_store=False
    )
    await session.load()
    host = HeadlessHost(progress=False)
    held = HeldLauncher()
    controller = host.controller = TurnController(session, host, launcher=held)
    try:
        asking = asyncio.ensure_future(run_interruptible(controller, "never sent"))
        await wait_until(lambda: held.held, what="the run handed to the launcher")
        os.kill(os.getpid(), signal.SIGINT)
        run = await asyncio.wait_for(asking, 5)
        assert run is not None and run.cancelled and run.ended is None and host.ended is None
        assert not controller.running
        held.release()
        await held.finished()
        assert not provider.requests

        controller.launcher = held.start
        run = await run_interruptible(controller, "the next one")
        assert run is not None and host.ended is not None and host.ended.outcome is not None
        assert host.ended.outcome.result.answer == "Next."
    finally:
        await session.aclose()
