"""Shared builders for the store tests: real turns run offline, and plain results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_assist.core.conversation import Conversation, Message, TextBlock, ToolUseBlock, Usage
from tui_assist.core.events import NodeFinished, NodeStarted, TextDelta, TurnEvent, UsageRecorded
from tui_assist.core.model import ToolSpec
from tui_assist.core.observer import FanOutObserver, RecordingObserver
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.core.turn import TurnDeps, TurnResult
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.store import Store
from tui_assist.turns.agent import AgentTurn
from tui_assist.turns.refine import RefineTurn


class EchoTool:
    spec = ToolSpec(
        "echo",
        "Echo text back.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )

    def parse(self, raw: dict[str, Any]) -> str:
        text = raw.get("text")
        if not isinstance(text, str):
            raise ToolInputError("text must be a string")
        return text

    def side_effecting(self, args: Any) -> bool:
        return False

    def summary(self, args: Any) -> str:
        return f"echo {args}"

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(f"echo: {args}")


class AgentTool:
    spec = ToolSpec(
        "agent",
        "Run a sub-agent.",
        {"type": "object", "properties": {"description": {"type": "string"}, "prompt": {"type": "string"}}},
    )

    def parse(self, raw: dict[str, Any]) -> tuple[str, str]:
        return str(raw["description"]), str(raw["prompt"])

    def side_effecting(self, args: Any) -> bool:
        return False

    def summary(self, args: Any) -> str:
        return "sub-agent"

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        description, prompt = args
        return ToolOutput(await ctx.run_subagent(description, prompt))


@dataclass
class SmallToolbox:
    workdir: Path

    @property
    def tools(self) -> Sequence[Any]:
        return [EchoTool(), AgentTool()]

    async def aclose(self) -> None:
        pass


REFINE_PROMPT = "How do penguins count their eggs?"
REFINE_ANSWER = "Final answer: penguins count 1 2 3 eggs."


def refine_script() -> list[Any]:
    """Two rounds: REVISE after an echo call, PASS after a sub-agent call."""
    return [
        [ToolUseBlock("tu1", "echo", {"text": "one"})],
        "Draft answer about eggs.",
        "REVISE\nAdd the numbers.",
        [ToolUseBlock("tu2", "agent", {"description": "count", "prompt": "count to 3"})],
        "1 2 3",
        REFINE_ANSWER,
        "**PASS**",
    ]


@dataclass
class Run:
    result: TurnResult
    live: list[TurnEvent]
    """What a live observer saw."""
    recorded: Sequence[TurnEvent]
    """What the store's recorder buffered."""


async def run_refine(store: Store, workdir: Path, conversation_id: str, turn_id: str) -> Run:
    """Run a real RefineTurn offline, recorded by the store's recorder, and commit it."""
    provider = ScriptedProvider(refine_script(), delta_chars=4)
    deps = TurnDeps(provider=provider, toolbox_factory=lambda: SmallToolbox(workdir))
    live = RecordingObserver()
    recorder = store.recorder()
    await store.begin_turn(
        conversation_id=conversation_id, turn_id=turn_id, strategy="refine", prompt=REFINE_PROMPT
    )
    conversation = Conversation(conversation_id, await store.load_history(conversation_id))
    result = await RefineTurn(deps, max_rounds=3).run(
        conversation, REFINE_PROMPT, FanOutObserver(live, recorder), turn_id=turn_id
    )
    await store.commit_turn(conversation_id, result, recorder.events)
    return Run(result, live.events, recorder.events)


async def run_agent_turn(
    store: Store, workdir: Path, conversation_id: str, turn_id: str, prompt: str, answer: str
) -> Run:
    """A real AgentTurn with one echo call, committed."""
    provider = ScriptedProvider(
        [[TextBlock("Let me check."), ToolUseBlock("e1", "echo", {"text": prompt})], answer]
    )
    deps = TurnDeps(provider=provider, toolbox_factory=lambda: SmallToolbox(workdir))
    live = RecordingObserver()
    recorder = store.recorder()
    await store.begin_turn(conversation_id=conversation_id, turn_id=turn_id, strategy="agent", prompt=prompt)
    conversation = Conversation(conversation_id, await store.load_history(conversation_id))
    result = await AgentTurn(deps).run(conversation, prompt, FanOutObserver(live, recorder), turn_id=turn_id)
    await store.commit_turn(conversation_id, result, recorder.events)
    return Run(result, live.events, recorder.events)


def plain_result(turn_id: str, prompt: str, answer: str, *, usage: Usage | None = None) -> TurnResult:
    """A finished agent-turn result without tools."""
    return TurnResult(
        turn_id=turn_id,
        strategy="agent",
        prompt=prompt,
        answer=answer,
        outcome="answered",
        usage=usage or Usage(10, 5),
        history=[Message.user(prompt), Message.assistant(answer)],
        duration=0.5,
    )


def plain_events(turn_id: str, answer: str) -> list[TurnEvent]:
    """The events of a one-call agent turn."""
    return [
        NodeStarted(node_id=turn_id, parent_id=None, node_kind="turn", label="agent turn"),
        NodeStarted(node_id=turn_id + "-a", parent_id=turn_id, node_kind="agent", label="agent"),
        TextDelta(node_id=turn_id + "-a", text=answer[:3]),
        TextDelta(node_id=turn_id + "-a", text=answer[3:]),
        UsageRecorded(node_id=turn_id + "-a", usage=Usage(10, 5)),
        NodeFinished(node_id=turn_id + "-a", outcome="answered", output=answer),
        NodeFinished(node_id=turn_id, outcome="answered", output=answer),
    ]


async def commit_plain(store: Store, conversation_id: str, turn_id: str, prompt: str, answer: str) -> None:
    await store.begin_turn(conversation_id=conversation_id, turn_id=turn_id, strategy="agent", prompt=prompt)
    await store.commit_turn(
        conversation_id, plain_result(turn_id, prompt, answer), plain_events(turn_id, answer)
    )
