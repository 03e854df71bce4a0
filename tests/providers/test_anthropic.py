"""AnthropicProvider driven through the real `anthropic` SDK against the loopback fake."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import typing
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, Hang, Reply, Text, Thinking, ToolUse
from tests.fakes.anthropic import Usage as FakeUsage
from tests.wait import wait_until
from tui_assist.core.conversation import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tui_assist.core.model import ModelRequest, ProviderError, ToolSpec
from tui_assist.providers.anthropic import (
    BASH_TOOL_TYPE,
    DEFAULT_MODEL,
    MAX_CACHE_BREAKPOINTS,
    NATIVE_TOOL_TYPES,
    TEXT_EDITOR_TOOL_TYPE,
    AnthropicProvider,
    build_stream_params,
)
from tui_assist.providers.anthropic_info import MISSING_CREDENTIALS_HINT, anthropic_credentials_available

EPHEMERAL = {"type": "ephemeral"}


@dataclass
class RecordingSink:
    texts: list[str] = field(default_factory=list)
    retries: list[tuple[int, str]] = field(default_factory=list)
    usages: list[tuple[Usage, str]] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)

    def text(self, delta: str) -> None:
        self.texts.append(delta)

    def thinking(self, delta: str) -> None:
        self.thoughts.append(delta)

    def retrying(self, attempt: int, error: str) -> None:
        self.retries.append((attempt, error))

    def usage(self, usage: Usage, model: str) -> None:
        self.usages.append((usage, model))


@pytest.fixture
async def provider(fake: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    p = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)
    yield p
    await p.aclose()


def ask(text: str = "hi", **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        system=kwargs.pop("system", "You are terse."), messages=[Message.user(text)], **kwargs
    )


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where the request put cache_control, as readable labels."""
    found = [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    found += [f"system:{i}" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    for i, m in enumerate(body["messages"]):
        found += [f"message:{i}.{j}" for j, b in enumerate(m["content"]) if "cache_control" in b]
    return found


# --------------------------------------------------------------------------- streaming


async def test_text_streams_as_several_deltas(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.add(Reply([Text("Hello there, world", deltas=["Hello", " there,", " world"])]))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert sink.texts == ["Hello", " there,", " world"]
    assert response.message == Message("assistant", (TextBlock("Hello there, world"),))
    assert response.stop_reason == "end_turn"
    assert response.model == DEFAULT_MODEL
    req = fake.requests[-1]
    assert req.body["stream"] is True
    assert req.headers["x-stainless-helper-method"] == "stream"
    assert req.body["model"] == DEFAULT_MODEL


async def test_tool_use_input_is_assembled_from_partial_json(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    tool_input = {"city": "Paris", "days": [1, 2, 3], "units": "metric"}
    fake.add(Reply([Text("Let me check."), ToolUse("get_weather", tool_input, id="toolu_01", deltas=6)]))
    sink = RecordingSink()

    response = await provider.complete(ask("weather?"), sink)

    assert response.message.content == (
        TextBlock("Let me check."),
        ToolUseBlock("toolu_01", "get_weather", tool_input),
    )
    assert response.stop_reason == "tool_use"
    assert "".join(sink.texts) == "Let me check."  # tool JSON is not streamed as text


async def test_thinking_blocks_are_kept_with_their_signature(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(Reply([Thinking("Let me think.", signature="sig-1"), Text("Answer.")]))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.content == (ThinkingBlock("Let me think.", "sig-1"), TextBlock("Answer."))
    assert response.message.text == "Answer."
    assert sink.texts == ["Ans", "wer", "."]
    assert "".join(sink.thoughts) == "Let me think."


async def test_usage_carries_cache_fields_and_final_output_count(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(
        Reply(
            "ok",
            usage=FakeUsage(
                input_tokens=12,
                output_tokens=30,
                cache_creation_input_tokens=100,
                cache_read_input_tokens=200,
            ),
        )
    )

    response = await provider.complete(ask(), RecordingSink())

    # message_start says output_tokens=1; the cumulative message_delta value must win.
    assert response.usage == Usage(
        input_tokens=12, output_tokens=30, cache_creation_input_tokens=100, cache_read_input_tokens=200
    )


# --------------------------------------------------------------------------- request shape

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
TOOLS = (
    ToolSpec("search", "Search the docs.", SCHEMA),
    ToolSpec("bash", "Run a command.", {"type": "object"}, native_type=BASH_TOOL_TYPE),
    ToolSpec(
        "str_replace_based_edit_tool", "Edit files.", {"type": "object"}, native_type=TEXT_EDITOR_TOOL_TYPE
    ),
)
HISTORY = (
    Message.user("Please list the files."),
    Message("assistant", (TextBlock("Listing."), ToolUseBlock("toolu_a", "bash", {"command": "ls"}))),
    Message("user", (ToolResultBlock("toolu_a", "a.txt\nb.txt"),)),
    Message("assistant", (TextBlock("Two files."), TextBlock("  "))),
    Message.user("Thanks. Count the lines too."),
)


async def test_request_carries_tools_system_and_four_breakpoints(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(Reply("done"))
    request = ModelRequest(system="You are terse.", messages=HISTORY, tools=TOOLS, stable_prefix=3)

    await provider.complete(request, RecordingSink())

    body = fake.requests[-1].body
    assert fake.requests[-1].status == 200  # the fake validated the body (<= 4 breakpoints, pairing...)
    assert body["tools"] == [
        {"name": "search", "description": "Search the docs.", "input_schema": SCHEMA},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool", "cache_control": EPHEMERAL},
    ]
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}]
    assert breakpoints(body) == ["tool:str_replace_based_edit_tool", "system:0", "message:2.0", "message:4.0"]
    assert body["messages"][2]["content"][0]["type"] == "tool_result"
    # The whitespace-only text block is not sent (the API rejects it).
    assert body["messages"][3]["content"] == [{"type": "text", "text": "Two files."}]
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_a",
        "name": "bash",
        "input": {"command": "ls"},
    }


async def test_a_message_left_without_content_is_not_sent(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    # A history stored before empty replies were refused: the API answers 400 to any request
    # carrying such a message ("all messages must have non-empty content").
    history = (
        Message.user("q1"),
        Message("assistant", ()),
        Message.user("q2"),
        Message("assistant", (TextBlock(" "),)),
        Message.user("q3"),
    )
    fake.add(Reply("fine"))

    response = await provider.complete(
        ModelRequest(system="s", messages=history, stable_prefix=4), RecordingSink()
    )

    assert response.message.text == "fine"
    body = fake.requests[-1].body
    assert [(m["role"], [b["text"] for b in m["content"]]) for m in body["messages"]] == [
        ("user", ["q1"]),
        ("user", ["q2"]),
        ("user", ["q3"]),
    ]
    assert breakpoints(body) == ["system:0", "message:1.0", "message:2.0"]


@pytest.mark.parametrize(
    ("stable_prefix", "tools", "system", "expected"),
    [
        (0, TOOLS, "sys", ["tool:str_replace_based_edit_tool", "system:0", "message:4.0"]),
        (5, TOOLS, "sys", ["tool:str_replace_based_edit_tool", "system:0", "message:4.0"]),
        (9, (), "sys", ["system:0", "message:4.0"]),
        (4, (), "", ["message:3.0", "message:4.0"]),
        (1, TOOLS[:1], " ", ["tool:search", "message:0.0", "message:4.0"]),
    ],
)
def test_breakpoints_never_exceed_four_nor_mark_empty_text(
    stable_prefix: int, tools: tuple[ToolSpec, ...], system: str, expected: list[str]
) -> None:
    request = ModelRequest(system=system, messages=HISTORY, tools=tools, stable_prefix=stable_prefix)

    params = build_stream_params(request, DEFAULT_MODEL)
    body = json.loads(json.dumps(params))

    assert breakpoints(body) == expected
    assert len(expected) <= MAX_CACHE_BREAKPOINTS
    assert ("system" in body) == bool(system.strip())
    for m in body["messages"]:
        for b in m["content"]:
            assert b.get("type") != "text" or b["text"].strip()


LOOP = (
    *HISTORY,
    Message("assistant", (ToolUseBlock("toolu_b", "bash", {"command": "wc -l a.txt"}),)),
    Message("user", (ToolResultBlock("toolu_b", "3 a.txt"),)),
)


@pytest.mark.parametrize(
    ("stable_prefix", "tools", "expected"),
    [
        # The end, where the previous loop call ended, the stable history and the system: the
        # tool breakpoint goes first, since the system one covers the tools.
        (3, TOOLS, ["system:0", "message:2.0", "message:4.0", "message:6.0"]),
        # No stable history (a sub-agent): the tools keep theirs.
        (0, TOOLS, ["tool:str_replace_based_edit_tool", "system:0", "message:4.0", "message:6.0"]),
        (5, (), ["system:0", "message:4.0", "message:6.0"]),
    ],
)
def test_a_loop_call_marks_where_the_previous_call_ended(
    stable_prefix: int, tools: tuple[ToolSpec, ...], expected: list[str]
) -> None:
    request = ModelRequest(system="sys", messages=LOOP, tools=tools, stable_prefix=stable_prefix)
    body = json.loads(json.dumps(build_stream_params(request, DEFAULT_MODEL)))
    assert breakpoints(body) == expected


def test_stable_blocks_mark_inside_a_message_and_an_uncached_tail_is_left_unmarked() -> None:
    critic = Message("user", (TextBlock("<context>"), TextBlock("<task>"), TextBlock("<evidence>")))
    request = ModelRequest(system="critic", messages=[critic], stable_blocks=2, cache_tail=False)
    body = json.loads(json.dumps(build_stream_params(request, DEFAULT_MODEL)))
    assert breakpoints(body) == ["system:0", "message:0.1"]
    # Blocks that are not sent do not shift the mark.
    critic = Message("user", (TextBlock(" "), TextBlock("<task>"), TextBlock("<evidence>")))
    request = ModelRequest(system="critic", messages=[critic], stable_blocks=2, cache_tail=False)
    body = json.loads(json.dumps(build_stream_params(request, DEFAULT_MODEL)))
    assert breakpoints(body) == ["system:0", "message:0.0"]


def test_old_models_get_native_tools_as_custom_tools() -> None:
    params = build_stream_params(ModelRequest(system="s", messages=HISTORY, tools=TOOLS), "claude-3-5-haiku")
    tools = json.loads(json.dumps(params))["tools"]

    assert [t.get("type") for t in tools] == [None, None, None]
    assert [t["name"] for t in tools] == ["search", "bash", "str_replace_based_edit_tool"]


def test_native_tool_types_exist_in_the_installed_sdk() -> None:
    from anthropic._data.deprecated_models import DEPRECATED_MODELS
    from anthropic.types import ToolBash20250124Param, ToolTextEditor20250728Param

    for param, tool_type in (
        (ToolBash20250124Param, BASH_TOOL_TYPE),
        (ToolTextEditor20250728Param, TEXT_EDITOR_TOOL_TYPE),
    ):
        hints = typing.get_type_hints(param)
        (type_literal,) = typing.get_args(hints["type"])
        (name_literal,) = typing.get_args(hints["name"])
        assert (type_literal, NATIVE_TOOL_TYPES[name_literal]) == (tool_type, tool_type)
    assert DEFAULT_MODEL not in DEPRECATED_MODELS


# --------------------------------------------------------------------------- SDK-level retries and errors


@pytest.mark.parametrize("status", [529, 429, 500])
async def test_sdk_retries_a_retryable_status(
    fake: FakeAnthropic, provider: AnthropicProvider, status: int
) -> None:
    fake.add(Error(status), Reply("ok"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "ok"
    assert [(r.status, r.retry_count) for r in fake.requests] == [(status, 0), (200, 1)]
    assert sink.retries == []  # the SDK retried before any text: nothing to void


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (400, "prompt is too long", "Anthropic API error 400 (invalid_request_error): prompt is too long"),
        (
            401,
            None,
            "authentication failed: check ANTHROPIC_API_KEY (Anthropic API 401 authentication_error: invalid x-api-key)",
        ),
        (403, "no access", "Anthropic API error 403 (permission_error): no access"),
        (404, "model: claude-nope", "Anthropic API error 404 (not_found_error): model: claude-nope"),
    ],
)
async def test_non_retryable_status_fails_at_once_with_one_line(
    fake: FakeAnthropic, provider: AnthropicProvider, status: int, message: str | None, expected: str
) -> None:
    fake.add(Error(status, message=message), Reply("never sent"))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert str(info.value) == expected
    assert len(fake.requests) == 1
    assert fake.remaining == 1


async def test_overload_that_outlasts_the_sdk_retries(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(Error(529), Error(529), Error(529), Reply("too late"))
    sink = RecordingSink()

    with pytest.raises(ProviderError, match=r"^Anthropic API overloaded \(529\) after 3 attempts$"):
        await provider.complete(ask(), sink)

    assert [r.retry_count for r in fake.requests] == [0, 1, 2]
    assert sink.retries == []


async def test_rate_limit_that_outlasts_the_sdk_retries(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, max_retries=1)
    fake.add(Error(429), Error(429))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert str(info.value).startswith("Anthropic API rate limit (429) after 2 attempts: ")


async def test_unreachable_api_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    provider = AnthropicProvider(api_key="test", base_url=f"http://127.0.0.1:{port}", max_retries=0)

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert str(info.value).startswith(f"could not reach Anthropic API at http://127.0.0.1:{port}: ")
    assert "\n" not in str(info.value)


async def test_no_answer_before_the_sdk_read_timeout(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(
        api_key="test", base_url=fake.base_url, max_retries=0, request_timeout=30, stream_idle_timeout=0.2
    )
    fake.add(Hang(5))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert str(info.value) == f"Anthropic API at {fake.base_url} did not answer in time (1 attempt)"


async def test_request_timeout_ends_the_wait_for_a_server_that_never_answers(fake: FakeAnthropic) -> None:
    # The SDK would retry a timed-out attempt twice; the request timeout bounds the whole wait.
    provider = AnthropicProvider(
        api_key="test", base_url=fake.base_url, request_timeout=0.3, stream_idle_timeout=30
    )
    fake.add(Hang(30), Reply("never reached"))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert (
        str(info.value) == f"Anthropic API at {fake.base_url} did not answer within 0.3 s (request_timeout)"
    )
    assert len(fake.requests) == 1 and fake.remaining == 1


async def test_request_timeout_also_bounds_each_attempt_by_default(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, request_timeout=0.3)
    fake.add(Hang(30), Hang(30), Hang(30))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert str(info.value).startswith(f"Anthropic API at {fake.base_url} did not answer")
    assert provider.stream_idle_timeout == 0.3


async def test_missing_credentials_give_the_setup_hint(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # Without ANTHROPIC_CONFIG_DIR the SDK only notices at request time (a TypeError).
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    provider = AnthropicProvider(base_url=fake.base_url)

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert str(info.value) == MISSING_CREDENTIALS_HINT
    assert fake.requests == []


async def test_missing_credentials_with_a_config_dir_give_the_setup_hint(fake: FakeAnthropic) -> None:
    # conftest points ANTHROPIC_CONFIG_DIR at an empty dir: the SDK fails building the client.
    provider = AnthropicProvider(base_url=fake.base_url)

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert str(info.value) == MISSING_CREDENTIALS_HINT


async def test_api_key_from_the_environment_is_used(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    fake.add(Reply("ok"))
    provider = AnthropicProvider()

    response = await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert response.message.text == "ok"
    headers = fake.requests[-1].headers
    assert "sk-env" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_credentials_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    assert not anthropic_credentials_available()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert anthropic_credentials_available()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok")
    assert anthropic_credentials_available()
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    config_dir = tmp_path / "anthropic-config" / "configs"
    config_dir.mkdir(parents=True)
    (config_dir / "default.json").write_text("{}")
    assert anthropic_credentials_available()


def test_light_modules_do_not_import_the_sdk() -> None:
    code = (
        "import sys, tui_assist.core.model, tui_assist.providers.anthropic_info; "
        "print('anthropic' in sys.modules, 'httpx2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# --------------------------------------------------------------------------- app-level stream retries


async def test_sse_error_mid_stream_is_retried(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.add(Reply("Hello world, again", error_after=4), Reply("Fresh answer"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "Fresh answer"
    assert sink.retries == [(1, "overloaded_error: Overloaded")]
    assert sink.texts[0] == "Hello " and "".join(sink.texts[1:]) == "Fresh answer"
    assert [(r.status, r.retry_count) for r in fake.requests] == [(200, 0), (200, 0)]


async def test_non_retryable_sse_error_fails_at_once(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(Reply("x", error_after=2, error_type="invalid_request_error", error_message="bad"), Reply("no"))

    with pytest.raises(
        ProviderError, match=r"^Anthropic API error mid-stream \(invalid_request_error: bad\)$"
    ):
        await provider.complete(ask(), RecordingSink())

    assert len(fake.requests) == 1


async def test_cut_connection_mid_stream_is_retried(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.add(Reply("Hello world, again", cut_after=4), Reply("Fresh answer"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "Fresh answer"
    assert len(sink.retries) == 1
    assert sink.retries[0][0] == 1 and sink.retries[0][1].startswith(
        "connection broke mid-stream (RemoteProtocolError"
    )
    assert len(fake.requests) == 2


async def test_a_stream_that_goes_silent_is_retried(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(
        api_key="test", base_url=fake.base_url, stream_idle_timeout=0.3, stream_backoff=0.01
    )
    fake.add(Reply("Hello world, again", hold_after=4), Reply("Fresh answer"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)
    await provider.aclose()

    assert response.message.text == "Fresh answer"
    assert len(sink.retries) == 1
    assert sink.retries[0][1].startswith("no data from the API for 0.3 s (ReadTimeout")
    assert len(fake.requests) == 2


async def test_a_stream_that_always_goes_silent_ends_in_one_line(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(
        api_key="test", base_url=fake.base_url, stream_idle_timeout=0.3, stream_backoff=0.01
    )
    fake.add(*(Reply("Hello world, again", hold_after=3) for _ in range(3)))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert str(info.value).startswith(
        "Anthropic API stream failed after 3 attempts: no data from the API for 0.3 s (ReadTimeout"
    )
    assert "\n" not in str(info.value)


async def test_stream_ending_early_is_retried(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    def drop_tail(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in events if e["type"] not in ("message_delta", "message_stop")]

    fake.add(Reply("partial", transform=drop_tail), Reply("whole"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "whole"
    assert sink.retries == [(1, "stream ended before message_stop")]


async def test_unparsable_tool_json_is_retried(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    def corrupt(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for e in events:
            if e.get("delta", {}).get("type") == "input_json_delta" and e["delta"]["partial_json"]:
                e["delta"]["partial_json"] = "}}}"
                break
        return events

    fake.add(Reply([ToolUse("bash", {"command": "ls"})], transform=corrupt), Reply("fine"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "fine"
    assert len(sink.retries) == 1 and sink.retries[0][1].startswith("malformed stream (ValueError")


def _delta_for_a_later_block(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for e in events:
        if e["type"] == "content_block_delta":
            e["index"] += 1
    return events


def _no_block_start(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] != "content_block_start"]


def _stop_for_a_later_block(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for e in events:
        if e["type"] == "content_block_stop":
            e["index"] += 1
    return events


UNPLACEABLE_EVENTS = pytest.mark.parametrize(
    "surgery", [_delta_for_a_later_block, _no_block_start, _stop_for_a_later_block]
)


@UNPLACEABLE_EVENTS
async def test_an_event_for_a_block_that_never_started_is_a_broken_stream(
    fake: FakeAnthropic, provider: AnthropicProvider, surgery: Any
) -> None:
    fake.add(Reply("Hello there", transform=surgery), Reply("Fresh answer"))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.text == "Fresh answer"
    assert [(n, why.split(":")[0]) for n, why in sink.retries] == [(1, "malformed stream (IndexError")]


@UNPLACEABLE_EVENTS
async def test_a_stream_of_unplaceable_events_ends_in_one_line(
    fake: FakeAnthropic, provider: AnthropicProvider, surgery: Any
) -> None:
    fake.add(*(Reply("Hello there", transform=surgery) for _ in range(3)))

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), RecordingSink())

    assert str(info.value) == (
        "Anthropic API stream failed after 3 attempts: malformed stream (IndexError: list index out of range)"
    )


NOT_AN_OBJECT = pytest.mark.parametrize(
    ("tool_input", "shown"),
    [(42, "42"), ([["command", "ls"]], '[["command", "ls"]]'), ("ls", '"ls"'), (None, "null")],
)


@NOT_AN_OBJECT
async def test_tool_input_that_is_not_an_object_comes_back_empty_with_its_problem(
    fake: FakeAnthropic, provider: AnthropicProvider, tool_input: Any, shown: str
) -> None:
    """Not the stream's fault, so not retried: the agent loop tells the model (tests/integration)."""
    fake.add(Reply([ToolUse("bash", tool_input, deltas=1, id="toolu_bad")]))
    sink = RecordingSink()

    response = await provider.complete(ask(), sink)

    assert response.message.content == (ToolUseBlock("toolu_bad", "bash", {}),)
    assert response.invalid_tool_inputs == {
        "toolu_bad": f"model sent tool arguments that are not a JSON object for 'bash': {shown}"
    }
    assert sink.retries == [] and len(fake.requests) == 1


async def test_stream_that_keeps_breaking_fails_after_three_attempts(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(*(Reply("Hello world", error_after=4) for _ in range(3)), Reply("never reached"))
    sink = RecordingSink()

    with pytest.raises(ProviderError) as info:
        await provider.complete(ask(), sink)

    assert str(info.value) == "Anthropic API stream failed after 3 attempts: overloaded_error: Overloaded"
    assert [attempt for attempt, _ in sink.retries] == [1, 2]
    assert len(fake.requests) == 3
    assert fake.remaining == 1


async def test_stream_retries_are_configurable(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_retries=0)
    fake.add(Reply("Hello world", cut_after=4), Reply("never reached"))

    with pytest.raises(
        ProviderError, match=r"^Anthropic API stream failed after 1 attempt: connection broke"
    ):
        await provider.complete(ask(), RecordingSink())
    await provider.aclose()

    assert len(fake.requests) == 1


# --------------------------------------------------------------------------- caching


async def test_stable_prefix_is_read_back_from_the_cache(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    """Turn 2 reads turn 1's whole prompt, though the final-message breakpoint moved on."""
    fake.add(Reply("First answer."), Reply("Second answer."), Reply("Third answer."))
    first = [Message.user("First question, with enough words to make a prefix.")]
    r1 = await provider.complete(
        ModelRequest(system="You are terse.", messages=first, tools=TOOLS), RecordingSink()
    )
    second = [*first, r1.message, Message.user("Second question.")]
    r2 = await provider.complete(
        ModelRequest(system="You are terse.", messages=second, tools=TOOLS, stable_prefix=1), RecordingSink()
    )
    third = [*second, r2.message, Message.user("Third question.")]
    r3 = await provider.complete(
        ModelRequest(system="You are terse.", messages=third, tools=TOOLS, stable_prefix=3), RecordingSink()
    )

    assert r1.usage.cache_read_input_tokens == 0 and r1.usage.cache_creation_input_tokens > 0
    assert r2.usage.cache_read_input_tokens == r1.usage.cache_creation_input_tokens
    assert r2.usage.cache_creation_input_tokens > 0
    assert r3.usage.cache_read_input_tokens == r2.usage.total_input_tokens - r2.usage.input_tokens
    assert r3.usage.cache_read_input_tokens > r2.usage.cache_read_input_tokens


async def test_without_a_stable_breakpoint_only_tools_and_system_are_read(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    """The fake, like the API, only hits at breakpoint positions an earlier request wrote."""
    fake.add(Reply("First answer."), Reply("Second answer."))
    first = [Message.user("First question, with enough words to make a prefix.")]
    r1 = await provider.complete(
        ModelRequest(system="You are terse.", messages=first, tools=TOOLS), RecordingSink()
    )
    second = [*first, r1.message, Message.user("Second question.")]
    r2 = await provider.complete(
        ModelRequest(system="You are terse.", messages=second, tools=TOOLS), RecordingSink()
    )

    assert 0 < r2.usage.cache_read_input_tokens < r1.usage.cache_creation_input_tokens


async def test_each_loop_call_reads_the_whole_previous_call_from_the_cache(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    """The fake has no 20-block lookback: only the breakpoint where the last call ended hits."""
    fake.add(Reply("a"), Reply("b"))
    first = ModelRequest(system="You are terse.", messages=HISTORY, tools=TOOLS, stable_prefix=3)
    r1 = await provider.complete(first, RecordingSink())
    second = ModelRequest(system="You are terse.", messages=LOOP, tools=TOOLS, stable_prefix=3)
    r2 = await provider.complete(second, RecordingSink())

    assert r2.usage.cache_read_input_tokens == r1.usage.total_input_tokens - r1.usage.input_tokens
    # Only the two new messages are written.
    assert 0 < r2.usage.cache_creation_input_tokens < r1.usage.cache_creation_input_tokens / 2


async def test_short_prefixes_are_not_cached() -> None:
    with FakeAnthropic(min_cacheable_tokens=10_000) as fake:
        provider = AnthropicProvider(api_key="test", base_url=fake.base_url)
        fake.add(Reply("a"), Reply("b"))
        for _ in range(2):
            response = await provider.complete(ask(), RecordingSink())
            assert (response.usage.cache_creation_input_tokens, response.usage.cache_read_input_tokens) == (
                0,
                0,
            )
        await provider.aclose()


# --------------------------------------------------------------------------- cancellation


async def test_cancelling_mid_stream_raises_cancelled_and_leaves_the_provider_usable(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    held = Reply("Hello world, again", hold_after=4)
    fake.add(held, Reply("after"))
    sink = RecordingSink()

    task = asyncio.create_task(provider.complete(ask(), sink))
    assert await asyncio.to_thread(held.held.wait, 5)
    await wait_until(lambda: sink.texts)
    assert sink.texts == ["Hello "]
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task

    assert sink.retries == []
    held.release()
    response = await provider.complete(ask(), RecordingSink())
    assert response.message.text == "after"
    assert len(fake.requests) == 2


async def test_a_call_cancelled_after_message_start_reports_what_the_api_counted(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    usage = FakeUsage(input_tokens=120, cache_creation_input_tokens=40, cache_read_input_tokens=300)
    held = Reply("Hello world, again", hold_after=4, usage=usage)
    fake.add(held)
    sink = RecordingSink()
    task = asyncio.create_task(provider.complete(ask(), sink))
    assert await asyncio.to_thread(held.held.wait, 5)
    await wait_until(lambda: sink.texts)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    held.release()

    # message_start's counts: the input and cache counts in full, the output so far (about one).
    [(spent, model)] = sink.usages
    assert (spent.input_tokens, spent.cache_creation_input_tokens, spent.cache_read_input_tokens) == (
        120,
        40,
        300,
    )
    assert spent.output_tokens <= 1
    assert model == "claude-sonnet-4-6"


async def test_a_call_cancelled_before_the_response_reports_no_usage(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(Hang(5))
    sink = RecordingSink()
    task = asyncio.create_task(provider.complete(ask(), sink))
    await wait_until(lambda: fake.requests)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sink.usages == []


async def test_a_finished_call_reports_its_usage_in_the_response_only(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(Reply("done", usage=FakeUsage(input_tokens=10, output_tokens=3)))
    sink = RecordingSink()
    response = await provider.complete(ask(), sink)
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 3)
    assert sink.usages == []  # the agent loop reports it once, from the response


async def test_aclose_leaves_an_injected_client_open(fake: FakeAnthropic) -> None:
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key="test", base_url=fake.base_url)
    provider = AnthropicProvider(client=client)
    fake.add(Reply("one"), Reply("two"))

    assert (await provider.complete(ask(), RecordingSink())).message.text == "one"
    await provider.aclose()
    assert not client.is_closed()
    await client.close()


async def test_the_factory_makes_the_client_in_its_thread_and_the_loop_uses_it(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hosts build the provider in a thread: its client (TLS set-up) is made there, not by the first
    request in the event loop, and streams in the loop."""
    from tui_assist.session.config import Settings
    from tui_assist.session.factory import make_provider

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    provider = await asyncio.to_thread(make_provider, Settings(provider="anthropic", base_url=fake.base_url))
    assert isinstance(provider, AnthropicProvider)
    made = provider._client
    fake.add(Reply("ok"))

    response = await provider.complete(ask(), RecordingSink())

    assert made is not None and provider.client is made
    assert response.message.text == "ok"
    await provider.aclose()
