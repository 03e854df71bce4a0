"""`GoalTurn`: the agent attempts a goal until a critic that ran the checks itself says it is met.

The goal's checks run first: when every one passes already, the goal is `achieved` with no
attempt. Otherwise each attempt is a `round` node holding a full agent (`generate`) and the critic,
which runs every check under its own node, then judges the attempt's evidence, the checks' exit
codes and output, and the answer. The next attempt gets the critic's feedback and the checks.
Attempts work on the real workdir, one after another: each continues where the last left the files.

The goal ends `achieved` (the critic passed it and every check exits 0: enforced in `core.goal.judge`),
`unmet` (the critic says no attempt can meet it), `budget-limited` (`max_attempts`, or the turn's
token and request budget), `blocked` (the agent wrote `BLOCKED:` or a check was refused) or
`paused` (the turn was cancelled, or the provider failed; `progress` is kept, so a new `GoalTurn`
over it resumes).
Only the clean `goal -> last answer` pair enters the history, as in a refine turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_assist.core.agent import run_agent
from tui_assist.core.budget import BudgetExhausted, BudgetTracker
from tui_assist.core.conversation import Block, ImageBlock, Message, TextBlock, Usage
from tui_assist.core.critic import CRITIC_MAX_TOKENS, DEFAULT_CRITIC_INPUT_TOKENS, critic_message
from tui_assist.core.events import GoalState, GoalUpdated, UsageRecorded, VerdictReached
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.goal import (
    GOAL_CRITIC_PROMPT,
    GOAL_FEEDBACK_TEMPLATE,
    CheckResult,
    GoalSpec,
    GoalVerdict,
    blocked_reason,
    format_checks,
    goal_task,
    judge,
    parse_goal_verdict,
    with_checks,
)
from tui_assist.core.model import ModelRequest, ProviderError
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import NodeSink, TurnObserver
from tui_assist.core.text import estimate_tokens
from tui_assist.core.turn import (
    GoalReport,
    Outcome,
    RoundRecord,
    Stopwatch,
    StrategyName,
    TurnDeps,
    TurnRequest,
    TurnResult,
    TurnStrategy,
)
from tui_assist.turns.goal_checks import ChecksApprover, run_checks

_OUTCOMES: dict[GoalState, Outcome] = {
    "achieved": "answered",
    "unmet": "unverified",
    "budget-limited": "budget_exhausted",
    "blocked": "unverified",
    "running": "unverified",
    "paused": "cancelled",
}


@dataclass(slots=True)
class GoalProgress:
    """Where a goal stands; kept across a pause, so `/goal resume` goes on from here."""

    spec: GoalSpec
    state: GoalState = "running"
    attempts: int = 0
    answer: str = ""
    """The last attempt's answer."""
    feedback: str = ""
    """The critic's feedback on it."""
    checks: list[CheckResult] = field(default_factory=lambda: list[CheckResult]())
    """The checks as they last ran."""

    def report(self) -> GoalReport:
        """The goal as `ask --json` reports it."""
        return GoalReport(self.state, self.attempts, tuple(c.summary for c in self.checks))


@dataclass(frozen=True, slots=True)
class _Attempt:
    answer: str
    evidence: list[ToolCallRecord]
    transcript: list[Message]
    usage: Usage
    finished: bool
    """False when the budget cut it short."""


class GoalTurn(TurnStrategy):
    """Attempts, each judged by a critic that runs the goal's checks, until the goal ends.

    Args:
        deps: The provider, tools, policy, budget and prompts.
        spec: The goal, its check commands and its attempt budget.
        progress: A paused goal's progress, to resume it; None starts afresh.
        critic_max_input_tokens: Estimated tokens the critic's input may take.
    """

    name: StrategyName = "goal"

    def __init__(
        self,
        deps: TurnDeps,
        spec: GoalSpec,
        *,
        progress: GoalProgress | None = None,
        critic_max_input_tokens: int = DEFAULT_CRITIC_INPUT_TOKENS,
    ) -> None:
        self.deps = deps
        self.spec = spec
        self.progress = progress if progress is not None else GoalProgress(spec)
        self.critic_max_input_tokens = critic_max_input_tokens
        self.approver = ChecksApprover(spec.checks)

    async def play(self, request: TurnRequest, observer: TurnObserver) -> TurnResult:
        """Run the goal until it ends, or is paused by a cancel."""
        clock = Stopwatch()
        budget = BudgetTracker(self.deps.budget)
        history = list(request.conversation.messages)
        progress = self.progress
        progress.state = "running"
        rounds: list[RoundRecord] = []
        error: str | None = None
        label = f"goal (≤{self.spec.max_attempts} attempts)"
        with NodeScope(observer, "turn", label, None, detail=request.prompt, node_id=request.turn_id) as turn:
            try:
                await self._pursue(request, observer, turn.node_id, budget, history, rounds)
            except asyncio.CancelledError:
                progress.state = "paused"
                self._report(observer, turn.node_id)
                raise
            except BudgetExhausted as exc:
                progress.state, error = "budget-limited", str(exc)
            except ProviderError as exc:  # not judged unmeetable: stopped, and `/goal resume` goes on
                progress.state, error = "paused", str(exc)
                self._report(observer, turn.node_id)
                turn.finish(outcome="error", error=error)
                return TurnResult(
                    turn.node_id, self.name, request.prompt, "", "error", budget.usage, [], rounds,
                    error=error, duration=clock.elapsed, goal=progress.report(),
                )  # fmt: skip
            self._report(observer, turn.node_id)
            answer = progress.answer or _no_attempt_answer(progress)
            outcome = _OUTCOMES[progress.state]
            if progress.state == "budget-limited" and error is None:
                error = f"the goal was not met in {progress.attempts} attempt(s)"
            added = [Message.user(request.prompt, request.images), Message.assistant(answer)]
            request.conversation.messages.extend(added)
            turn.finish(outcome=outcome, output=answer)
            return TurnResult(
                turn.node_id, self.name, request.prompt, answer, outcome, budget.usage, added, rounds,
                error=error, duration=clock.elapsed, goal=progress.report(),
            )  # fmt: skip

    async def _pursue(
        self,
        request: TurnRequest,
        observer: TurnObserver,
        turn_id: str,
        budget: BudgetTracker,
        history: list[Message],
        rounds: list[RoundRecord],
    ) -> None:
        """Check first, then attempt and judge until the goal ends; the end is in `progress.state`."""
        progress = self.progress
        progress.checks = await self._run_checks(observer, turn_id)
        if self._refused(progress.checks):
            return
        if self.spec.checks and all(c.passed for c in progress.checks):
            progress.state = "achieved"  # met before any attempt: none is made
            return
        self._report(observer, turn_id)
        while progress.attempts < self.spec.max_attempts:
            index = progress.attempts + 1
            task = self._task(request.images)
            with NodeScope(observer, "round", f"attempt {index}", turn_id, detail=task.text) as node:
                attempt = await self._attempt(observer, budget, history, task, node.node_id)
                progress.attempts, progress.answer = index, attempt.answer
                if not attempt.finished:
                    rounds.append(
                        _record(index, attempt, "revise", "(not judged: the budget ran out)", Usage())
                    )
                    raise BudgetExhausted("the budget ran out during the attempt")
                needs = blocked_reason(attempt.answer)
                if needs is not None:
                    progress.state, progress.feedback = "blocked", needs
                    rounds.append(_record(index, attempt, "revise", f"(blocked: {needs})", Usage()))
                    node.finish(outcome="blocked", output=attempt.answer)
                    return
                verdict, usage = await self._judge(observer, budget, history, attempt, index, node.node_id)
                rounds.append(
                    _record(
                        index, attempt, "pass" if verdict == "pass" else "revise", progress.feedback, usage
                    )
                )
                node.finish(outcome=verdict, output=attempt.answer)
            if self._refused(progress.checks):
                return
            if verdict == "pass":
                progress.state = "achieved"
                return
            if verdict == "unmet":
                progress.state = "unmet"
                return
            if progress.attempts < self.spec.max_attempts:  # the last one is reported as the end
                self._report(observer, turn_id)
        progress.state = "budget-limited"

    def _task(self, images: Sequence[ImageBlock]) -> Message:
        """The attempt's request: the goal, and from the second on the feedback and the checks."""
        progress = self.progress
        blocks: list[Block] = [*images, TextBlock(goal_task(self.spec))]
        if progress.attempts:
            blocks.append(
                TextBlock(
                    GOAL_FEEDBACK_TEMPLATE.format(
                        answer=progress.answer,
                        feedback=progress.feedback,
                        checks=format_checks(progress.checks),
                    )
                )
            )
        elif progress.checks:
            blocks.append(
                TextBlock(f"The checks, run just now:\n<checks>\n{format_checks(progress.checks)}\n</checks>")
            )
        return Message("user", tuple(blocks))

    async def _attempt(
        self,
        observer: TurnObserver,
        budget: BudgetTracker,
        history: list[Message],
        task: Message,
        parent_id: str,
    ) -> _Attempt:
        toolbox = self.deps.toolbox_factory()
        rt = self.deps.runtime(toolbox, observer, budget)
        try:
            generated = await run_agent(
                rt,
                [*history, task],
                parent_id=parent_id,
                node_kind="generate",
                label="generate",
                stable_prefix=len(history),
            )
        finally:
            await toolbox.aclose()
        return _Attempt(
            generated.answer,
            rt.evidence,
            [task, *generated.messages],
            generated.usage,
            generated.outcome == "answered",
        )

    async def _judge(
        self,
        observer: TurnObserver,
        budget: BudgetTracker,
        history: list[Message],
        attempt: _Attempt,
        index: int,
        parent_id: str,
    ) -> tuple[GoalVerdict, Usage]:
        """The critic: run the checks, ask the model, and let no failing check pass."""
        progress = self.progress
        with NodeScope(observer, "critic", "critic", parent_id) as node:
            progress.checks = await self._run_checks(observer, node.node_id)
            if any(c.refused for c in progress.checks):  # nothing to judge on: the goal is blocked
                node.finish(outcome="blocked")
                return "revise", Usage()
            budget.before_model_request()
            message = with_checks(
                critic_message(
                    self.spec.text,
                    attempt.evidence,
                    attempt.answer,
                    history=history,
                    max_input_tokens=self.critic_max_input_tokens,
                    reserved_tokens=estimate_tokens(GOAL_CRITIC_PROMPT),
                ),
                progress.checks,
            )
            request = ModelRequest(
                system=GOAL_CRITIC_PROMPT,
                messages=[message],
                tools=(),
                max_tokens=CRITIC_MAX_TOKENS,
                stable_blocks=len(message.content) - 3,  # the evidence, checks and answer change
                cache_tail=False,
            )
            response = await self.deps.provider.complete(request, NodeSink(observer, node.node_id))
            budget.record(response.usage)
            observer.on_event(UsageRecorded(node_id=node.node_id, usage=response.usage, model=response.model))
            verdict, feedback = judge(*parse_goal_verdict(response.message.text), progress.checks)
            progress.feedback = feedback
            observer.on_event(
                VerdictReached(
                    node_id=node.node_id,
                    round=index,
                    verdict="pass" if verdict == "pass" else "revise",
                    feedback=feedback,
                )
            )
            node.finish(outcome=verdict, output=feedback)
            return verdict, response.usage

    async def _run_checks(self, observer: TurnObserver, parent_id: str) -> list[CheckResult]:
        if not self.spec.checks:
            return []
        return await run_checks(
            self.spec.checks,
            toolbox_factory=self.deps.toolbox_factory,
            approvals=self.deps.approvals,
            observer=self.approver.over(observer),
            parent_id=parent_id,
            before_side_effect=self.deps.before_side_effect,
        )

    def _refused(self, checks: Sequence[CheckResult]) -> bool:
        """Whether a check was not let run: the goal is `blocked` until the user allows it."""
        refused = [c.command for c in checks if c.refused]
        if refused:
            self.progress.state = "blocked"
            self.progress.feedback = f"the check {', '.join(f'`{c}`' for c in refused)} was not approved"
        return bool(refused)

    def _report(self, observer: TurnObserver, turn_id: str) -> None:
        progress = self.progress
        observer.on_event(
            GoalUpdated(
                node_id=turn_id,
                state=progress.state,
                attempts=progress.attempts,
                checks=tuple(c.summary for c in progress.checks),
            )
        )


def _record(index: int, attempt: _Attempt, verdict: str, feedback: str, critic_usage: Usage) -> RoundRecord:
    return RoundRecord(
        index=index,
        answer=attempt.answer,
        verdict="pass" if verdict == "pass" else "revise",
        feedback=feedback,
        evidence=attempt.evidence,
        transcript=attempt.transcript,
        usage=attempt.usage + critic_usage,
        critic_usage=critic_usage,
    )


def _no_attempt_answer(progress: GoalProgress) -> str:
    """The answer of a goal that ended before any attempt answered."""
    if progress.state == "achieved":
        return "The goal is already met: every check passes, so no attempt was made."
    if progress.state == "blocked":
        return f"[blocked: {progress.feedback}]"
    return f"[no attempt finished: {progress.state}]"
