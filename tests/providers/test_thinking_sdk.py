"""Extended thinking through the real SDK against the loopback fake: requested, streamed, sent back
unchanged on every tool-use continuation, stored, resumed, and kept from the critic."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.anthropic import (
    FakeAnthropic,
    RecordedRequest,
    RedactedThinking,
    Reply,
    Text,
    Thinking,
    ToolUse,
)
from tests.sdk_session import loaded_session, sdk_workdir
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import (
    Conversation,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from tui_assist.core.events import ThinkingDelta, UsageRecorded
from tui_assist.core.model import ModelRequest, ProviderError, ToolSpec
from tui_assist.core.observer import NodeSink, RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.anthropic import AnthropicProvider, build_stream_params
from tui_assist.providers.anthropic_info import AUTO_THINKING_BUDGET, INTERLEAVED_THINKING_BETA
from tui_assist.providers.openai_compat import build_chat_params
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.refine import RefineTurn

TOOL = ToolSpec("lookup", "Look up.", {"type": "object", "properties": {}})


def model_requests(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.path == "/v1/messages"]


# --------------------------------------------------------------------------- request shape


def test_auto_thinks_with_a_budget_above_which_max_tokens_leaves_the_answer_its_room() -> None:
    request = ModelRequest(
        system="s", messages=[Message.user("hi")], tools=[TOOL], max_tokens=4096, thinking=True
    )

    params = build_stream_params(request, "claude-sonnet-4-6", thinking="auto")

    assert params.get("thinking") == {"type": "enabled", "budget_tokens": AUTO_THINKING_BUDGET}
    assert params["max_tokens"] == 4096 + AUTO_THINKING_BUDGET
    assert params.get("extra_headers") == {"anthropic-beta": INTERLEAVED_THINKING_BETA}
    adaptive = build_stream_params(request, "claude-opus-4-6", thinking="auto")
    assert adaptive.get("thinking") == {"type": "adaptive"} and "extra_headers" not in adaptive
    assert "thinking" not in build_stream_params(request, "claude-3-5-haiku-latest", thinking="auto")
    budget = build_stream_params(request, "claude-sonnet-4-6", thinking=2048)
    assert budget.get("thinking") == {"type": "enabled", "budget_tokens": 2048}
    assert budget["max_tokens"] == 4096 + 2048


def test_a_request_that_does_not_think_sends_no_thinking_and_no_thinking_blocks() -> None:
    history = [
        Message.user("hi"),
        Message(
            "assistant", (ThinkingBlock("secret", "sig"), RedactedThinkingBlock("opaque"), TextBlock("ok"))
        ),
        Message.user("and?"),
    ]
    for request, setting in (
        (ModelRequest(system="s", messages=history, thinking=False), "auto"),
        (ModelRequest(system="s", messages=history, thinking=True), "off"),
    ):
        params = build_stream_params(request, "claude-sonnet-4-6", thinking=setting)
        assert "thinking" not in params
        assert params["max_tokens"] == request.max_tokens
        assert "secret" not in json.dumps(params) and "opaque" not in json.dumps(params)


def test_the_openai_compatible_provider_leaves_thinking_out() -> None:
    history = [
        Message.user("hi"),
        Message("assistant", (ThinkingBlock("secret", "sig"), TextBlock("ok"))),
        Message("assistant", (ThinkingBlock("only thinking", "sig"),)),
        Message.user("and?"),
    ]
    params = build_chat_params(ModelRequest(system="s", messages=history, thinking=True), "llama3")

    assert "secret" not in json.dumps(params) and "only thinking" not in json.dumps(params)
    assert [m["role"] for m in params["messages"]] == ["system", "user", "assistant", "user"]
    assert "thinking" not in params


# --------------------------------------------------------------------------- the round-trip


@pytest.fixture
def work(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = 'thinking = "auto"\napproval = { default = "allow" }\nsandbox = "off"\ncheckpoints = false\n'
    return sdk_workdir(tmp_path, fake, monkeypatch, config)


@pytest.fixture
async def session(work: Path, tmp_path: Path) -> AsyncIterator[ChatSession]:
    async with loaded_session(work, tmp_path) as chat:
        yield chat


async def test_thinking_round_trips_on_every_tool_use_continuation_and_is_stored(
    fake: FakeAnthropic, session: ChatSession, tmp_path: Path
) -> None:
    fake.add(
        Reply([Thinking("First I list files.", signature="sig-1"), ToolUse("bash", {"command": "echo one"})]),
        Reply([RedactedThinking("redacted-2"), ToolUse("bash", {"command": "echo two"})]),
        Reply([Thinking("Both ran.", signature="sig-3"), Text("Done: one, two.")]),
    )
    observer = RecordingObserver()

    outcome = await session.run_turn("run two commands", observer)

    assert outcome.result.outcome == "answered", outcome.result.error
    assert outcome.result.answer == "Done: one, two."
    assert fake.thinking_checks == 2  # both continuations brought their thinking back unchanged
    requests = model_requests(fake)
    assert all(r.status == 200 for r in requests)
    for r in requests:
        assert r.body["thinking"] == {"type": "enabled", "budget_tokens": AUTO_THINKING_BUDGET}
        assert r.body["max_tokens"] > AUTO_THINKING_BUDGET
        assert INTERLEAVED_THINKING_BETA in r.headers.get("anthropic-beta", "")
    second = requests[1].body["messages"][-2]["content"]
    assert second[0] == {"type": "thinking", "thinking": "First I list files.", "signature": "sig-1"}
    assert second[1]["type"] == "tool_use"
    thought = "".join(e.text for e in observer.events if isinstance(e, ThinkingDelta))
    assert thought == "First I list files.Both ran."
    # The answer holds no thinking; the meter adds output tokens once per call (thinking included).
    assert "First I list" not in outcome.result.answer
    usage = [e.usage.output_tokens for e in observer.events if isinstance(e, UsageRecorded)]
    assert outcome.result.usage.output_tokens == sum(usage)

    # Stored and resumed: the history comes back with the blocks exactly as the API sent them.
    assert session.conversation_id is not None
    resumed = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data")}))
    await resumed.load()
    try:
        turns = await resumed.resume(session.conversation_id)
        blocks = [b for m in resumed.conversation.messages for b in m.content]
        assert ThinkingBlock("First I list files.", "sig-1") in blocks
        assert RedactedThinkingBlock("redacted-2") in blocks
        assert ThinkingBlock("Both ran.", "sig-3") in blocks
        replayed = [e for e in turns[-1].events if isinstance(e, ThinkingDelta)]
        assert "".join(e.text for e in replayed) == thought
    finally:
        await resumed.aclose()


async def test_the_fake_refuses_a_continuation_whose_thinking_changed(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, thinking="auto")
    fake.add(Reply([Thinking("plan", signature="sig-a"), ToolUse("lookup", {}, id="toolu_a")]))
    first = ModelRequest(system="s", messages=[Message.user("go")], tools=[TOOL], thinking=True)
    response = await provider.complete(first, NodeSink(None, None))
    assert response.message.content[0] == ThinkingBlock("plan", "sig-a")
    results = Message("user", (ToolResultBlock("toolu_a", "found"),))
    try:
        for tampered in (
            Message("assistant", (ThinkingBlock("plan", "forged"), ToolUseBlock("toolu_a", "lookup", {}))),
            Message("assistant", (ToolUseBlock("toolu_a", "lookup", {}),)),
        ):
            request = ModelRequest(
                system="s", messages=[Message.user("go"), tampered, results], tools=[TOOL], thinking=True
            )
            with pytest.raises(ProviderError, match="400"):
                await provider.complete(request, NodeSink(None, None))
        fake.add(Reply("found it"))
        ok = ModelRequest(
            system="s", messages=[Message.user("go"), response.message, results], tools=[TOOL], thinking=True
        )
        assert (await provider.complete(ok, NodeSink(None, None))).message.text == "found it"
        assert fake.thinking_checks == 1
    finally:
        await provider.aclose()


async def test_the_critic_never_sees_the_generators_thinking(fake: FakeAnthropic, tmp_path: Path) -> None:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01, thinking="auto")
    deps = TurnDeps(provider, toolbox_factory(tmp_path, bash_timeout=10), approvals=ApprovalPolicy("allow"))
    fake.add(
        Reply([Thinking("SECRET-PLAN-1"), ToolUse("bash", {"command": "echo evidence-42"})]),
        Reply([Thinking("SECRET-PLAN-2"), Text("The value is 42.")]),
        Reply("PASS"),
    )
    history = Conversation(
        messages=[
            Message.user("earlier"),
            Message("assistant", (ThinkingBlock("SECRET-OLD", "s"), TextBlock("earlier answer"))),
        ]
    )

    result = await RefineTurn(deps).run(history, "What does it print?", RecordingObserver())

    assert result.outcome == "answered", result.error
    critic = model_requests(fake)[2]
    assert "tools" not in critic.body or critic.body["tools"] == []
    assert "thinking" not in critic.body
    text = json.dumps(critic.body)
    assert "SECRET" not in text
    assert "evidence-42" in text and "The value is 42." in text and "earlier answer" in text
    await provider.aclose()


def test_the_thinking_flag_and_setting(tmp_path: Path) -> None:
    from tui_assist.cli.main import config_from_args
    from tui_assist.cli.parser import build_parser
    from tui_assist.session.config import ConfigError

    args = build_parser().parse_args(["ask", "--thinking", "4096", "hi"])
    assert config_from_args(args).data["thinking"] == "4096"
    assert ConfigSource.read({"thinking": "4096"}, path=tmp_path / "none.toml").settings().thinking == 4096
    assert ConfigSource.read({"thinking": "auto"}, path=tmp_path / "none.toml").settings().thinking == "auto"
    with pytest.raises(ConfigError, match="at least 1024"):
        ConfigSource.read({"thinking": "100"}, path=tmp_path / "none.toml").settings()
