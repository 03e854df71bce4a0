"""The session's goals: the one the next turn pursues, the one paused, and `/goal`'s words.

A host starts a goal by telling the session (`Goals.start`) and sending the goal's text as a
prompt: the turn that prompt runs is a `GoalTurn` (`ChatSession.strategy`). A goal the user
stopped (escape, SIGINT) is `paused`; `/goal resume` sends it again and it goes on from the
attempt it was at. `ask --goal`, the TUI's `/goal` and the ACP agent's `/goal` share this module.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_assist.core.goal import DEFAULT_MAX_ATTEMPTS, GoalSpec
from tui_assist.session.commands import CommandError

if TYPE_CHECKING:
    from tui_assist.core.turn import GoalReport, TurnDeps
    from tui_assist.session.controller import TurnController
    from tui_assist.turns.goal import GoalProgress, GoalTurn

GOAL_USAGE = '/goal TEXT [--check "CMD"]... [--max-attempts N] | /goal resume | /goal'
_FLAG = re.compile(r"(?:^|\s)--(?:check|max-attempts)(?:\s|=|$)")


@dataclass(slots=True)
class _Pending:
    spec: GoalSpec
    progress: GoalProgress | None = None


class Goals:
    """The goal the next turn pursues, and the last goal's progress (to resume a paused one)."""

    def __init__(self) -> None:
        self._pending: _Pending | None = None
        self.last: GoalTurn | None = None
        """The strategy of the latest goal turn (its `progress` says where it stands)."""

    def start(self, spec: GoalSpec) -> None:
        """The next turn whose prompt is `spec.text` pursues `spec`, afresh."""
        self._pending = _Pending(spec)

    @property
    def paused(self) -> GoalProgress | None:
        """The latest goal's progress when it was paused; None otherwise."""
        if self.last is None or self.last.progress.state != "paused":
            return None
        return self.last.progress

    def resume(self) -> GoalSpec:
        """The next turn whose prompt is the paused goal's text resumes it.

        Raises:
            CommandError: when no goal is paused.
        """
        progress = self.paused
        if progress is None:
            raise CommandError("no goal is paused (start one: /goal TEXT)")
        self._pending = _Pending(progress.spec, progress)
        return progress.spec

    def applies(self, prompt: str) -> bool:
        """Whether `prompt` runs as the pending goal's turn."""
        return self._pending is not None and self._pending.spec.text == prompt

    def strategy(self, deps: TurnDeps, *, critic_max_input_tokens: int) -> GoalTurn:
        """The pending goal's strategy (it is no longer pending)."""
        from tui_assist.turns.goal import GoalTurn

        assert self._pending is not None
        pending, self._pending = self._pending, None
        self.last = GoalTurn(
            deps, pending.spec, progress=pending.progress, critic_max_input_tokens=critic_max_input_tokens
        )
        return self.last


def parse_goal(args: str) -> GoalSpec:
    """The goal `/goal TEXT [--check "CMD"]... [--max-attempts N]` asks for.

    Raises:
        CommandError: when TEXT is missing or a flag is malformed.
    """
    match = _FLAG.search(args)
    text, flags = (args[: match.start()], args[match.start() :]) if match else (args, "")
    text = text.strip()
    if not text:
        raise CommandError(f"usage: {GOAL_USAGE}")
    try:
        words = shlex.split(flags)
    except ValueError as exc:
        raise CommandError(f"cannot read the flags ({exc}); usage: {GOAL_USAGE}") from exc
    checks: list[str] = []
    attempts = DEFAULT_MAX_ATTEMPTS
    while words:
        flag, _, value = words.pop(0).partition("=")
        if not value and words:
            value = words.pop(0)
        if flag == "--check" and value.strip():
            checks.append(value.strip())
        elif flag == "--max-attempts" and value.isdigit() and int(value) >= 1:
            attempts = int(value)
        else:
            raise CommandError(f"cannot read {flag} {value}".rstrip() + f"; usage: {GOAL_USAGE}")
    return GoalSpec(text, tuple(checks), attempts)


def start_goal(goals: Goals, args: str, *, running: bool) -> str | None:
    """What `/goal ARGS` sends: the prompt of the goal it starts or resumes; None for `/goal` alone.

    Raises:
        CommandError: while a turn runs, or when ARGS cannot be read.
    """
    if not args.strip():
        return None
    if running:
        raise CommandError("a turn is running: start the goal when it ends")
    if args.strip() == "resume":
        return goals.resume().text
    spec = parse_goal(args)
    goals.start(spec)
    return spec.text


def goal_status(goals: Goals) -> str:
    """What `/goal` alone says: the latest goal and where it stands."""
    if goals.last is None:
        return f"No goal yet. Start one: `{GOAL_USAGE}`"
    progress = goals.last.progress
    line = f"**Goal** · {progress.spec.text}\n\n{describe_goal(progress.report())}"
    return line + ("\n\n`/goal resume` goes on from here." if progress.state == "paused" else "")


def describe_goal(report: GoalReport) -> str:
    """One line: the goal's state, its attempts and its checks' exit codes."""
    checks = ", ".join(
        f"`{c.command}` → {'?' if c.exit_code is None else c.exit_code}" for c in report.checks
    )
    return f"{report.state} after {report.attempts} attempt(s)" + (f" · checks: {checks}" if checks else "")


async def run_goal(controller: TurnController, args: str) -> str:
    """`/goal` for hosts that wait for the turn (ACP, `ask "/goal ..."`): run it, say how it ended.

    Raises:
        CommandError: while a turn runs, or when ARGS cannot be read.
    """
    goals = controller.session.goals
    prompt = start_goal(goals, args, running=controller.running)
    if prompt is None:
        return goal_status(goals)
    ended = await controller.run_prompt(prompt)
    if ended.outcome is None:
        raise CommandError(ended.problem or "the goal did not run")
    report = ended.outcome.result.goal
    return f"Goal {describe_goal(report)}" if report is not None else "The goal did not run."
