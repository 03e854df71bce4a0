"""`tui-assist bench strategies`: what refine buys over an agent turn, on tasks a checker grades.

A suite is a folder of tasks. A task is a folder with `task.toml` (`prompt`, `check`: a shell
command, `timeout`: seconds) and `repo/`, the files a run starts from. Each (task, strategy) pair
runs as one headless turn, every tool call approved (`ask --yes`), in a fresh copy of `repo/` with
a throwaway data dir; then the check runs in that copy, and exit status 0 is a pass. The model
never sees the check: it lives beside `repo/`, never in the copy. The check finds the turn's final
answer in the file named by `$TUI_ASSIST_ANSWER` (so a task whose right answer is a question can be
graded) and the task's folder in `$TUI_ASSIST_TASK_DIR` (hidden tests, the pristine `repo/`).

Runs go through `ChatSession.run_turn`, where every host's turns end up (through the
controller), so the numbers are those of the real product path: the same strategies, tools,
approval policy, retries and store. Runs share one limiter (`--concurrency`); the SDK's own
retries honour rate limits (`retry-after`).

With `--provider scripted`, each task's `scripts/<strategy>.json` is replayed (the offline
provider's format), so the built-in suite runs without a key and shows the mechanics.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from tui_assist.core.text import token_count
from tui_assist.session.config_source import ConfigError

if TYPE_CHECKING:
    from tui_assist.core.observer import TurnObserver
    from tui_assist.session.chat import TurnOutcome
    from tui_assist.session.config import Settings

BUILTIN_SUITE: Final = Path(__file__).parent / "strategy_suite"
"""The suite that ships with the package."""
STRATEGIES: Final = ("agent", "refine", "goal")
"""`goal` runs only the tasks that name a `goal_check` (the checks the goal is given)."""
ANSWER_ENV: Final = "TUI_ASSIST_ANSWER"
"""The variable that names, for the check, the file holding the turn's final answer."""
TASK_DIR_ENV: Final = "TUI_ASSIST_TASK_DIR"
"""The variable that names, for the check, the task's folder (hidden tests, the pristine repo)."""
DEFAULT_TIMEOUT: Final = 300.0
"""Seconds a task's turn (and, separately, its check) may take when its `task.toml` says nothing."""
_TASK_KEYS: Final = frozenset({"prompt", "check", "timeout", "description", "goal_check"})


class SuiteError(ConfigError):
    """The suite or one of its tasks is malformed; the message says which file and how."""


@dataclass(frozen=True, slots=True)
class BenchTask:
    """One task of a suite."""

    name: str
    """The task folder's name."""
    folder: Path
    prompt: str
    """What the model is asked."""
    check: str
    """A shell command run in the copy after the turn; exit status 0 is a pass."""
    timeout: float
    """Seconds the turn may take; the check gets as long again."""
    goal_checks: tuple[str, ...] = ()
    """The check commands a `goal` run is given (the model sees them, unlike `check`)."""

    @property
    def repo(self) -> Path:
        """The files a run starts from."""
        return self.folder / "repo"

    def runs(self, strategy: str) -> bool:
        """Whether the task runs with `strategy`: a goal needs the checks it is given."""
        return strategy != "goal" or bool(self.goal_checks)

    def script(self, strategy: str) -> Path:
        """The replies `--provider scripted` replays for `strategy`."""
        return self.folder / "scripts" / f"{strategy}.json"


def load_task(folder: Path) -> BenchTask:
    """Read one task folder.

    Raises:
        SuiteError: when `task.toml` or `repo/` is missing or malformed.
    """
    spec = folder / "task.toml"
    if not spec.is_file():
        raise SuiteError(f"{folder} is not a task: it has no task.toml")
    try:
        data: dict[str, Any] = tomllib.loads(spec.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(f"cannot read {spec}: {exc}") from exc
    unknown = sorted(set(data) - _TASK_KEYS)
    if unknown:
        raise SuiteError(f"{spec}: unknown key {unknown[0]!r} (use prompt, check, timeout, goal_check)")
    prompt, check, timeout = data.get("prompt"), data.get("check"), data.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(prompt, str) or not prompt.strip():
        raise SuiteError(f"{spec}: `prompt` must be a non-empty string")
    if not isinstance(check, str) or not check.strip():
        raise SuiteError(f"{spec}: `check` must be a non-empty shell command")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise SuiteError(f"{spec}: `timeout` must be a positive number of seconds")
    if not (folder / "repo").is_dir():
        raise SuiteError(f"{folder} has no repo/ folder (the files a run starts from)")
    goal = data.get("goal_check", [])
    goal_checks = [goal] if isinstance(goal, str) else goal
    if not isinstance(goal_checks, list) or not all(isinstance(c, str) and c.strip() for c in goal_checks):
        raise SuiteError(f"{spec}: `goal_check` must be a shell command or a list of them")
    checks = tuple(str(c) for c in goal_checks)
    return BenchTask(folder.name, folder, prompt, check, float(timeout), checks)


def load_suite(folder: Path) -> list[BenchTask]:
    """Read every task of a suite, sorted by name (hidden folders and plain files are skipped).

    Raises:
        SuiteError: when the folder holds no task, or a task is malformed.
    """
    if not folder.is_dir():
        raise SuiteError(f"suite {folder} is not a folder")
    tasks = [
        load_task(child)
        for child in sorted(folder.iterdir())
        if child.is_dir() and not child.name.startswith((".", "_"))
    ]
    if not tasks:
        raise SuiteError(f"suite {folder} holds no task (folders with task.toml and repo/)")
    return tasks


def parse_strategies(text: str) -> tuple[str, ...]:
    """`agent,refine` -> `("agent", "refine")`.

    Raises:
        ValueError: for an unknown, repeated or missing strategy.
    """
    names = tuple(part.strip() for part in text.split(","))
    for name in names:
        if name not in STRATEGIES:
            raise ValueError(f"unknown strategy {name!r} (use agent, refine, goal, or a list: agent,refine)")
    if len(set(names)) != len(names):
        raise ValueError(f"a strategy is named twice in {text!r}")
    return names


@dataclass(slots=True)
class BenchRow:
    """One (task, strategy) run. `to_dict` is the `--json` row (a contract)."""

    task: str
    strategy: str
    passed: bool
    outcome: str
    """The turn's outcome (`answered`, `unverified`, ..., `cancelled` when it timed out)."""
    rounds: int
    """Refine rounds run, or a goal's attempts (0 for an agent turn, as `ask --json` lists none)."""
    tool_calls: int
    input_tokens: int
    """Every input token, cached or not (the cost prices them apart)."""
    output_tokens: int
    cost: float | None
    """USD at the configured price of the model; None when it has none."""
    seconds: float
    """Wall time of the turn (not of copying the repo or of the check)."""
    error: str | None = None
    """Why the turn failed or the check could not run, for the text report."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON row, these ten fields: `task, strategy, passed, outcome, rounds, tool_calls, ...`."""
        return {
            "task": self.task,
            "strategy": self.strategy,
            "passed": self.passed,
            "outcome": self.outcome,
            "rounds": self.rounds,
            "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": None if self.cost is None else round(self.cost, 6),
            "seconds": round(self.seconds, 2),
        }


RowCallback = Callable[[BenchRow], None]
StartCallback = Callable[[str, str], None]
"""Told (task name, strategy) as a run starts."""


async def run_suite(
    tasks: Sequence[BenchTask],
    settings: Settings,
    *,
    strategies: Sequence[str] = STRATEGIES,
    rounds: int | None = None,
    concurrency: int = 1,
    on_row: RowCallback | None = None,
    on_start: StartCallback | None = None,
) -> list[BenchRow]:
    """Run every (task, strategy) pair, at most `concurrency` at once.

    Args:
        tasks: The suite's tasks.
        settings: The provider, model, prices and tool settings every run starts from.
        strategies: Which strategies to run, each on every task.
        rounds: Refine's round budget; None: the settings' own.
        concurrency: How many runs may be in flight at once (one limiter for all).
        on_row: Called as each run finishes, in finishing order.
        on_start: Called as each run starts (once it has its place under `concurrency`).

    Returns:
        The rows, in task order, then strategy order (not finishing order).

    Raises:
        ValueError: when `concurrency` is below 1.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    limiter = asyncio.Semaphore(concurrency)

    async def limited(task: BenchTask, strategy: str) -> BenchRow:
        async with limiter:
            if on_start is not None:
                on_start(task.name, strategy)
            row = await run_task(task, strategy, settings, rounds=rounds)
        if on_row is not None:
            on_row(row)
        return row

    async with asyncio.TaskGroup() as group:
        runs = [
            group.create_task(limited(task, strategy))
            for task in tasks
            for strategy in strategies
            if task.runs(strategy)
        ]
    return [run.result() for run in runs]


async def run_task(
    task: BenchTask,
    strategy: str,
    settings: Settings,
    *,
    rounds: int | None = None,
    observer: TurnObserver | None = None,
) -> BenchRow:
    """Run one task with one strategy in a fresh copy of its repo, then grade it with its check.

    Args:
        task: The task.
        strategy: `agent`, `refine` or `goal` (a task with `goal_checks`).
        settings: What every run starts from (provider, model, prices, tools).
        rounds: Refine's round budget; None: the settings' own.
        observer: Told every event of the turn (approvals never ask it: every call is allowed).

    Returns:
        The row; a turn that failed or timed out is a row too (not passed), never an exception.
    """
    with tempfile.TemporaryDirectory(prefix=f"tui-assist-bench-{task.name}-{strategy}-") as tmp:
        workdir = Path(tmp) / "repo"
        await asyncio.to_thread(shutil.copytree, task.repo, workdir, symlinks=True)
        started = time.monotonic()
        outcome, error = await _run_turn(
            task, strategy, settings, workdir, Path(tmp) / "data", rounds, observer
        )
        seconds = time.monotonic() - started
        if outcome is None:
            return BenchRow(task.name, strategy, False, "error", 0, 0, 0, 0, None, seconds, error)
        result = outcome.result
        answer_file = Path(tmp) / "answer.txt"
        answer_file.write_text(result.answer, encoding="utf-8")
        if result.outcome in ("error", "cancelled"):  # no answer: nothing to grade
            passed, check_error = False, None
        else:
            passed, check_error = await run_check(task, workdir, answer_file)
        cost = _cost(settings, result.usage)
        return BenchRow(
            task=task.name,
            strategy=strategy,
            passed=passed,
            outcome=result.outcome,
            rounds=len(result.rounds),
            tool_calls=result.tool_calls,
            input_tokens=result.usage.total_input_tokens,
            output_tokens=result.usage.output_tokens,
            cost=cost,
            seconds=seconds,
            error=result.error or check_error,
        )


async def _run_turn(
    task: BenchTask,
    strategy: str,
    settings: Settings,
    workdir: Path,
    data_dir: Path,
    rounds: int | None,
    observer: TurnObserver | None,
) -> tuple[TurnOutcome | None, str | None]:
    """One headless turn as `ask --yes` runs it; None and why when the session cannot start."""
    from tui_assist.session.chat import ChatSession
    from tui_assist.session.controller import TurnController
    from tui_assist.session.headless import HeadlessHost

    update: dict[str, Any] = {
        "workdir": workdir,
        "data_dir": data_dir,
        "refine": strategy == "refine",
        "mcp_servers": {},  # a benchmark measures the built-in tools, not whatever the user runs
        "checkpoints": False,  # a throwaway copy needs no way back
    }
    if rounds is not None:
        update["rounds"] = rounds
    if settings.provider == "scripted":
        update["script"] = task.script(strategy)
    session = ChatSession(settings.model_copy(update=update), mode="bypass")
    try:
        await session.load()
        if session.provider is None:
            return None, session.provider_problem or "no provider"
        if strategy == "goal":  # the same attempt budget as refine's rounds
            from tui_assist.core.goal import GoalSpec

            session.goals.start(GoalSpec(task.prompt, task.goal_checks, session.rounds))
        host = HeadlessHost(progress=False, observer=observer)
        controller = host.controller = TurnController(session, host)
        timer = asyncio.get_running_loop().call_later(task.timeout, controller.cancel)
        try:
            ended = await controller.run_prompt(task.prompt)  # a task's prompt is never a command
        finally:
            timer.cancel()
        return ended.outcome, ended.problem
    except Exception as exc:  # one run's failure must not end the benchmark
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        await session.aclose()


async def run_check(task: BenchTask, workdir: Path, answer_file: Path) -> tuple[bool, str | None]:
    """Run the task's check in `workdir`; it passes when it exits 0 within the task's timeout.

    Returns:
        Whether it passed, and why not when it could not run or timed out.
    """
    env = {**os.environ, ANSWER_ENV: str(answer_file), TASK_DIR_ENV: str(task.folder.resolve())}
    try:
        process = await asyncio.create_subprocess_shell(
            task.check,
            cwd=workdir,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # so a timeout can stop everything the check started
        )
    except OSError as exc:
        return False, f"the check could not start: {exc}"
    try:
        code = await asyncio.wait_for(process.wait(), task.timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return False, f"the check took longer than {task.timeout:g} s"
    return code == 0, None


def _cost(settings: Settings, usage: Any) -> float | None:
    from tui_assist.session.meter import cost_of, price_for

    return cost_of(usage, price_for(settings.prices, settings.resolved_model))


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True, slots=True)
class StrategySummary:
    """How one strategy did over the suite; token, cost and time figures are means per task."""

    strategy: str
    runs: int
    passed: int
    input_tokens: float
    output_tokens: float
    cost: float | None
    seconds: float

    @property
    def pass_rate(self) -> float:
        """Share of runs that passed."""
        return self.passed / self.runs if self.runs else 0.0


@dataclass(frozen=True, slots=True)
class Summary:
    """The suite's result: per strategy, and refine against agent task by task."""

    strategies: list[StrategySummary]
    fixed: list[str]
    """Tasks refine passed that the agent turn failed."""
    broke: list[str]
    """Tasks the agent turn passed that refine failed."""


def summarize(rows: Sequence[BenchRow]) -> Summary:
    """Pass rates and means per strategy; which tasks refine fixed and broke against agent."""
    summaries: list[StrategySummary] = []
    for strategy in dict.fromkeys(r.strategy for r in rows):
        mine = [r for r in rows if r.strategy == strategy]
        costs = [r.cost for r in mine]
        summaries.append(
            StrategySummary(
                strategy=strategy,
                runs=len(mine),
                passed=sum(r.passed for r in mine),
                input_tokens=sum(r.input_tokens for r in mine) / len(mine),
                output_tokens=sum(r.output_tokens for r in mine) / len(mine),
                cost=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs) / len(mine),
                seconds=sum(r.seconds for r in mine) / len(mine),
            )
        )
    agent = {r.task: r.passed for r in rows if r.strategy == "agent"}
    refine = {r.task: r.passed for r in rows if r.strategy == "refine"}
    both = [task for task in agent if task in refine]
    return Summary(
        summaries,
        fixed=[t for t in both if refine[t] and not agent[t]],
        broke=[t for t in both if agent[t] and not refine[t]],
    )


def format_report(rows: Sequence[BenchRow], summary: Summary, *, source: str) -> str:
    """The text report: one line per run, then the summary. Fits 80 columns.

    Args:
        rows: The runs.
        summary: `summarize(rows)`.
        source: What ran the tasks (provider and model), for the heading.
    """
    width = max([len("task"), *(len(r.task) for r in rows)])
    lines = [
        f"bench strategies: {len({r.task for r in rows})} tasks, {source}",
        "",
        f"{'task':<{width}}  {'strategy':<8} {'result':<6} {'outcome':<16} {'rnd':>3} {'calls':>5} "
        f"{'tokens':>7} {'time':>6}",
    ]
    for r in rows:
        tokens = token_count(r.input_tokens + r.output_tokens)
        result = "pass" if r.passed else "FAIL"
        lines.append(
            f"{r.task:<{width}}  {r.strategy:<8} {result:<6} {r.outcome:<16} {r.rounds:>3} "
            f"{r.tool_calls:>5} {tokens:>7} {r.seconds:>5.1f}s"
        )
    lines += [
        "",
        f"{'strategy':<8} {'passed':>9} {'rate':>5}  {'in tok/task':>11} {'out tok/task':>12} "
        f"{'cost/task':>9} {'time/task':>9}",
    ]
    for s in summary.strategies:
        cost = "n/a" if s.cost is None else f"${s.cost:.4f}"
        tokens_in, tokens_out = token_count(s.input_tokens), token_count(s.output_tokens)
        lines.append(
            f"{s.strategy:<8} {f'{s.passed}/{s.runs}':>9} {s.pass_rate:>5.0%}  {tokens_in:>11} "
            f"{tokens_out:>12} {cost:>9} {s.seconds:>8.1f}s"
        )
    strategies = {s.strategy for s in summary.strategies}
    if {"agent", "refine"} <= strategies:
        lines += [
            "",
            f"refine vs agent: fixed {len(summary.fixed)}{_names(summary.fixed)}, "
            f"broke {len(summary.broke)}{_names(summary.broke)}",
        ]
    return "\n".join(lines) + "\n"


def _names(tasks: list[str]) -> str:
    return f" ({', '.join(tasks)})" if tasks else ""


# --------------------------------------------------------------------------- progress


class Progress:
    """Reports runs as they start and finish on stderr: a redrawn bar on a terminal, else lines."""

    def __init__(self, total: int, *, out: TextIO | None = None, bar: bool | None = None) -> None:
        self.total = total
        self.started_count = 0
        self.done = 0
        self.passed = 0
        self.running: list[str] = []
        """`task strategy` of the runs under way, oldest first."""
        self._out = out or sys.stderr
        self._bar = self._out.isatty() if bar is None else bar

    def started(self, task: str, strategy: str) -> None:
        """Show one run starting."""
        self.started_count += 1
        self.running.append(f"{task} {strategy}")
        if self._bar:
            self._draw()
        else:
            self._line(f"started {task} {strategy} ({self.started_count}/{self.total})")

    def __call__(self, row: BenchRow) -> None:
        """Count one finished run and show it."""
        self.done += 1
        self.passed += row.passed
        name = f"{row.task} {row.strategy}"
        if name in self.running:
            self.running.remove(name)
        verdict = "pass" if row.passed else "FAIL"
        if not self._bar:
            self._line(f"[{self.done}/{self.total}] {name}: {verdict} ({row.outcome}, {row.seconds:.1f}s)")
            return
        self._draw(f"last: {name} {verdict}")

    def _line(self, text: str) -> None:
        print(f"tui-assist: bench strategies: {text}", file=self._out, flush=True)

    def _draw(self, last: str = "") -> None:
        filled = round(20 * self.done / self.total) if self.total else 20
        now = f"running: {', '.join(self.running)}" if self.running else last
        line = f"\r[{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total} {self.passed} passed  {now}"
        self._out.write(line[:79].ljust(79))
        if self.done == self.total:
            self._out.write("\n")
        self._out.flush()
