"""`bench strategies` end to end: real suites, real tools, real checks, the real CLI."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, RecordedRequest, Reply, ToolUse
from tui_assist.cli import main
from tui_assist.core.events import ToolCallFinished
from tui_assist.core.observer import RecordingObserver
from tui_assist.session.config import Settings
from tui_assist.session.strategy_bench import (
    BUILTIN_SUITE,
    BenchRow,
    BenchTask,
    Progress,
    SuiteError,
    load_suite,
    load_task,
    parse_strategies,
    run_check,
    run_task,
    summarize,
)

ROW_FIELDS = [
    "task",
    "strategy",
    "passed",
    "outcome",
    "rounds",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cost",
    "seconds",
]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, id_: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": tool_input}


def bash(id_: str, command: str) -> dict[str, Any]:
    return tool("bash", id_, command=command)


def edit(id_: str, path: str, old: str, new: str) -> dict[str, Any]:
    return tool(
        "str_replace_based_edit_tool", id_, command="str_replace", path=path, old_str=old, new_str=new
    )


def make_task(
    suite: Path,
    name: str,
    *,
    prompt: str,
    check: str,
    files: dict[str, str],
    scripts: dict[str, list[list[dict[str, Any]]]],
    timeout: float = 60,
) -> Path:
    folder = suite / name
    for rel, content in files.items():
        path = folder / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content))
    (folder / "task.toml").write_text(
        f"prompt = {json.dumps(prompt)}\ncheck = {json.dumps(check)}\ntimeout = {timeout}\n"
    )
    (folder / "scripts").mkdir()
    for strategy, script in scripts.items():
        (folder / "scripts" / f"{strategy}.json").write_text(json.dumps(script))
    return folder


ADD = """\
def add(a, b):
    return a - b
"""


@pytest.fixture
def mini_suite(tmp_path: Path) -> Path:
    """Three tasks: a fix the agent gets right and refine gets wrong (its critic is fooled), a
    question whose answer file the check reads, and a clarifying question."""
    suite = tmp_path / "suite"
    check_add = "python3 -c 'from calc import add; assert add(2, 3) == 5 and add(-1, 1) == 0'"
    make_task(
        suite,
        "fix-add",
        prompt="add() subtracts. Fix it.",
        check=check_add,
        files={"calc.py": ADD},
        scripts={
            "agent": [
                [edit("t1", "calc.py", "return a - b", "return a + b")],
                [bash("t2", "python3 -c 'from calc import add; print(add(2, 3))'")],
                [text("Fixed: add() returns a + b; add(2, 3) is 5.")],
            ],
            "refine": [
                # A wrong fix that happens to give 5 for (2, 3): the critic is fooled, the check is not.
                [edit("t1", "calc.py", "return a - b", "return a * b - 1")],
                [bash("t2", "python3 -c 'from calc import add; print(add(2, 3))'")],
                [text("Fixed: add(2, 3) is 5 now.")],
                [text("PASS\n[2] shows 5.")],
            ],
        },
    )
    peek = "(ls -a; ls -a ..; cat ../*.toml ../../*.toml 2>&1) > seen.txt; echo looked"
    make_task(
        suite,
        "name-the-function",
        prompt="Which function in calc.py is there? Write its name to ANSWER.txt.",
        check='test "$(cat ANSWER.txt)" = add && ! grep -q MARKER-7f3 seen.txt # MARKER-7f3',
        files={"calc.py": ADD},
        scripts={
            strategy: [
                [bash("t1", peek)],
                [bash("t2", "grep -o 'def [a-z_]*' calc.py | cut -c5- > ANSWER.txt")],
                [text("add")],
                *([[text("PASS")]] if strategy == "refine" else []),
            ]
            for strategy in ("agent", "refine")
        },
    )
    make_task(
        suite,
        "vague",
        prompt="Make it better.",
        check='diff -rq "$TUI_ASSIST_TASK_DIR/repo" . && grep -q "?" "$TUI_ASSIST_ANSWER"',
        files={"calc.py": ADD},
        scripts={
            "agent": [[text("Better in what way: speed, naming, or the bug in add()?")]],
            "refine": [
                [text("Better in what way: speed, naming, or the bug in add()?")],
                [text("PASS\nA clarifying question is right here.")],
            ],
        },
    )
    return suite


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_scripted_mini_suite_rows_and_grading(capsys: pytest.CaptureFixture[str], mini_suite: Path) -> None:
    code, out, err = run_cli(
        capsys, "bench", "strategies", "--suite", str(mini_suite), "--provider", "scripted", "--json"
    )

    assert code == 0, err
    rows = json.loads(out)
    assert [list(r) for r in rows] == [ROW_FIELDS] * 6
    by = {(r["task"], r["strategy"]): r for r in rows}
    assert [(r["task"], r["strategy"]) for r in rows] == [
        ("fix-add", "agent"),
        ("fix-add", "refine"),
        ("name-the-function", "agent"),
        ("name-the-function", "refine"),
        ("vague", "agent"),
        ("vague", "refine"),
    ]
    # The right fix passes; the wrong one fails its check although the critic passed it.
    assert by["fix-add", "agent"]["passed"] is True
    assert by["fix-add", "refine"]["passed"] is False
    assert by["fix-add", "refine"]["outcome"] == "answered" and by["fix-add", "refine"]["rounds"] == 1
    assert by["fix-add", "agent"]["rounds"] == 0 and by["fix-add", "agent"]["tool_calls"] == 2
    # The answer file is read from the run's copy; nothing around the workdir held the check.
    assert by["name-the-function", "agent"]["passed"] and by["name-the-function", "refine"]["passed"]
    assert by["vague", "agent"]["passed"] and by["vague", "refine"]["passed"]
    for row in rows:
        assert row["input_tokens"] > 0 and row["output_tokens"] > 0
        assert row["cost"] is None  # the scripted model has no price
        assert row["seconds"] >= 0
    # Not a terminal: one plain line as each run starts, one as it finishes.
    lines = err.splitlines()
    assert len(lines) == 12 and all(line.startswith("tui-assist: bench strategies: ") for line in lines)
    assert sum("bench strategies: started " in line for line in lines) == 6
    assert any("fix-add refine: FAIL" in line for line in lines)
    # Each run worked in a throwaway copy: the suite itself is untouched.
    assert (mini_suite / "fix-add" / "repo" / "calc.py").read_text() == ADD
    assert not (mini_suite / "name-the-function" / "repo" / "ANSWER.txt").exists()


def test_text_report_has_the_summary(capsys: pytest.CaptureFixture[str], mini_suite: Path) -> None:
    code, out, _ = run_cli(
        capsys,
        "bench",
        "strategies",
        "--suite",
        str(mini_suite),
        "--provider",
        "scripted",
        "--concurrency",
        "3",
    )
    assert code == 0
    assert "bench strategies: 3 tasks, scripted replies (offline)" in out
    summary = {line.split()[0]: line.split()[1:3] for line in out.splitlines()[-4:-2]}
    assert summary == {"agent": ["3/3", "100%"], "refine": ["2/3", "67%"]}
    assert "refine vs agent: fixed 0, broke 1 (fix-add)" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_one_strategy_only(capsys: pytest.CaptureFixture[str], mini_suite: Path) -> None:
    code, out, _ = run_cli(
        capsys,
        "bench",
        "strategies",
        "--suite",
        str(mini_suite),
        "--strategies",
        "refine",
        "--provider",
        "scripted",
        "--json",
    )
    assert code == 0
    assert {r["strategy"] for r in json.loads(out)} == {"refine"}


def test_the_builtin_suite_offline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "bench", "strategies", "--provider", "scripted", "--concurrency", "4", "--json"
    )

    assert code == 0, err
    rows = [BenchRow(**row) for row in json.loads(out)]
    tasks = {r.task for r in rows}
    assert len(tasks) >= 12 and len(rows) == 2 * len(tasks)
    assert all(r.outcome == "answered" for r in rows)
    summary = summarize(rows)
    assert [(s.strategy, s.passed) for s in summary.strategies] == [("agent", 8), ("refine", 11)]
    assert summary.fixed == [
        "busiest-error-endpoint",
        "count-undocumented",
        "implement-slugify",
        "rename-function",
    ]
    assert summary.broke == ["port-range"]
    by = {(r.task, r.strategy): r for r in rows}
    assert by["ambiguous-cleanup", "agent"].passed and by["ambiguous-cleanup", "refine"].passed
    assert by["busiest-error-endpoint", "refine"].rounds == 3
    refine_tokens = summary.strategies[1].input_tokens
    assert refine_tokens > summary.strategies[0].input_tokens  # what the critic and extra rounds cost


async def test_every_builtin_script_runs_without_a_tool_error() -> None:
    """The scripts really edit files: every tool call of every run succeeds."""
    limiter = asyncio.Semaphore(4)
    observers: dict[tuple[str, str], RecordingObserver] = {}

    async def run(task: BenchTask, strategy: str) -> BenchRow:
        observer = observers[task.name, strategy] = RecordingObserver()
        async with limiter:
            return await run_task(task, strategy, Settings(provider="scripted"), observer=observer)

    tasks = load_suite(BUILTIN_SUITE)
    rows = await asyncio.gather(*(run(t, s) for t in tasks for s in ("agent", "refine")))

    assert all(r.outcome == "answered" for r in rows)
    for key, observer in observers.items():
        failed = [e.output[:200] for e in observer.events if isinstance(e, ToolCallFinished) and e.is_error]
        assert failed == [], key


def test_every_builtin_check_fails_on_the_untouched_repo(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("")
    for task in load_suite(BUILTIN_SUITE):
        copy = tmp_path / task.name
        shutil.copytree(task.repo, copy)
        passed, _ = asyncio.run(run_check(task, copy, answer))
        assert not passed, task.name


async def test_a_turn_past_its_timeout_is_cancelled_and_fails(tmp_path: Path) -> None:
    folder = make_task(
        tmp_path,
        "slow",
        prompt="wait",
        check="true",
        files={"a.txt": "a"},
        scripts={"agent": [[bash("t1", "sleep 20")], [text("done")]]},
        timeout=0.5,
    )
    row = await run_task(load_task(folder), "agent", Settings(provider="scripted"))
    assert row.outcome == "cancelled" and not row.passed
    assert row.seconds < 15


async def test_a_check_past_its_timeout_fails(tmp_path: Path) -> None:
    folder = make_task(
        tmp_path,
        "slow-check",
        prompt="hi",
        check="sleep 20",
        files={"a.txt": "a"},
        scripts={"agent": [[text("hello")]]},
        timeout=0.5,
    )
    row = await run_task(load_task(folder), "agent", Settings(provider="scripted"))
    assert row.outcome == "answered" and not row.passed
    assert row.error is not None and "longer than 0.5 s" in row.error


def test_rate_limited_runs_through_the_sdk_with_concurrency(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs at once against the fake; a 429 is retried by the SDK and both still pass."""
    suite = tmp_path / "suite"
    for name, word in (("first", "alpha"), ("second", "beta")):
        make_task(
            suite,
            name,
            prompt=f"Write the word {word} to ANSWER.txt.",
            check=f'test "$(cat ANSWER.txt)" = {word}',
            files={"README.md": "nothing here\n"},
            scripts={},
        )

    def reply(request: RecordedRequest) -> Reply:
        last = request.messages[-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return Reply("Done.")
        word = "alpha" if "alpha" in json.dumps(request.messages) else "beta"
        return Reply([ToolUse("bash", {"command": f"printf {word} > ANSWER.txt"})])

    fake.add(Error(429), *([reply] * 4))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    code, out, err = run_cli(
        capsys,
        "bench",
        "strategies",
        "--suite",
        str(suite),
        "--strategies",
        "agent",
        "--base-url",
        fake.base_url,
        "--concurrency",
        "2",
        "--json",
    )
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["task"], r["passed"], r["tool_calls"]) for r in rows] == [
        ("first", True, 1),
        ("second", True, 1),
    ]
    assert all(r["cost"] is not None and r["cost"] > 0 for r in rows)  # the default model has a price
    assert any(r.retry_count > 0 for r in fake.requests)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--strategies", "agent,chain"], "unknown strategy 'chain'"),
        (["--strategies", "agent,agent"], "named twice"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
    ],
)
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, "bench", "strategies", "--provider", "scripted", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tui-assist: bench strategies: ") and message in err


def test_a_scripted_run_needs_each_tasks_script(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    make_task(tmp_path, "t", prompt="p", check="true", files={"a": "a"}, scripts={"agent": [[text("x")]]})
    code, _, err = run_cli(capsys, "bench", "strategies", "--suite", str(tmp_path), "--provider", "scripted")
    assert code == 2 and "refine.json" in err and err.count("\n") == 1


def test_without_a_key_the_command_fails_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    make_task(tmp_path, "t", prompt="p", check="true", files={"a": "a"}, scripts={})
    code, out, err = run_cli(capsys, "bench", "strategies", "--suite", str(tmp_path))
    assert code == 1 and out == "" and err.count("\n") == 1 and "ANTHROPIC_API_KEY" in err


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('check = "true"', "`prompt` must be a non-empty string"),
        ('prompt = "p"', "`check` must be a non-empty shell command"),
        ('prompt = "p"\ncheck = "true"\ntimeout = 0', "`timeout` must be a positive number"),
        ('prompt = "p"\ncheck = "true"\nchek = "x"', "unknown key 'chek'"),
        ("prompt = ", "cannot read"),
    ],
)
def test_malformed_tasks_are_named(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "t" / "repo").mkdir(parents=True)
    (tmp_path / "t" / "task.toml").write_text(toml)
    with pytest.raises(SuiteError, match=message):
        load_task(tmp_path / "t")


def test_a_suite_needs_tasks_with_a_repo(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="holds no task"):
        load_suite(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.toml").write_text('prompt = "p"\ncheck = "true"')
    with pytest.raises(SuiteError, match="no repo/ folder"):
        load_suite(tmp_path)


def test_parse_strategies() -> None:
    assert parse_strategies("agent,refine") == ("agent", "refine")
    assert parse_strategies(" refine ") == ("refine",)
    with pytest.raises(ValueError):
        parse_strategies("")


def test_progress_bar_on_a_terminal_redraws_one_line() -> None:
    out = io.StringIO()
    progress = Progress(2, out=out, bar=True)
    row = BenchRow("t", "agent", True, "answered", 0, 1, 10, 5, None, 0.1)
    progress(row)
    progress(row)
    frames = out.getvalue().split("\r")[1:]
    assert len(frames) == 2 and frames[0].startswith("[##########..........] 1/2")
    assert frames[1].startswith("[####################] 2/2 2 passed") and frames[1].endswith("\n")


def test_the_wheel_ships_the_builtin_suite(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    import subprocess
    import sys
    import zipfile

    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for task in load_suite(BUILTIN_SUITE):
        folder = task.folder.relative_to(root)
        for path in task.folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert str(path.relative_to(root)) in shipped, path
        assert f"{folder}/task.toml" in shipped and f"{folder}/scripts/refine.json" in shipped


def test_without_a_terminal_each_run_is_a_line_as_it_starts_and_as_it_ends(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    for name in ("alpha", "beta"):
        make_task(
            tmp_path, name, prompt="p", check="true", files={"a": "a"}, scripts={"agent": [[text("ok")]]}
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TUI_ASSIST_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "tui_assist", "bench", "strategies", "--suite", str(tmp_path),
         "--provider", "scripted", "--strategies", "agent", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [line.removeprefix("tui-assist: bench strategies: ") for line in proc.stderr.splitlines()]
    assert [line.split(" (")[0] for line in lines] == [
        "started alpha agent",
        "[1/2] alpha agent: pass",
        "started beta agent",
        "[2/2] beta agent: pass",
    ]
    assert lines[0].endswith("(1/2)") and lines[2].endswith("(2/2)")
    assert [row["task"] for row in json.loads(proc.stdout)] == ["alpha", "beta"]


def test_the_bar_names_the_runs_under_way() -> None:
    out = io.StringIO()
    progress = Progress(2, out=out, bar=True)
    progress.started("t", "agent")
    progress.started("u", "agent")
    progress(BenchRow("t", "agent", True, "answered", 0, 1, 10, 5, None, 0.1))
    frames = out.getvalue().split("\r")[1:]
    assert frames[0].startswith("[....................] 0/2 0 passed  running: t agent")
    assert "running: t agent, u agent" in frames[1]
    assert frames[2].startswith("[##########..........] 1/2 1 passed  running: u agent")
