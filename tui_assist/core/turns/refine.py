"""`RefineTurn`: generate, critique against the evidence, revise.

Each round runs a full agent in a fresh toolbox (so shell state never leaks between rounds), then
a tool-less critic judges the answer against the round's evidence. Only the clean
`prompt -> answer` pair enters the history; rounds are returned for review and storage.
"""

from __future__ import annotations

from tui_assist.core.agent import run_agent
from tui_assist.core.budget import BudgetExhausted, BudgetTracker
from tui_assist.core.conversation import Conversation, Message, TextBlock
from tui_assist.core.critic import critique
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import TurnObserver
from tui_assist.core.prompts import REVISION_TEMPLATE
from tui_assist.core.turns.base import Outcome, RoundRecord, Stopwatch, StrategyName, TurnDeps, TurnResult
from tui_assist.providers.base import ProviderError


class RefineTurn:
    """Evaluator-optimizer over full agent rounds, with a round budget."""

    name: StrategyName = "refine"

    def __init__(self, deps: TurnDeps, *, max_rounds: int = 3) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.deps = deps
        self.max_rounds = max_rounds

    async def run(
        self, conversation: Conversation, prompt: str, observer: TurnObserver, *, turn_id: str | None = None
    ) -> TurnResult:
        """Run up to `max_rounds` rounds. See `TurnStrategy.run`."""
        clock = Stopwatch()
        budget = BudgetTracker(self.deps.budget)
        history = list(conversation.messages)
        rounds: list[RoundRecord] = []
        answer, error = "", None
        outcome: Outcome = "unverified"
        label = f"refine turn (≤{self.max_rounds} rounds)"
        with NodeScope(observer, "turn", label, None, detail=prompt, node_id=turn_id) as turn:
            try:
                for index in range(1, self.max_rounds + 1):
                    record = await self._round(index, history, prompt, rounds, observer, budget, turn.node_id)
                    if record is None:
                        outcome, error = "budget_exhausted", "budget exhausted before the round could finish"
                        break
                    rounds.append(record)
                    answer = record.answer
                    if record.verdict == "pass":
                        outcome = "answered"
                        break
            except BudgetExhausted as exc:
                outcome, error = "budget_exhausted", str(exc)
            except ProviderError as exc:
                turn.finish(outcome="error", error=str(exc))
                return TurnResult(
                    turn.node_id,
                    self.name,
                    prompt,
                    answer,
                    "error",
                    budget.usage,
                    [],
                    rounds,
                    error=str(exc),
                    duration=clock.elapsed,
                )
            added = [Message.user(prompt), Message.assistant(answer or f"[no answer: {error}]")]
            conversation.messages.extend(added)
            turn.finish(outcome=outcome, output=answer)
            return TurnResult(
                turn.node_id,
                self.name,
                prompt,
                answer,
                outcome,
                budget.usage,
                added,
                rounds,
                error=error,
                duration=clock.elapsed,
            )

    async def _round(
        self,
        index: int,
        history: list[Message],
        prompt: str,
        previous: list[RoundRecord],
        observer: TurnObserver,
        budget: BudgetTracker,
        turn_id: str,
    ) -> RoundRecord | None:
        """Run one round; None when the budget stopped the generator."""
        with NodeScope(observer, "round", f"round {index}", turn_id, detail=prompt) as node:
            blocks = [TextBlock(prompt)]
            if previous:
                last = previous[-1]
                blocks.append(TextBlock(REVISION_TEMPLATE.format(answer=last.answer, feedback=last.feedback)))
            task = Message("user", tuple(blocks))
            toolbox = self.deps.toolbox_factory()
            rt = self.deps.runtime(toolbox, observer, budget)
            try:
                generated = await run_agent(
                    rt,
                    [*history, task],
                    parent_id=node.node_id,
                    node_kind="generate",
                    label="generate",
                    stable_prefix=len(history),
                )
            finally:
                await toolbox.aclose()
            transcript = [task, *generated.messages]
            if generated.outcome != "answered":
                node.finish(outcome="budget_exhausted", output=generated.answer)
                return None
            judged = await critique(
                provider=self.deps.provider,
                observer=observer,
                budget=budget,
                system=self.deps.critic_prompt,
                task=prompt,
                evidence=rt.evidence,
                answer=generated.answer,
                round_index=index,
                parent_id=node.node_id,
            )
            node.finish(outcome=judged.verdict, output=generated.answer)
            return RoundRecord(
                index=index,
                answer=generated.answer,
                verdict=judged.verdict,
                feedback=judged.feedback,
                evidence=rt.evidence,
                transcript=transcript,
                usage=generated.usage + judged.usage,
                critic_usage=judged.usage,
            )
