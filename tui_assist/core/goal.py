"""Goals: what a goal is, what its checks returned, and how the critic's verdict on it is read.

A goal is judged on evidence the critic gathers itself: before judging an attempt it runs every
check command (through the same rules and sandbox as the agent's calls) and reads their exit codes
and output, which it must cite as `[check N]`. The critic's word is not the last one: a goal
never ends `achieved` while a check fails, whatever the critic wrote (`judge`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from tui_assist.core.conversation import Message, TextBlock
from tui_assist.core.events import GoalCheck
from tui_assist.core.text import truncate_middle

DEFAULT_MAX_ATTEMPTS: Final = 5
"""Attempts a goal may make when the user names no other number."""
CHECK_OUTPUT_LIMIT: Final = 6_000
"""Characters of one check's output the critic sees; longer output keeps head and tail."""

GoalVerdict = Literal["pass", "revise", "unmet"]
"""`pass`: the goal is met; `revise`: another attempt; `unmet`: no attempt can meet it."""

_VERDICT = re.compile(r"^[\W_]*(pass|revise|unmet)(?![a-z])[\W_]*", re.IGNORECASE)
_VERDICTS: dict[str, GoalVerdict] = {"pass": "pass", "revise": "revise", "unmet": "unmet"}
_EXIT_STATUS = re.compile(r"\[exit status (\d+)\]\s*$")
_SHELL_EXITED = re.compile(r"\[the shell exited with status (\d+);[^\]]*\]\s*$")
_BLOCKED = re.compile(r"^\s*BLOCKED:\s*(.+)$", re.MULTILINE)

GOAL_CRITIC_PROMPT = """\
You are a strict reviewer deciding whether an assistant has met a goal. You receive the goal, the
EVIDENCE (every tool call the assistant made in this attempt and its actual result, numbered [1],
[2]...), the CHECKS (commands that verify the goal, which you ran yourself after the attempt, with
their exit codes and output, numbered [check 1], [check 2]...) and the assistant's answer.

The checks are ground truth. A check that exited non-zero means the goal is not met. Judge whether
the goal is met, completely, by what the evidence and the checks show, not by what the answer
claims.

Reply with one word alone on the first line:
- PASS: the goal is met. Cite the checks that show it, e.g. "[check 1] exited 0".
- REVISE: not yet. Follow with specific, actionable feedback for the next attempt, citing the
  checks' exit codes and the lines of their output that show what is wrong.
- UNMET: no further attempt can meet the goal as stated (say why, citing the evidence)."""

GOAL_TASK_TEMPLATE = """\
<goal>
{goal}
</goal>
Work towards this goal with your tools until it is met. {checks_line}
If you cannot go on without the user (a decision, a credential, a permission), stop and write a
line starting with `BLOCKED:` that says what you need."""

GOAL_FEEDBACK_TEMPLATE = """\
<previous_attempt>
{answer}
</previous_attempt>
<reviewer_feedback>
{feedback}
</reviewer_feedback>
<checks>
{checks}
</checks>
A reviewer ran the checks after your previous attempt and found the goal not met. Continue from
the current state of the files (earlier shell state is gone), address the feedback, and give your
final answer."""


@dataclass(frozen=True, slots=True)
class GoalSpec:
    """What the user asked for: the goal, the commands that verify it, and the attempt budget."""

    text: str
    checks: tuple[str, ...] = ()
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One run of a check command."""

    command: str
    exit_code: int | None
    """None when it did not run to an end (refused, timed out)."""
    output: str
    refused: bool = False
    """The rules or the user did not let it run."""

    @property
    def passed(self) -> bool:
        """Whether it ran and exited 0."""
        return self.exit_code == 0

    @property
    def summary(self) -> GoalCheck:
        """The check as `ask --json`, stream-json and the tree report it."""
        return GoalCheck(command=self.command, exit_code=self.exit_code)


def check_result(command: str, output: str, *, is_error: bool, refused: bool) -> CheckResult:
    """Read a check's exit code from the shell tool's result (a trailing `[exit status N]`).

    Args:
        command: The check command.
        output: The `bash` tool's result text.
        is_error: Whether the tool reported an error (a timeout, a failure to start).
        refused: Whether the approval policy refused the call.

    Returns:
        The check's result; a refused or timed-out check has no exit code.
    """
    if refused:
        return CheckResult(command, None, output, refused=True)
    if is_error:
        return CheckResult(command, None, output)
    match = _EXIT_STATUS.search(output) or _SHELL_EXITED.search(output)
    return CheckResult(command, int(match.group(1)) if match else 0, output)


def format_checks(results: Sequence[CheckResult]) -> str:
    """The checks as the critic and the next attempt read them: `[check N]`, command, exit, output."""
    if not results:
        return "(no check commands: judge by the evidence alone)"
    parts: list[str] = []
    for index, result in enumerate(results, 1):
        if result.refused:
            status = "not run: refused"
        elif result.exit_code is None:
            status = "did not finish"
        else:
            status = f"exit code {result.exit_code}"
        output = truncate_middle(result.output.rstrip(), CHECK_OUTPUT_LIMIT)
        parts.append(f"[check {index}] {result.command}\n{status}\noutput:\n{output}")
    return "\n\n".join(parts)


def goal_task(spec: GoalSpec) -> str:
    """The first attempt's request: the goal, and how it is checked."""
    if spec.checks:
        commands = ", ".join(f"`{c}`" for c in spec.checks)
        checks_line = f"When you stop, a reviewer runs {commands}: every one must exit 0."
    else:
        checks_line = "When you stop, a reviewer judges your work against the goal."
    return GOAL_TASK_TEMPLATE.format(goal=spec.text, checks_line=checks_line)


def with_checks(message: Message, results: Sequence[CheckResult]) -> Message:
    """The critic's message with a `<checks>` block before its last block (the candidate answer).

    The earlier blocks (context, goal) stay first, so the provider may cache them across attempts.
    """
    *head, answer = message.content
    checks = TextBlock(f"<checks>\n{format_checks(results)}\n</checks>")
    return Message(message.role, (*head, checks, answer))


def parse_goal_verdict(reply: str) -> tuple[GoalVerdict, str]:
    """Read the critic's reply: `PASS`, `REVISE` or `UNMET` first, the rest is feedback.

    A reply that starts with anything else counts as `revise`, all of it feedback.
    """
    text = reply.strip()
    first, _, rest = text.partition("\n")
    match = _VERDICT.match(first)
    if match is None:
        return "revise", text
    verdict = _VERDICTS[match.group(1).lower()]
    feedback = "\n".join(part for part in (first[match.end() :].strip(), rest.strip()) if part)
    return verdict, feedback


def judge(verdict: GoalVerdict, feedback: str, results: Sequence[CheckResult]) -> tuple[GoalVerdict, str]:
    """The verdict that stands: a `pass` while a check fails becomes `revise`, naming the checks.

    A `pass` that cites no check gets their exit codes added to its feedback.

    The critic reads the checks, but the rule that a failing check means the goal is not met is
    kept here, in code, whatever the critic wrote.
    """
    failing = [(i, r) for i, r in enumerate(results, 1) if not r.passed]
    if verdict == "pass" and results and not failing and "[check" not in feedback:
        # The critic must cite the checks; when it did not, the verdict carries their codes itself.
        cited = "; ".join(f"[check {i}] `{r.command}` exited 0" for i, r in enumerate(results, 1))
        return verdict, f"{feedback}\nChecks: {cited}.".lstrip()
    if verdict != "pass" or not failing:
        return verdict, feedback
    named = "; ".join(
        f"[check {i}] `{r.command}` " + ("did not finish" if r.exit_code is None else f"exited {r.exit_code}")
        for i, r in failing
    )
    return "revise", f"Not met: {named}.\n{feedback}".rstrip()


def blocked_reason(answer: str) -> str | None:
    """What the agent says it needs from the user (its `BLOCKED:` line), or None."""
    match = _BLOCKED.search(answer)
    return match.group(1).strip() if match else None
