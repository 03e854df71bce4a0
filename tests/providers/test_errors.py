"""The one translation of SDK errors: what the core sees is decided once for both providers."""

from __future__ import annotations

from tui_assist.core.model import ContextOverflow, ProviderError
from tui_assist.providers.errors import refused


def test_a_too_long_request_is_a_context_overflow_whatever_the_server_says_it_with() -> None:
    assert type(refused("line", "request too large", status=413)) is ContextOverflow
    overflow = refused("line", "This model's maximum context length is 8192 tokens", status=422)
    assert isinstance(overflow, ContextOverflow) and overflow.limit == 8192
    payload = refused("line", "prompt is too long: 210000 tokens > 200000 maximum")  # mid-stream
    assert isinstance(payload, ContextOverflow) and (payload.tokens, payload.limit) == (210000, 200000)
    assert isinstance(refused("line", "boom", code="context_length_exceeded"), ContextOverflow)


def test_other_refusals_are_plain_provider_errors_with_the_providers_line() -> None:
    for error in (
        refused("the line", "prompt is too long", status=500),
        refused("the line", "bad", status=400),
    ):
        assert type(error) is ProviderError and str(error) == "the line"
