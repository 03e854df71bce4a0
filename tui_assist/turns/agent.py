"""`AgentTurn`: one agent runs and the model decides each next step."""

from __future__ import annotations

from tui_assist.core.agent import run_agent
from tui_assist.core.budget import BudgetTracker
from tui_assist.core.conversation import Message
from tui_assist.core.model import ProviderError
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import TurnObserver
from tui_assist.core.steering import with_joined
from tui_assist.core.turn import Stopwatch, StrategyName, TurnDeps, TurnRequest, TurnResult, TurnStrategy


class AgentTurn(TurnStrategy):
    """The whole transcript (tool calls included) enters the conversation history."""

    name: StrategyName = "agent"

    def __init__(self, deps: TurnDeps) -> None:
        self.deps = deps

    async def play(self, request: TurnRequest, observer: TurnObserver) -> TurnResult:
        """Run one agent turn."""
        conversation, prompt, images = request.conversation, request.prompt, request.images
        clock = Stopwatch()
        budget = BudgetTracker(self.deps.budget)
        with NodeScope(observer, "turn", "agent turn", None, detail=prompt, node_id=request.turn_id) as turn:
            toolbox = self.deps.toolbox_factory()
            rt = self.deps.runtime(toolbox, observer, budget)
            history = list(conversation.messages)
            try:
                result = await run_agent(
                    rt,
                    [*history, Message.user(prompt, images)],
                    parent_id=turn.node_id,
                    stable_prefix=len(history),
                )
            except ProviderError as exc:
                turn.finish(outcome="error", error=str(exc))
                return TurnResult(
                    turn.node_id,
                    self.name,
                    prompt,
                    "",
                    "error",
                    budget.usage,
                    [],
                    evidence=rt.evidence,
                    error=str(exc),
                    duration=clock.elapsed,
                )
            finally:
                await toolbox.aclose()
            if result.outcome == "answered":
                added = [Message.user(prompt, images), *result.messages]
            else:  # a transcript cut mid-tool-loop is not valid history: keep a clean pair
                added = [
                    with_joined(Message.user(prompt, images), result.joined),
                    Message.assistant(result.answer or f"[stopped: {result.detail}]"),
                ]
            conversation.messages.extend(added)
            turn.finish(outcome=result.outcome, output=result.answer)
            return TurnResult(
                turn.node_id,
                self.name,
                prompt,
                result.answer,
                result.outcome,
                budget.usage,
                added,
                evidence=rt.evidence,
                error=result.detail or None,
                duration=clock.elapsed,
            )
