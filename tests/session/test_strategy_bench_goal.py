"""`bench strategies` with the goal strategy: only tasks that name their checks, attempts as rounds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.session.test_strategy_bench import run_cli
from tui_assist.session.strategy_bench import BUILTIN_SUITE, SuiteError, load_task


def test_goal_runs_the_tasks_with_goal_checks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for name in ("fix-two-bugs", "fix-failing-test", "implement-roman"):
        shutil.copytree(BUILTIN_SUITE / name, suite / name)
    code, out, err = run_cli(
        capsys, "bench", "strategies", "--suite", str(suite), "--provider", "scripted",
        "--strategies", "agent,refine,goal", "--json",
    )  # fmt: skip
    assert code == 0, err
    rows = {(r["task"], r["strategy"]): r for r in json.loads(out)}
    assert ("implement-roman", "goal") not in rows  # it names no goal_check
    two = rows["fix-two-bugs", "goal"]
    assert (two["passed"], two["outcome"], two["rounds"]) == (True, "answered", 2)
    assert not rows["fix-two-bugs", "agent"]["passed"] and not rows["fix-two-bugs", "refine"]["passed"]
    assert rows["fix-failing-test", "goal"]["passed"] and rows["fix-failing-test", "goal"]["rounds"] == 1
    assert two["input_tokens"] > rows["fix-two-bugs", "refine"]["input_tokens"]


def test_a_malformed_goal_check_is_named(tmp_path: Path) -> None:
    task = tmp_path / "t"
    (task / "repo").mkdir(parents=True)
    (task / "task.toml").write_text('prompt = "p"\ncheck = "true"\ngoal_check = [1]\n')
    with pytest.raises(SuiteError, match="goal_check"):
        load_task(task)
