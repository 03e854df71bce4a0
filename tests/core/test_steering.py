"""Steering: a prompt sent while a turn runs joins the agent's next model request."""

from __future__ import annotations

from tests.core.toolkit import BoxFactory
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from tui_assist.core.events import (
    NodeStarted,
    PromptJoined,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageRecorded,
    event_from_dict,
    event_to_dict,
)
from tui_assist.core.interrupted import interrupted_history
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.steering import JOINED_NOTE
from tui_assist.core.tree import NodeLog
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.turns.agent import AgentTurn
from tui_assist.turns.refine import RefineTurn


class Typed:
    """The prompts a user typed during the turn, handed over once when the loop asks."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.asked = 0

    def __call__(self) -> list[str]:
        self.asked += 1
        texts, self.texts = self.texts, []
        return texts


def deps(provider: ScriptedProvider, steering: Typed) -> TurnDeps:
    return TurnDeps(provider, BoxFactory(), approvals=ApprovalPolicy("allow"), steering=steering)


ECHO = [ToolUseBlock("toolu_1", "echo", {"text": "hi"})]


async def test_a_prompt_joins_the_second_request_after_the_tool_results_and_stays_in_the_history() -> None:
    provider = ScriptedProvider([ECHO, "Said hi, and bye."])
    typed = Typed("also say bye")
    observer = RecordingObserver()
    conversation = Conversation()

    result = await AgentTurn(deps(provider, typed)).run(conversation, "say hi", observer)

    assert result.outcome == "answered"
    assert typed.asked == 1  # before the second request only
    sent = provider.requests[1].messages[-1]
    assert sent.role == "user"
    assert isinstance(sent.content[0], ToolResultBlock)  # the results first: roles alternate
    assert isinstance(sent.content[1], TextBlock)
    assert JOINED_NOTE in sent.content[1].text and "also say bye" in sent.content[1].text
    assert "also say bye" not in provider.requests[0].messages[-1].text
    assert conversation.messages[2] == sent  # kept in the history as it was sent
    agent = next(e for e in observer.events if isinstance(e, NodeStarted) and e.node_kind == "agent")
    joined = [e for e in observer.events if isinstance(e, PromptJoined)]
    assert joined == [PromptJoined(node_id=agent.node_id, text="also say bye")]


async def test_no_further_request_leaves_the_prompt_with_the_host() -> None:
    provider = ScriptedProvider(["Just an answer."])
    typed = Typed("a follow-up")

    await AgentTurn(deps(provider, typed)).run(Conversation(), "question", RecordingObserver())

    assert typed.asked == 0 and typed.texts == ["a follow-up"]


async def test_in_refine_the_joined_prompt_is_part_of_the_task_the_critic_judges() -> None:
    provider = ScriptedProvider([ECHO, "hi and bye", "PASS\nboth said"])
    typed = Typed("say bye too")
    conversation = Conversation()

    result = await RefineTurn(deps(provider, typed), max_rounds=2).run(
        conversation, "say hi", RecordingObserver()
    )

    assert result.outcome == "answered"
    assert "say bye too" in provider.requests[1].messages[-1].text  # the generator's 2nd request
    critic = provider.requests[2]
    assert critic.tools == () and "say bye too" in critic.messages[0].text
    assert "say bye too" in conversation.messages[0].text  # the task, as the history keeps it


def test_an_interrupted_turn_keeps_the_prompt_that_joined_it() -> None:
    events = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"),
        UsageRecorded(node_id="a", usage=Usage(1, 1)),
        ToolCallStarted(node_id="c1", parent_id="a", call_id="toolu_1", name="bash", input={}),
        ToolCallFinished(node_id="c1", call_id="toolu_1", name="bash", output="ok"),
        PromptJoined(node_id="a", text="stop after this"),
        TextDelta(node_id="a", text="Stopp"),
    ]

    messages = interrupted_history("go", events, "t")

    results = messages[2]
    assert results.role == "user" and isinstance(results.content[0], ToolResultBlock)
    assert "stop after this" in results.text


def test_the_joined_prompt_is_stored_with_the_turn_and_replayed() -> None:
    joined = PromptJoined(node_id="a", text="stop after this")
    events = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"),
        joined,
    ]

    assert event_from_dict(event_to_dict(joined)) == joined
    assert NodeLog.of(events).streamed("t")[-1] == joined  # what a view redraws a stored turn from
