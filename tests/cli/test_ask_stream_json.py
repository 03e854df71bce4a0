"""`ask --output-format stream-json` and prompts on stdin: a real subprocess, the real SDK, the fake."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def _env(fake: FakeAnthropic) -> dict[str, str]:
    return dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}


def _command(work: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "tui_assist", "ask", "--workdir", str(work), *args]


def test_stream_json_lines_arrive_as_the_turn_runs_and_end_with_the_json_result(
    fake: FakeAnthropic, work: Path
) -> None:
    held = Reply([Text("Running it."), ToolUse("bash", {"command": "echo streamed-hi"})], hold_after=4)
    fake.add(held, Reply("It printed streamed-hi."))
    proc = subprocess.Popen(
        _command(work, "--output-format", "stream-json", "--yes", "run it"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=_env(fake),
    )
    assert proc.stdout is not None
    first = [json.loads(proc.stdout.readline()) for _ in range(2)]
    # Read while the model's reply is still held: each line was flushed as it happened.
    assert held.held.is_set() and [line["type"] for line in first] == ["turn_started", "text"]
    held.release()
    rest, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    lines = first + [json.loads(line) for line in rest.splitlines()]
    types = [line["type"] for line in lines]
    assert types[-1] == "result" and types.count("result") == 1
    order = [t for t in types if t in ("turn_started", "tool_call", "tool_result", "result")]
    assert order == ["turn_started", "tool_call", "tool_result", "result"]
    assert types.index("usage") < types.index("tool_call")
    started = lines[0]
    assert started["strategy"] == "agent" and started["conversation_id"] and started["turn_id"]
    call = next(line for line in lines if line["type"] == "tool_call")
    result = next(line for line in lines if line["type"] == "tool_result")
    assert (call["name"], call["input"]) == ("bash", {"command": "echo streamed-hi"})
    assert (result["call_id"], result["is_error"]) == (call["call_id"], False)
    assert "streamed-hi" in result["output"]
    text = "".join(line["text"] for line in lines if line["type"] == "text")
    assert text == "Running it.It printed streamed-hi."

    # The last line is the object `--json` prints for the same turn (a fresh server: the same
    # prompt-cache state).
    with FakeAnthropic() as again:
        again.add(Reply([Text("Running it."), ToolUse("bash", {"command": "echo streamed-hi"})]))
        again.add(Reply("It printed streamed-hi."))
        as_json = subprocess.run(
            _command(work, "--json", "--yes", "run it"),
            capture_output=True,
            text=True,
            env=_env(again),
            timeout=60,
        )
    expected = json.loads(as_json.stdout)
    got = {key: value for key, value in lines[-1].items() if key != "type"}
    assert got.keys() == expected.keys()
    for key in ("conversation_id", "turn_id"):
        assert got.pop(key) != expected.pop(key)
    assert got == expected
    assert lines[-1]["conversation_id"] == started["conversation_id"]


def test_a_prompt_on_stdin_and_stdin_attached_to_a_prompt(fake: FakeAnthropic, work: Path) -> None:
    fake.add(Reply("piped answer"), Reply("summary"), Reply("no document"))
    piped = subprocess.run(
        _command(work, "--json"),
        input="what is piped\n",
        capture_output=True,
        text=True,
        env=_env(fake),
        timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["answer"] == "piped answer"
    assert fake.requests[0].messages[-1]["content"][0]["text"].strip() == "what is piped"

    notes = work / "notes.txt"
    notes.write_text("line one of the notes\nline two\n")
    with notes.open() as stdin:
        attached = subprocess.run(
            _command(work, "summarize"),
            stdin=stdin,
            capture_output=True,
            text=True,
            env=_env(fake),
            timeout=60,
        )
    assert attached.returncode == 0, attached.stderr
    assert attached.stdout.strip() == "summary"
    sent = fake.requests[1].messages[-1]["content"][0]["text"]
    assert '<document source="stdin">\nline one of the notes\nline two\n</document>' in sent
    assert sent.rstrip().endswith("summarize")
    # The conversation is titled by what was asked, not by the document.
    database = sqlite3.connect(work.parent / "data" / "tui_assist.db")
    titles = database.execute("SELECT title FROM conversations ORDER BY rowid").fetchall()
    assert titles == [("what is piped",), ("summarize",)]

    # A pipe left open that never says anything (an agent's shell, a CI step) does not hang `ask`.
    silent = subprocess.Popen(
        _command(work, "hello"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(fake),
    )
    assert silent.stdout is not None and silent.stderr is not None and silent.stdin is not None
    out, err = silent.stdout.read(), silent.stderr.read()
    assert silent.wait(timeout=60) == 0, err
    silent.stdin.close()
    assert out.strip() == "no document"
    assert "nothing came on stdin" in err
    assert fake.requests[2].messages[-1]["content"][0]["text"] == "hello"


def test_no_prompt_and_nothing_piped_is_a_usage_error(work: Path) -> None:
    proc = subprocess.run(
        _command(work), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("tui-assist: ask: no prompt") and len(proc.stderr.splitlines()) == 1
