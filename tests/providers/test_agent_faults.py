"""Agent turns against replies a fault or a quirk of the API produces: real SDK, real tools, the loopback fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, Message, TextBlock, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import StreamRetried, UsageRecorded
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.anthropic import AnthropicProvider
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.agent import AgentTurn
from tui_assist.turns.refine import RefineTurn


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def deps(fake: FakeAnthropic, workdir: Path) -> TurnDeps:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)
    return TurnDeps(provider, toolbox_factory(workdir, bash_timeout=10), approvals=ApprovalPolicy("allow"))


def shape(messages: list[Message]) -> list[tuple[str, list[str]]]:
    return [(m.role, [b.type for b in m.content]) for m in messages]


EMPTY_REPLIES = pytest.mark.parametrize(
    "empty",
    [Reply([]), Reply([Text("", deltas=1)]), Reply([Text(" \n", deltas=1)])],
    ids=["none", "empty", "blank"],
)


@EMPTY_REPLIES
async def test_an_empty_reply_is_asked_for_again_and_never_enters_the_history(
    fake: FakeAnthropic, workdir: Path, empty: Reply
) -> None:
    fake.add(empty, Reply("The answer."))
    observer = RecordingObserver()
    conversation = Conversation()
    turn_deps = deps(fake, workdir)

    result = await AgentTurn(turn_deps).run(conversation, "question", observer)
    await turn_deps.provider.aclose()

    assert (result.outcome, result.answer) == ("answered", "The answer.")
    assert conversation.messages == [Message.user("question"), Message.assistant("The answer.")]
    retried = [e for e in observer.events if isinstance(e, StreamRetried)]
    assert [(e.attempt, e.error) for e in retried] == [(1, "empty reply (1 attempt, stop reason end_turn)")]
    assert fake.requests[0].body["messages"] == fake.requests[1].body["messages"]  # the same request again
    assert len([e for e in observer.events if isinstance(e, UsageRecorded)]) == 2  # both calls are counted


async def test_a_reply_that_stays_empty_fails_the_turn_and_the_conversation_goes_on(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Reply([]), Reply([Text("", deltas=1)]), Reply("Back again."))
    conversation = Conversation()
    turn_deps = deps(fake, workdir)
    turn = AgentTurn(turn_deps)

    failed = await turn.run(conversation, "first", RecordingObserver())
    answered = await turn.run(conversation, "second", RecordingObserver())
    await turn_deps.provider.aclose()

    assert (failed.outcome, failed.answer) == ("error", "")
    assert failed.error == "the model sent an empty reply (2 attempts, stop reason end_turn)"
    assert (answered.outcome, answered.answer) == ("answered", "Back again.")
    assert [r.status for r in fake.requests] == [200, 200, 200]  # the fake rejects empty content with a 400
    assert conversation.messages == [Message.user("second"), Message.assistant("Back again.")]


async def test_an_empty_reply_after_tool_calls_keeps_the_tool_transcript(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(
        Reply([Text("Counting."), ToolUse("bash", {"command": "echo 3"}, id="toolu_1")]),
        Reply([]),
        Reply("It printed 3."),
        Reply("Noted."),
    )
    conversation = Conversation()
    turn_deps = deps(fake, workdir)
    turn = AgentTurn(turn_deps)

    result = await turn.run(conversation, "count", RecordingObserver())
    await turn.run(conversation, "thanks", RecordingObserver())
    await turn_deps.provider.aclose()

    assert (result.outcome, result.answer) == ("answered", "It printed 3.")
    assert shape(conversation.messages) == [
        ("user", ["text"]),
        ("assistant", ["text", "tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
        ("assistant", ["text"]),
    ]
    assert fake.requests[-1].status == 200


async def test_blank_text_beside_a_tool_call_stays_out_of_the_history(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(
        Reply([Text("\n\n", deltas=1), ToolUse("bash", {"command": "echo hi"}, id="toolu_1")]),
        Reply("Said hi."),
    )
    conversation = Conversation()
    turn_deps = deps(fake, workdir)

    await AgentTurn(turn_deps).run(conversation, "greet", RecordingObserver())
    await turn_deps.provider.aclose()

    assert conversation.messages[1] == Message(
        "assistant", (ToolUseBlock("toolu_1", "bash", {"command": "echo hi"}),)
    )
    assert all(b.text.strip() for m in conversation.messages for b in m.content if isinstance(b, TextBlock))


async def test_tool_input_that_is_not_an_object_gets_a_tool_error_the_model_corrects(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(
        Reply([ToolUse("bash", 42, deltas=1, id="toolu_bad")]),  # type: ignore[arg-type]
        Reply([ToolUse("bash", {"command": "echo fine"}, id="toolu_ok")]),
        Reply("It printed fine."),
    )
    conversation = Conversation()
    observer = RecordingObserver()
    turn_deps = deps(fake, workdir)

    result = await AgentTurn(turn_deps).run(conversation, "run it", observer)
    await turn_deps.provider.aclose()

    assert (result.outcome, result.answer) == ("answered", "It printed fine.")
    assert not [e for e in observer.events if isinstance(e, StreamRetried)]  # no stream retry
    told = fake.requests[1].messages[-1]["content"][0]
    assert told["is_error"] and told["tool_use_id"] == "toolu_bad"
    assert "not a JSON object for 'bash': 42" in told["content"] and "as a JSON object" in told["content"]
    assert fake.requests[1].messages[-2]["content"][0]["input"] == {}  # what the API takes back
    tool_result = conversation.messages[4].content[0]
    assert isinstance(tool_result, ToolResultBlock) and tool_result.content.strip() == "fine"


async def test_a_refine_round_whose_reply_stays_empty_is_an_error_not_an_empty_answer(
    fake: FakeAnthropic, workdir: Path
) -> None:
    fake.add(Reply([]), Reply([]))
    conversation = Conversation()
    turn_deps = deps(fake, workdir)

    result = await RefineTurn(turn_deps).run(conversation, "question", RecordingObserver())
    await turn_deps.provider.aclose()

    assert result.outcome == "error" and "empty reply" in (result.error or "")
    assert conversation.messages == []
