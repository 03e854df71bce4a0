"""Providers say "the prompt is too long" as `ContextOverflow`, and Anthropic counts tokens.

Through the real SDKs against the loopback fakes: the session recovers from an overflow by the
error's type, never by reading its text.
"""

from __future__ import annotations

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, Reply, estimate_tokens
from tests.fakes.openai import Error as OpenAIError
from tests.fakes.openai import FakeOpenAI
from tui_assist.core.compaction import summary_request
from tui_assist.core.conversation import Message
from tui_assist.core.model import ContextOverflow, ModelRequest, ProviderError, TokenCounter, ToolSpec
from tui_assist.providers.anthropic import AnthropicProvider, build_stream_params
from tui_assist.providers.context_windows import DEFAULT_CONTEXT_WINDOW, known_context_window
from tui_assist.providers.openai_compat import OpenAICompatProvider
from tui_assist.providers.scripted import ScriptedProvider


class Sink:
    def text(self, delta: str) -> None:
        pass

    def thinking(self, delta: str) -> None:
        pass

    def retrying(self, attempt: int, error: str) -> None:
        pass


def request(text: str = "hi") -> ModelRequest:
    tool = ToolSpec("lookup", "Look a word up.", {"type": "object", "properties": {"q": {"type": "string"}}})
    return ModelRequest(system="Be terse.", messages=(Message.user(text),), tools=(tool,))


async def test_anthropic_prompt_too_long_is_a_context_overflow_with_its_numbers(fake: FakeAnthropic) -> None:
    fake.add(Error(400, message="prompt is too long: 205123 tokens > 200000 maximum"))
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url)
    try:
        with pytest.raises(ContextOverflow) as info:
            await provider.complete(request(), Sink())
    finally:
        await provider.aclose()
    assert (info.value.tokens, info.value.limit) == (205123, 200000)
    assert str(info.value) == (
        "Anthropic API error 400 (invalid_request_error): prompt is too long: 205123 tokens > 200000 maximum"
    )
    assert len(fake.requests) == 1  # a 400 is not retried


async def test_anthropic_input_plus_max_tokens_past_the_window_is_a_context_overflow(
    fake: FakeAnthropic,
) -> None:
    message = "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input"
    fake.add(Error(400, message=message))
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url)
    try:
        with pytest.raises(ContextOverflow) as info:
            await provider.complete(request(), Sink())
    finally:
        await provider.aclose()
    assert (info.value.tokens, info.value.limit) == (188240, 200000)


async def test_anthropic_other_bad_requests_stay_plain_errors(fake: FakeAnthropic) -> None:
    fake.add(Error(400, message="messages.0.content: Input should be a valid list"), Error(413))
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url)
    try:
        with pytest.raises(ProviderError) as plain:
            await provider.complete(request(), Sink())
        with pytest.raises(ContextOverflow):  # more bytes than a request may carry: shorter helps too
            await provider.complete(request(), Sink())
    finally:
        await provider.aclose()
    assert not isinstance(plain.value, ContextOverflow)


async def test_anthropic_counts_tokens_through_the_api(fake: FakeAnthropic) -> None:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url)
    try:
        assert isinstance(provider, TokenCounter)
        counted = await provider.count_tokens(request("count me " * 50))
    finally:
        await provider.aclose()
    [sent] = fake.requests
    assert sent.path == "/v1/messages/count_tokens" and "max_tokens" not in sent.body
    body = build_stream_params(request("count me " * 50), provider.model, cache=False)
    assert counted == estimate_tokens({k: body.get(k) for k in ("system", "tools", "messages")})


async def test_a_summary_request_caches_no_transcript(fake: FakeAnthropic) -> None:
    fake.add(Reply("ok"))
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url)
    try:
        await provider.complete(
            summary_request("the transcript", previous=None, instructions=None, max_tokens=500), Sink()
        )
    finally:
        await provider.aclose()
    body = fake.requests[0].body
    assert "cache_control" not in str(body["messages"])  # written once, never read again
    assert not body.get("tools")


@pytest.mark.parametrize(
    ("message", "code", "numbers"),
    [
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "context_length_exceeded",
            (9000, 8192),
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
            "(4000 in the messages, 1000 in the completion).",
            None,
            (5000, 4096),
        ),
        ("the request exceeds the available context size, try increasing it", None, (None, None)),
    ],
)
async def test_openai_compatible_context_errors_are_context_overflows(
    message: str, code: str | None, numbers: tuple[int | None, int | None]
) -> None:
    with FakeOpenAI() as fake:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
        fake.add(OpenAIError(400, body=body))
        provider = OpenAICompatProvider("qwen2.5-coder:7b", base_url=fake.base_url)
        try:
            with pytest.raises(ContextOverflow) as info:
                await provider.complete(request(), Sink())
        finally:
            await provider.aclose()
    assert (info.value.tokens, info.value.limit) == numbers


async def test_openai_compatible_other_errors_stay_plain() -> None:
    with FakeOpenAI() as fake:
        fake.add(OpenAIError(400, message="temperature must be at most 2"))
        provider = OpenAICompatProvider("qwen2.5-coder:7b", base_url=fake.base_url)
        try:
            with pytest.raises(ProviderError) as info:
                await provider.complete(request(), Sink())
        finally:
            await provider.aclose()
    assert not isinstance(info.value, ContextOverflow)


def test_providers_without_a_counter_are_not_token_counters() -> None:
    assert not isinstance(ScriptedProvider([]), TokenCounter)
    assert not isinstance(OpenAICompatProvider("m", base_url="http://127.0.0.1:9/v1"), TokenCounter)


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-sonnet-4-6", 200_000),
        ("claude-opus-4-1", 200_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4", 8_192),
        ("openai/gpt-4o", 128_000),
        ("qwen2.5-coder:7b", 32_768),
        ("something-new", DEFAULT_CONTEXT_WINDOW),
    ],
)
def test_known_context_windows_by_longest_prefix(model: str, window: int) -> None:
    assert known_context_window(model) == window
