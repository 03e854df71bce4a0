"""`RefineTurn`: generate, critique against the evidence, revise.

The loop itself is the workflow engine's `Refine` combinator (one implementation of the
evaluator-optimizer pattern); this module supplies its two steps. A round's generator is a full
agent in a fresh toolbox (so shell state never leaks between rounds); its evaluator is the
tool-less critic, which judges the answer against the round's evidence. Only the clean
`prompt -> answer` pair enters the history; rounds are returned for review and storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_assist.core.agent import run_agent
from tui_assist.core.budget import BudgetExhausted, BudgetTracker, SpendCapReached, stop_outcome
from tui_assist.core.conversation import Block, ImageBlock, Message, TextBlock, Usage
from tui_assist.core.critic import DEFAULT_CRITIC_INPUT_TOKENS, Critique, critique
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.model import ProviderError
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import TurnObserver
from tui_assist.core.prompts import REVISION_TEMPLATE
from tui_assist.core.steering import task_with_joined
from tui_assist.core.turn import (
    Outcome,
    RoundRecord,
    Stopwatch,
    StrategyName,
    TurnDeps,
    TurnRequest,
    TurnResult,
    TurnStrategy,
)
from tui_assist.workflow.combinators import Attempt, Candidate, Refine, RefineOutcome
from tui_assist.workflow.step import Step, WorkflowBudgetTracker, WorkflowContext

_OUTCOMES: dict[RefineOutcome, Outcome] = {
    "passed": "answered",
    "max_rounds": "unverified",
    "budget_exhausted": "budget_exhausted",
}


@dataclass(frozen=True, slots=True)
class Draft:
    """What one round's generator produced."""

    answer: str
    evidence: list[ToolCallRecord]
    transcript: list[Message]
    usage: Usage


@dataclass(frozen=True, slots=True)
class _Turn:
    """What both steps of every round share: the turn's deps, history, observer and budget."""

    deps: TurnDeps
    history: list[Message]
    observer: TurnObserver
    budget: BudgetTracker
    joined: list[str] = field(default_factory=lambda: list[str]())
    """Prompts the user sent during the turn that joined a generator: part of the task from then on."""


class _Generate(Step[Attempt[str, Draft], Draft]):
    """A full agent with all tools; from round 2 on it also sees the last answer and feedback."""

    reports_itself = True  # run_agent opens the `generate` node itself

    def __init__(self, turn: _Turn, images: Sequence[ImageBlock] = ()) -> None:
        super().__init__("generate")
        self.turn = turn
        self.images = tuple(images)
        """The prompt's attached images: every round's task shows them first."""
        self.cut: tuple[int, Draft] | None = None
        """The round the budget stopped, with what it did: its tool calls are evidence too."""

    def summarize_input(self, value: Attempt[str, Draft]) -> str:
        return value.input

    def summarize_output(self, value: object) -> str:
        return value.answer if isinstance(value, Draft) else str(value)

    async def run(self, input: Attempt[str, Draft], ctx: WorkflowContext) -> Draft:
        blocks: list[Block] = [*self.images, TextBlock(task_with_joined(input.input, self.turn.joined))]
        if input.previous is not None:
            blocks.append(
                TextBlock(REVISION_TEMPLATE.format(answer=input.previous.answer, feedback=input.feedback))
            )
        task = Message("user", tuple(blocks))
        toolbox = self.turn.deps.toolbox_factory()
        rt = self.turn.deps.runtime(toolbox, self.turn.observer, self.turn.budget)
        try:
            generated = await run_agent(
                rt,
                [*self.turn.history, task],
                parent_id=ctx.parent_id,
                node_kind="generate",
                label="generate",
                stable_prefix=len(self.turn.history),
            )
        finally:
            await toolbox.aclose()
        self.turn.joined.extend(generated.joined)  # the critic judges against them too
        draft = Draft(generated.answer, rt.evidence, [task, *generated.messages], generated.usage)
        if generated.outcome != "answered":
            self.cut = (input.round, draft)
            if generated.outcome == "budget":  # also when compacting for a request reached the cap
                self.turn.budget.spend_stopped = True
            stop = SpendCapReached if generated.outcome == "budget" else BudgetExhausted
            raise stop(generated.detail or "budget exhausted before the round could finish")
        return draft


class _Critic(Step[Candidate[str, Draft], Critique]):
    """The tool-less critic of one round; it also sees the conversation's last clean pairs."""

    reports_itself = True  # critique() opens the `critic` node and reports the verdict

    def __init__(self, turn: _Turn, max_input_tokens: int) -> None:
        super().__init__("critic")
        self.turn = turn
        self.max_input_tokens = max_input_tokens

    async def run(self, input: Candidate[str, Draft], ctx: WorkflowContext) -> Critique:
        assert ctx.parent_id is not None
        return await critique(
            provider=self.turn.deps.provider,
            observer=self.turn.observer,
            budget=self.turn.budget,
            system=self.turn.deps.critic_prompt,
            task=task_with_joined(input.input, self.turn.joined),
            evidence=input.draft.evidence,
            answer=input.draft.answer,
            round_index=input.round,
            parent_id=ctx.parent_id,
            history=self.turn.history,
            max_input_tokens=self.max_input_tokens,
        )


class RefineTurn(TurnStrategy):
    """Evaluator-optimizer over full agent rounds, with a round budget.

    Args:
        deps: The provider, tools, policy, budget and prompts.
        max_rounds: The round budget.
        critic_max_input_tokens: Estimated tokens the critic's input may take: the model's
            context window less the critic's reply (`CRITIC_MAX_TOKENS`); the evidence is cut
            to fit. The default suits Claude's 200,000-token window.

    Raises:
        ValueError: when `max_rounds` is below 1.
    """

    name: StrategyName = "refine"

    def __init__(
        self,
        deps: TurnDeps,
        *,
        max_rounds: int = 3,
        critic_max_input_tokens: int = DEFAULT_CRITIC_INPUT_TOKENS,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.deps = deps
        self.max_rounds = max_rounds
        self.critic_max_input_tokens = critic_max_input_tokens

    async def play(self, request: TurnRequest, observer: TurnObserver) -> TurnResult:
        """Run up to `max_rounds` rounds."""
        conversation, prompt, images = request.conversation, request.prompt, request.images
        clock = Stopwatch()
        budget = BudgetTracker(self.deps.budget)
        history = list(conversation.messages)
        shared = _Turn(self.deps, history, observer, budget)
        generate = _Generate(shared, images)
        critic = _Critic(shared, self.critic_max_input_tokens)
        loop = Refine(generate, critic, max_rounds=self.max_rounds)
        rounds: list[RoundRecord] = []
        answer, error = "", None
        outcome: Outcome = "unverified"
        label = f"refine turn (≤{self.max_rounds} rounds)"
        with NodeScope(observer, "turn", label, None, detail=prompt, node_id=request.turn_id) as turn:
            # The rounds hang directly under the turn: the loop runs in a context rooted there.
            ctx = WorkflowContext.root(
                observer, budget=WorkflowBudgetTracker(models=budget), parent_id=turn.node_id
            )
            try:
                refined = await loop.run(prompt, ctx)
                rounds = [
                    RoundRecord(
                        index=r.round,
                        answer=r.draft.answer,
                        verdict=r.judgement.verdict,
                        feedback=r.judgement.feedback,
                        evidence=r.draft.evidence,
                        transcript=r.draft.transcript,
                        usage=r.draft.usage + r.judgement.usage,
                        critic_usage=r.judgement.usage,
                    )
                    for r in refined.rounds
                ]
                answer, outcome, error = refined.draft.answer, _OUTCOMES[refined.outcome], refined.error
                if outcome == "budget_exhausted" and budget.spend_stopped:
                    outcome = "budget"  # the loop keeps the stop's words, not its kind
            except BudgetExhausted as exc:
                outcome, error = stop_outcome(exc), str(exc)
            except ProviderError as exc:
                turn.finish(outcome="error", error=str(exc))
                return TurnResult(
                    turn.node_id, self.name, prompt, "", "error", budget.usage, [], rounds,
                    error=str(exc), duration=clock.elapsed,
                )  # fmt: skip
            if generate.cut is not None:
                rounds.append(_cut_round(*generate.cut, error or "the budget ran out"))
            task = task_with_joined(prompt, shared.joined)
            added = [Message.user(task, images), Message.assistant(answer or f"[no answer: {error}]")]
            conversation.messages.extend(added)
            turn.finish(outcome=outcome, output=answer)
            return TurnResult(
                turn.node_id, self.name, prompt, answer, outcome, budget.usage, added, rounds,
                error=error, duration=clock.elapsed,
            )  # fmt: skip


def _cut_round(index: int, draft: Draft, why: str) -> RoundRecord:
    """The record of a round the budget stopped: no verdict, but its tool calls happened."""
    return RoundRecord(
        index=index,
        answer=draft.answer,
        verdict="revise",
        feedback=f"(not judged: {why})",
        evidence=draft.evidence,
        transcript=draft.transcript,
        usage=draft.usage,
    )
