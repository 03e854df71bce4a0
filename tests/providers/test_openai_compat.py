"""OpenAICompatProvider driven through the real `openai` SDK against the loopback fake."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai import Error, FakeOpenAI, Hang, Reply, Text, ToolCall
from tests.fakes.openai import Usage as FakeUsage
from tests.wait import wait_until
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import (
    Conversation,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tui_assist.core.events import StreamRetried
from tui_assist.core.model import ModelRequest, ProviderError, ToolSpec
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.openai_compat import OpenAICompatProvider, build_chat_params
from tui_assist.providers.profiles import (
    BUILTIN_PROFILES,
    NO_KEY_PLACEHOLDER,
    EndpointError,
    OpenAIProfile,
    is_openai_compatible,
    make_openai_provider,
    resolve_endpoint,
)
from tui_assist.tools.registry import toolbox_factory
from tui_assist.turns.agent import AgentTurn
from tui_assist.turns.refine import RefineTurn

MODEL = "qwen2.5-coder:7b"


@dataclass
class RecordingSink:
    texts: list[str] = field(default_factory=list)
    retries: list[tuple[int, str]] = field(default_factory=list)
    usages: list[tuple[Usage, str]] = field(default_factory=list)

    def text(self, delta: str) -> None:
        self.texts.append(delta)

    def thinking(self, delta: str) -> None:
        pass

    def retrying(self, attempt: int, error: str) -> None:
        self.retries.append((attempt, error))

    def usage(self, usage: Usage, model: str) -> None:
        self.usages.append((usage, model))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def provider(fake: FakeOpenAI) -> AsyncIterator[OpenAICompatProvider]:
    p = OpenAICompatProvider(MODEL, base_url=fake.base_url, stream_backoff=0.01)
    yield p
    await p.aclose()


def ask(text: str = "hi", **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        system=kwargs.pop("system", "You are terse."), messages=[Message.user(text)], **kwargs
    )


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and len(text) <= 300, text
    return text


SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
BASH = ToolSpec("bash", "Run a command.", SCHEMA, native_type="bash_20250124")


# --------------------------------------------------------------------------- streaming


async def test_text_streams_as_several_deltas(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(Reply([Text("Hello there, world", deltas=["Hello", " there,", " world"])]))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert sink.texts == ["Hello", " there,", " world"]
    assert response.message == Message("assistant", (TextBlock("Hello there, world"),))
    assert response.stop_reason == "end_turn"
    assert response.model == MODEL
    body = fake.completions[-1].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == MODEL and body["max_tokens"] == 8192
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
    ]
    assert "tools" not in body


async def test_tool_call_arguments_are_assembled_from_split_deltas(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    args = {"command": "ls -la", "restart": False, "nested": {"list": [1, 2, 3]}}
    fake.add(
        Reply(
            [
                Text("Let me look."),
                ToolCall("bash", args, id="call_a", deltas=7),
                ToolCall(
                    "str_replace_based_edit_tool", {"command": "view", "path": "."}, id="call_b", deltas=5
                ),
            ]
        )
    )
    sink = RecordingSink()

    response = await provider.complete(ask("list", tools=[BASH]), sink)

    assert response.message.content == (
        TextBlock("Let me look."),
        ToolUseBlock("call_a", "bash", args),
        ToolUseBlock("call_b", "str_replace_based_edit_tool", {"command": "view", "path": "."}),
    )
    assert response.stop_reason == "tool_use"
    assert "".join(sink.texts) == "Let me look."  # tool JSON is never streamed as text


async def test_whole_tool_calls_without_index_are_accepted(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(
        Reply(
            [ToolCall("bash", {"command": "pwd"}, id="c1"), ToolCall("bash", {"command": "id"}, id="c2")],
            whole_tool_calls=True,
        )
    )

    response = await provider.complete(ask(tools=[BASH]), RecordingSink())

    assert response.message.tool_uses == [
        ToolUseBlock("c1", "bash", {"command": "pwd"}),
        ToolUseBlock("c2", "bash", {"command": "id"}),
    ]


async def test_double_encoded_arguments_are_decoded(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(Reply([ToolCall("bash", json.dumps(json.dumps({"command": "ls"})), id="c1")]))

    response = await provider.complete(ask(tools=[BASH]), RecordingSink())

    assert response.message.tool_uses == [ToolUseBlock("c1", "bash", {"command": "ls"})]


async def test_usage_splits_cached_prompt_tokens(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(Reply("ok", usage=FakeUsage(prompt_tokens=100, completion_tokens=7, cached_tokens=40)))

    response = await provider.complete(ask(), RecordingSink())

    assert response.usage == Usage(input_tokens=60, output_tokens=7, cache_read_input_tokens=40)


async def test_usage_is_zero_when_the_server_reports_none(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply("ok", usage=None))

    response = await provider.complete(ask(), RecordingSink())

    assert response.usage == Usage()
    assert response.message.text == "ok"


# --------------------------------------------------------------------------- request shape


HISTORY = (
    Message.user("Please list the files."),
    Message("assistant", (TextBlock("Listing."), ToolUseBlock("call_1", "bash", {"command": "ls"}))),
    Message("user", (ToolResultBlock("call_1", "a.txt\nb.txt"),)),
    Message("assistant", (ToolUseBlock("call_2", "bash", {"command": "rm -rf /"}),)),
    Message(
        "user", (ToolResultBlock("call_2", "Denied: not approved", is_error=True), TextBlock("Stop that."))
    ),
    Message("assistant", (ToolUseBlock("call_3", "bash", {"command": "true"}),)),
    Message("user", (ToolResultBlock("call_3", ""),)),
    Message.assistant("Done."),
    Message.user("Thanks. Now what?"),
)


async def test_history_tools_and_results_translate_to_chat_messages(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply("Next."))
    tools = [BASH, ToolSpec("agent", "Run a sub-agent.", {"type": "object", "properties": {}})]

    await provider.complete(
        ModelRequest(system="sys", messages=HISTORY, tools=tools, max_tokens=512), RecordingSink()
    )

    body = fake.completions[-1].body  # the fake validated tool-call pairing and tool names
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "bash", "description": "Run a command.", "parameters": SCHEMA},
        },
        {
            "type": "function",
            "function": {
                "name": "agent",
                "description": "Run a sub-agent.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    assert body["max_tokens"] == 512
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Please list the files."},
        {
            "role": "assistant",
            "content": "Listing.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt\nb.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "rm -rf /"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: Denied: not approved"},
        {"role": "user", "content": "Stop that."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "true"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "content": "(no output)"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks. Now what?"},
    ]


def test_output_limit_field_and_usage_option_are_configurable() -> None:
    request = ask()
    assert "max_completion_tokens" in build_chat_params(
        request, "m", max_tokens_param="max_completion_tokens"
    )
    bare = build_chat_params(request, "m", max_tokens_param="none", include_usage=False)
    assert "max_tokens" not in bare and "stream_options" not in bare


def test_empty_system_and_empty_messages_are_left_out() -> None:
    request = ModelRequest(system="  ", messages=[Message.user("q"), Message("assistant", (TextBlock(" "),))])
    assert build_chat_params(request, "m")["messages"] == [{"role": "user", "content": "q"}]


# --------------------------------------------------------------------------- HTTP errors (SDK retries)


async def test_sdk_retries_429_and_500_then_succeeds(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Error(429, "Rate limit reached"), Error(500), Reply("finally"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "finally"
    assert [r.retry_count for r in fake.completions] == [0, 1, 2]
    assert sink.retries == []  # HTTP retries are the SDK's: no stream restart reported


async def test_server_error_that_outlasts_the_sdk_retries_is_one_line(fake: FakeOpenAI) -> None:
    fake.add(Error(500, "boom"), Error(500, "boom"), Error(500, "boom"))
    provider = OpenAICompatProvider(MODEL, base_url=fake.base_url, max_retries=2)

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert (
        one_line(info.value) == f"OpenAI-compatible API at {fake.base_url} error 500 after 3 attempts: boom"
    )
    await provider.aclose()


async def test_rate_limit_that_outlasts_the_sdk_retries(fake: FakeOpenAI) -> None:
    fake.add(*[Error(429, "slow down")] * 2)
    provider = OpenAICompatProvider(MODEL, base_url=fake.base_url, max_retries=1)

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert "rate limit (429) after 2 attempts: slow down" in one_line(info.value)
    await provider.aclose()


async def test_bad_request_fails_at_once_with_the_server_message(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Error(400, "This model's maximum context length is 4096 tokens."))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert one_line(info.value).endswith("error 400: This model's maximum context length is 4096 tokens.")
    assert len(fake.completions) == 1


async def test_model_without_tool_support_is_named_clearly(provider: OpenAICompatProvider) -> None:
    with FakeOpenAI(tools_supported=False) as server:
        p = OpenAICompatProvider("gemma:2b", base_url=server.base_url)
        with pytest.raises(ProviderError) as info:
            await p.complete(ask(tools=[BASH]), RecordingSink())
        await p.aclose()

    line = one_line(info.value)
    assert line.startswith(f"model 'gemma:2b' at {server.base_url} has no native tool calling (400:")
    assert "does not support tools" in line and "--enable-auto-tool-choice" in line


async def test_vllm_without_auto_tool_choice_is_named_clearly(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(
        Error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
    )

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(tools=[BASH]), RecordingSink())

    assert "has no native tool calling" in one_line(info.value)


async def test_missing_model_is_named(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(Error(404, f'model "{MODEL}" not found, try pulling it first'))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert one_line(info.value).startswith(f"model '{MODEL}' not found at {fake.base_url}")


async def test_authentication_failure_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(api_key="right") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        p = OpenAICompatProvider(MODEL, base_url=server.base_url)
        with pytest.raises(ProviderError) as info:
            await p.complete(ask(), RecordingSink())
        await p.aclose()

    assert one_line(info.value).startswith("authentication failed: check OPENAI_API_KEY")


async def test_api_key_from_the_environment_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(api_key="sk-env") as server:
        server.add(Reply("ok"))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        p = OpenAICompatProvider(MODEL, base_url=server.base_url)
        assert (await p.complete(ask(), RecordingSink())).message.text == "ok"
        await p.aclose()


async def test_without_any_key_a_placeholder_is_sent(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply("ok"))

    await provider.complete(ask(), RecordingSink())

    assert fake.completions[-1].headers["authorization"] == f"Bearer {NO_KEY_PLACEHOLDER}"


async def test_unreachable_local_server_is_one_line_with_a_hint() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    p = OpenAICompatProvider(MODEL, base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)

    with pytest.raises(ProviderError) as info:
        await p.complete(ask(), RecordingSink())

    line = one_line(info.value)
    assert line.startswith(f"could not reach OpenAI-compatible API at http://127.0.0.1:{port}/v1: ")
    assert line.endswith("(is the server running?)")
    await p.aclose()


async def test_no_answer_before_the_sdk_read_timeout(fake: FakeOpenAI) -> None:
    fake.add(Hang(5))
    p = OpenAICompatProvider(
        MODEL, base_url=fake.base_url, max_retries=0, request_timeout=30, stream_idle_timeout=0.3
    )

    with pytest.raises(ProviderError) as info:
        await p.complete(ask(), RecordingSink())

    assert (
        one_line(info.value) == f"OpenAI-compatible API at {fake.base_url} did not answer in time (1 attempt)"
    )
    await p.aclose()


async def test_request_timeout_ends_the_wait_for_a_server_that_never_answers(fake: FakeOpenAI) -> None:
    fake.add(Hang(30), Reply("never reached"))
    p = OpenAICompatProvider(MODEL, base_url=fake.base_url, request_timeout=0.3, stream_idle_timeout=30)

    with pytest.raises(ProviderError) as info:
        await p.complete(ask(), RecordingSink())

    assert (
        one_line(info.value)
        == f"OpenAI-compatible API at {fake.base_url} did not answer within 0.3 s (request_timeout)"
    )
    assert len(fake.completions) == 1 and fake.remaining == 1
    await p.aclose()


def test_the_request_timeout_reaches_a_provider_made_from_settings() -> None:
    p = make_openai_provider("ollama", model="m", request_timeout=7)
    assert (p.request_timeout, p.stream_idle_timeout) == (7, 7)


# --------------------------------------------------------------------------- broken streams (app retries)


async def test_cut_connection_mid_stream_is_retried(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(Reply("partial answer here", cut_after=2), Reply("whole answer"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "whole answer"
    assert [attempt for attempt, _ in sink.retries] == [1]
    assert "connection broke mid-stream" in sink.retries[0][1]


async def test_error_payload_mid_stream_is_retried(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(Reply("abc", error_after=2), Reply("fine"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "fine"
    assert sink.retries and "server_error" in sink.retries[0][1]


async def test_non_retryable_error_payload_fails_at_once(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply("abc", error_after=1, error_type="invalid_request_error", error_message="bad input"))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert "error mid-stream (invalid_request_error: bad input)" in one_line(info.value)
    assert fake.remaining == 0 and len(fake.completions) == 1


async def test_stream_ending_without_a_finish_reason_is_retried(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply("cut short", end_after=2), Reply("complete"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "complete"
    assert sink.retries == [(1, "stream ended before the finish reason")]


async def test_read_timeout_mid_stream_is_retried(fake: FakeOpenAI) -> None:
    fake.add(Reply("slow stream", delay=1.0), Reply("quick"))
    p = OpenAICompatProvider(MODEL, base_url=fake.base_url, stream_idle_timeout=0.3, stream_backoff=0.01)
    sink = RecordingSink()

    response = await p.complete(ask(), sink)

    assert response.message.text == "quick"
    assert sink.retries == [(1, "no data from the server for 0.3 s")]
    await p.aclose()


async def test_invalid_tool_json_is_retried(fake: FakeOpenAI, provider: OpenAICompatProvider) -> None:
    fake.add(
        Reply([ToolCall("bash", '{"command": "ls"')]), Reply([ToolCall("bash", {"command": "ls"}, id="ok")])
    )
    sink = RecordingSink()

    response = await provider.complete(ask(tools=[BASH]), sink)

    assert response.message.tool_uses == [ToolUseBlock("ok", "bash", {"command": "ls"})]
    assert "invalid JSON arguments for tool 'bash'" in sink.retries[0][1]


async def test_invalid_tool_json_every_time_fails_clearly(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(*[Reply([ToolCall("bash", '{"command": ')]) for _ in range(3)])

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(tools=[BASH]), RecordingSink())

    line = one_line(info.value)
    assert "stream failed after 3 attempts" in line and "invalid JSON arguments for tool 'bash'" in line


async def test_tool_json_that_is_not_an_object_comes_back_empty_with_its_problem(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply([ToolCall("bash", "[1, 2]", id="call_bad")]))
    sink = RecordingSink()

    response = await provider.complete(ask(tools=[BASH]), sink)

    assert response.message.tool_uses == [ToolUseBlock("call_bad", "bash", {})]
    assert response.invalid_tool_inputs == {
        "call_bad": "model sent tool arguments that are not a JSON object for 'bash': [1, 2]"
    }
    assert sink.retries == [] and len(fake.completions) == 1


async def test_tool_call_cut_by_the_output_limit_fails_at_once(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Reply([ToolCall("bash", '{"command": "cat <<EOF\\nlong')], finish_reason="length"))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(tools=[BASH]), RecordingSink())

    assert one_line(info.value).startswith("the reply hit the output limit (max_tokens) inside a tool call")
    assert len(fake.completions) == 1


async def test_stream_that_keeps_breaking_fails_after_three_attempts(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(*[Reply("x y z", cut_after=1) for _ in range(3)])
    sink = RecordingSink()

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), sink)

    assert one_line(info.value).startswith(
        f"OpenAI-compatible API at {fake.base_url} stream failed after 3 attempts"
    )
    assert [a for a, _ in sink.retries] == [1, 2]


async def test_cancelling_mid_stream_leaves_the_provider_usable(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    held = Reply("never finished", hold_after=2)
    fake.add(held, Reply("after"))
    task = asyncio.create_task(provider.complete(ask(), RecordingSink()))
    await asyncio.to_thread(held.held.wait, 5)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    held.release()

    assert (await provider.complete(ask(), RecordingSink())).message.text == "after"


async def test_a_call_cancelled_mid_stream_reports_what_it_has(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    """A server tells usage only in its last chunk: a cut call reports an estimate of what was
    sent and what came back, once, so the meter and the store count it."""
    held = Reply([Text("Hello world, the answer is", deltas=3)], hold_after=3)
    fake.add(held)
    sink = RecordingSink()
    request = ask("count these words " * 50)
    task = asyncio.create_task(provider.complete(request, sink))
    assert await asyncio.to_thread(held.held.wait, 5)
    await wait_until(lambda: len(sink.texts) >= 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    held.release()

    [(spent, model)] = sink.usages
    sent = json.dumps(fake.completions[0].body["messages"])
    assert len(sent) // 4 * 0.9 <= spent.input_tokens <= len(sent) // 4 * 1.2
    assert spent.output_tokens == (len("".join(sink.texts)) + 3) // 4 > 0
    assert model == MODEL


async def test_a_call_cancelled_before_the_response_reports_no_usage(
    fake: FakeOpenAI, provider: OpenAICompatProvider
) -> None:
    fake.add(Hang(5))
    sink = RecordingSink()
    task = asyncio.create_task(provider.complete(ask(), sink))
    await wait_until(lambda: fake.requests)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sink.usages == []


async def test_aclose_leaves_an_injected_client_open(fake: FakeOpenAI) -> None:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="k", base_url=fake.base_url)
    p = OpenAICompatProvider(MODEL, client=client)
    await p.aclose()
    fake.add(Reply("still open"))

    assert (
        await OpenAICompatProvider(MODEL, client=client).complete(ask(), RecordingSink())
    ).message.text == "still open"
    await client.close()


# --------------------------------------------------------------------------- profiles


def test_builtin_profiles_point_at_the_usual_local_ports() -> None:
    assert {name: p.base_url for name, p in BUILTIN_PROFILES.items()} == {
        "ollama": "http://localhost:11434/v1",
        "vllm": "http://localhost:8000/v1",
        "llamacpp": "http://localhost:8080/v1",
    }


def test_a_profile_name_as_provider_resolves_its_url() -> None:
    endpoint = resolve_endpoint("ollama", model="llama3.2", environ={})

    assert (endpoint.profile, endpoint.base_url, endpoint.model) == (
        "ollama",
        "http://localhost:11434/v1",
        "llama3.2",
    )
    assert endpoint.api_key == NO_KEY_PLACEHOLDER


def test_base_url_overrides_and_may_name_a_profile() -> None:
    assert resolve_endpoint("ollama", model="m", base_url="http://gpu:11434/v1/", environ={}).base_url == (
        "http://gpu:11434/v1"
    )
    assert (
        resolve_endpoint("openai", model="m", base_url="vllm", environ={}).base_url
        == "http://localhost:8000/v1"
    )
    assert resolve_endpoint("openai", model="gpt-4.1", environ={"OPENAI_API_KEY": "sk"}).base_url is None


def test_user_profiles_add_and_override() -> None:
    user = {
        "lmstudio": OpenAIProfile(base_url="http://localhost:1234/v1", model="qwen", api_key_env="LMS_KEY"),
        "ollama": OpenAIProfile(base_url="http://box:11434/v1"),
    }

    lms = resolve_endpoint("lmstudio", model=None, profiles=user, environ={"LMS_KEY": "secret"})
    assert (lms.base_url, lms.model, lms.api_key) == ("http://localhost:1234/v1", "qwen", "secret")
    assert resolve_endpoint("ollama", model="m", profiles=user, environ={}).base_url == "http://box:11434/v1"
    assert is_openai_compatible("lmstudio", user) and is_openai_compatible("openai")
    assert not is_openai_compatible("lmstudio") and not is_openai_compatible("anthropic")


def test_unresolvable_endpoints_are_one_line_errors() -> None:
    with pytest.raises(
        EndpointError, match="needs a model: pass --model NAME or set model in \\[profiles.ollama\\]"
    ):
        resolve_endpoint("ollama", model=None, environ={})
    with pytest.raises(EndpointError, match="unknown OpenAI-compatible provider 'nope'"):
        resolve_endpoint("nope", model="m", environ={})
    with pytest.raises(EndpointError, match="neither a URL"):
        resolve_endpoint("openai", model="m", base_url="localhost:1234", environ={})


async def test_make_openai_provider_builds_a_working_provider(fake: FakeOpenAI) -> None:
    fake.add(Reply("via profile"))
    p = make_openai_provider(
        "mine", model=None, profiles={"mine": OpenAIProfile(base_url=fake.base_url, model="tiny")}
    )

    response = await p.complete(ask(), RecordingSink())

    assert (p.name, p.model, response.message.text) == ("openai", "tiny", "via profile")
    await p.aclose()


def test_profiles_module_does_not_import_the_sdk() -> None:
    code = "import sys, tui_assist.providers.profiles; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


# --------------------------------------------------------------------------- turns end to end


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def turn_deps(fake: FakeOpenAI, workdir: Path) -> TurnDeps:
    provider = OpenAICompatProvider(MODEL, base_url=fake.base_url, stream_backoff=0.01)
    return TurnDeps(provider, toolbox_factory(workdir, bash_timeout=10), approvals=ApprovalPolicy("allow"))


async def test_refine_turn_end_to_end(fake: FakeOpenAI, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("alpha\nbeta\n")
    fake.add(
        Reply([Text("Checking."), ToolCall("bash", {"command": "wc -l < notes.txt"}, deltas=5)]),
        Reply("There are 3 lines."),
        Reply("REVISE\nThe tool output says 2."),
        Reply(
            [ToolCall("str_replace_based_edit_tool", {"command": "view", "path": "notes.txt"}, deltas=4)],
            cut_after=3,
        ),
        Reply([ToolCall("str_replace_based_edit_tool", {"command": "view", "path": "notes.txt"}, deltas=4)]),
        Reply("There are 2 lines."),
        Reply("**PASS**"),
    )
    deps = turn_deps(fake, workdir)
    observer = RecordingObserver()
    conversation = Conversation()

    result = await RefineTurn(deps, max_rounds=3).run(conversation, "How many lines in notes.txt?", observer)

    assert (result.outcome, result.answer) == ("answered", "There are 2 lines.")
    assert [(r.verdict, r.tool_calls) for r in result.rounds] == [("revise", 1), ("pass", 1)]
    assert result.rounds[0].evidence[0].output.strip() == "2"
    assert "alpha" in result.rounds[1].evidence[0].output
    requests = fake.completions
    critic = requests[2].body
    assert "tools" not in critic
    assert "2" in requests[2].all_text() and "There are 3 lines." in requests[2].all_text()
    assert "The tool output says 2." in requests[3].all_text()  # round 2 sees the feedback
    assert any(isinstance(e, StreamRetried) for e in observer.events)  # the cut stream was retried
    assert conversation.messages == [
        Message.user("How many lines in notes.txt?"),
        Message.assistant("There are 2 lines."),
    ]
    assert result.usage.output_tokens > 0
    await deps.provider.aclose()


async def test_agent_turn_keeps_the_tool_transcript_valid_for_the_next_call(
    fake: FakeOpenAI, workdir: Path
) -> None:
    fake.add(
        Reply([ToolCall("bash", {"command": "echo one"}), ToolCall("bash", {"command": "echo two"})]),
        Reply("one, two"),
        Reply("again: one, two"),
    )
    deps = turn_deps(fake, workdir)
    conversation = Conversation()

    first = await AgentTurn(deps).run(conversation, "echo twice", RecordingObserver())
    second = await AgentTurn(deps).run(conversation, "and again?", RecordingObserver())

    assert (first.answer, second.answer) == ("one, two", "again: one, two")
    roles = [m["role"] for m in fake.completions[-1].messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    await deps.provider.aclose()
