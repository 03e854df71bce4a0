"""Tool arguments that are JSON but not an object, as an OpenAI-compatible server can send them:
the real `openai` SDK against the loopback fake, through the agent loop with real tools."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai import FakeOpenAI, Reply, ToolCall
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.openai_compat import OpenAICompatProvider
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.agent import AgentTurn


def deps(fake: FakeOpenAI, workdir: Path) -> TurnDeps:
    provider = OpenAICompatProvider("qwen2.5-coder:7b", base_url=fake.base_url, stream_backoff=0.01)
    return TurnDeps(provider, toolbox_factory(workdir, bash_timeout=10), approvals=ApprovalPolicy("allow"))


async def test_the_model_is_told_once_and_corrects_itself(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.add(
            Reply([ToolCall("bash", '["echo", "hi"]', id="call_bad")]),
            Reply([ToolCall("bash", {"command": "echo hi"}, id="call_ok")]),
            Reply("It printed hi."),
        )
        turn_deps = deps(fake, tmp_path)
        conversation = Conversation()
        result = await AgentTurn(turn_deps).run(conversation, "say hi", RecordingObserver())
        await turn_deps.provider.aclose()

        assert (result.outcome, result.answer) == ("answered", "It printed hi.")
        second = fake.completions[1].messages
        assert second[-2]["tool_calls"][0]["function"]["arguments"] == "{}"  # a valid history
        told = second[-1]
        assert told["role"] == "tool" and told["tool_call_id"] == "call_bad"
        assert 'not a JSON object for \'bash\': ["echo", "hi"]' in told["content"]
        assert fake.completions[2].messages[-1]["content"].strip() == "hi"  # the corrected call ran
        assert len(fake.completions) == 3  # nothing was retried


async def test_the_same_mistake_again_fails_the_turn_in_one_line(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.add(Reply([ToolCall("bash", "42")]), Reply([ToolCall("bash", "42")]), Reply("never asked"))
        turn_deps = deps(fake, tmp_path)
        conversation = Conversation()
        result = await AgentTurn(turn_deps).run(conversation, "say hi", RecordingObserver())
        await turn_deps.provider.aclose()

        assert result.outcome == "error" and result.error is not None
        assert "\n" not in result.error
        assert "not a JSON object for 'bash': 42" in result.error and "again" in result.error
        assert len(fake.completions) == 2 and conversation.messages == []  # a failed turn adds nothing
