"""Context windows of known models, in tokens: how much one request may hold.

A light module (no SDK import): the session reads it to decide when to compact the history and to
show how full the context is. Settings override it per model (`[models."ID"] context_window`);
a model that is in neither gets `DEFAULT_CONTEXT_WINDOW`. The provider also tells the session
the real window when it refuses a request as too long, which wins over this table.
"""

from __future__ import annotations

from typing import Final

DEFAULT_CONTEXT_WINDOW: Final = 128_000
"""The window assumed for a model this table does not know."""

KNOWN_CONTEXT_WINDOWS: Final[dict[str, int]] = {
    # Anthropic: 200k by default (1M windows need a beta header this app does not send).
    "claude-": 200_000,
    # OpenAI.
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    # Common local models (their servers may be started with a smaller context).
    "llama3.1": 128_000,
    "llama3.2": 128_000,
    "llama3.3": 128_000,
    "qwen2.5": 32_768,
    "qwen3": 40_960,
    "mistral": 32_768,
    "gemma3": 128_000,
    "deepseek-r1": 128_000,
}
"""Model id prefix -> context window; the longest matching prefix wins."""


def known_context_window(model: str) -> int:
    """The context window of `model` from the table (longest matching id prefix), else the default.

    Args:
        model: A model id (`claude-sonnet-4-6`, `gpt-4o-mini`, `qwen2.5-coder:7b`...).

    Returns:
        The window in tokens.
    """
    name = model.lower().rsplit("/", 1)[-1]  # `openai/gpt-4o` as some gateways spell it
    matches = [prefix for prefix in KNOWN_CONTEXT_WINDOWS if name.startswith(prefix)]
    if not matches:
        return DEFAULT_CONTEXT_WINDOW
    return KNOWN_CONTEXT_WINDOWS[max(matches, key=len)]
