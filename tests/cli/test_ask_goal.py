"""`ask --goal --check` against the loopback fake, on a repository with a failing test."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
FIX = "sed -i 's/a - b/a + b/' calc.py"


def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    return work


def test_the_goal_is_achieved_on_the_attempt_where_the_check_passes(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = repo(tmp_path)
    fake.add(
        Reply("I read the code; it looks right to me."),
        Reply("PASS\nthe answer says it is fine"),  # a critic fooled by prose: the failing check wins
        Reply([ToolUse("bash", {"command": FIX})]),
        Reply("add() now adds."),
        Reply("PASS\n[check 1] exited 0: 1 passed"),
    )
    proc = ask(
        "--json", "--yes", "--goal", "make the tests pass", "--check", PYTEST, "--max-attempts", "3",
        fake=fake, cwd=work,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["strategy"], data["outcome"], data["answer"]) == ("goal", "answered", "add() now adds.")
    assert data["goal"] == {
        "state": "achieved",
        "attempts": 2,
        "checks": [{"command": PYTEST, "exit_code": 0}],
    }
    assert [r["verdict"] for r in data["rounds"]] == ["revise", "pass"]
    assert "exited 1" in data["rounds"][0]["feedback"]
    first_critic, second_critic = fake.requests[1].all_text(), fake.requests[4].all_text()
    assert "[check 1]" in first_critic and "exit code 1" in first_critic and "1 failed" in first_critic
    assert "exit code 0" in second_critic and "1 passed" in second_critic
    assert "exited 1" in fake.requests[2].all_text()  # attempt 2 is told why attempt 1 was not enough
    assert "a + b" in (work / "calc.py").read_text()


def test_a_check_that_never_passes_ends_budget_limited(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = repo(tmp_path)
    fake.add(Reply("try one"), Reply("REVISE\nstill red"), Reply("try two"), Reply("PASS"))
    proc = ask(
        "--output-format", "stream-json", "--yes", "--goal", "make it pass", "--check", "false",
        "--max-attempts", "2", fake=fake, cwd=work,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    goals = [(g["state"], g["attempts"], g["checks"][0]["exit_code"]) for g in lines if g["type"] == "goal"]
    assert goals == [("running", 0, 1), ("running", 1, 1), ("budget-limited", 2, 1)]
    result = lines[-1]
    assert result["type"] == "result" and result["outcome"] == "budget_exhausted"
    assert result["goal"]["state"] == "budget-limited" and len(fake.requests) == 4


def test_without_yes_an_unallowed_check_blocks_the_goal_before_any_request(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = repo(tmp_path)
    proc = ask("--json", "--goal", "make it pass", "--check", "touch x && false", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["goal"] == {
        "state": "blocked",
        "attempts": 0,
        "checks": [{"command": "touch x && false", "exit_code": None}],
    }
    assert fake.requests == [] and not (work / "x").exists()


def test_check_without_goal_is_a_usage_error(tmp_path: Path) -> None:
    proc = ask("--check", "true", "hello", cwd=tmp_path)
    assert proc.returncode == 2 and "--goal" in proc.stderr


def test_sigint_pauses_the_goal_and_says_where_it_was(fake: FakeAnthropic, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess

    work = repo(tmp_path)
    held = Reply([Text("Working on it " * 3, deltas=6)], hold_after=2)
    fake.add(held)
    env = dict(os.environ) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    argv = [sys.executable, "-m", "tui_assist", "ask", "--yes", "--workdir", str(work), "--json"]
    proc = subprocess.Popen(
        [*argv, "--goal", "make it pass", "--check", "false"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert held.held.wait(30), "the attempt never started streaming"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        held.release()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    data = json.loads(out)
    assert data["outcome"] == "cancelled"
    assert data["goal"] == {
        "state": "paused",
        "attempts": 0,
        "checks": [{"command": "false", "exit_code": 1}],
    }
