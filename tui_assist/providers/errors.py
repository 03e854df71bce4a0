"""One translation of SDK errors into the core's `ProviderError`, which both providers feed.

Each provider names its errors in its own words (which server, which environment variable), and
hands the facts here: a refused request's status and message, a mid-stream error payload, a
timeout, an unreachable server. This module decides what the core sees, once for every SDK:

- a request too long for the model becomes `ContextOverflow` (with the request's size and the
  window when the message gives them), so the context keeper can compact and retry: a 413 always
  (more bytes than a request may carry: a shorter history fixes that too), a 400 or 422 or an error
  payload mid-stream when its message or code says so;
- anything else becomes a plain `ProviderError` with the provider's one line.

The Stainless-generated SDKs (anthropic, openai) share their shapes: `sdk_attempts` reads how
many HTTP attempts they made.
"""

from __future__ import annotations

import re
from typing import Any

from tui_assist.core.model import ContextOverflow, ProviderError
from tui_assist.core.text import exc_text, one_line, plural

__all__ = [
    "context_overflow",
    "refused",
    "retried_after",
    "sdk_attempts",
    "timed_out",
    "unreachable",
]

OVERFLOW_STATUSES = (400, 413, 422)
"""Statuses a too-long request is refused with, depending on the server."""


def sdk_attempts(request: Any) -> int:
    """How many HTTP attempts a Stainless-generated SDK made: it numbers retries in a header."""
    try:
        return int(request.headers.get("x-stainless-retry-count", "0")) + 1
    except (AttributeError, ValueError):
        return 1


_TOO_LONG = re.compile(
    r"prompt is too long|input is too long|exceed context limit|maximum context length"
    r"|context[_ ]length[_ ]exceeded"
    r"|exceeds? the (?:available |model's )?context (?:size|window|length)",
    re.IGNORECASE,
)
"""How providers say a request does not fit the context window: Anthropic ("prompt is too long:
N tokens > M maximum", "input length and `max_tokens` exceed context limit: N + K > M"), OpenAI
and vLLM ("maximum context length is M tokens ... resulted in / requested N tokens", code
`context_length_exceeded`), llama.cpp ("exceeds the available context size")."""

_NUMBER = r"(\d[\d,]*)"
_TOKENS = (
    re.compile(_NUMBER + r" tokens? > " + _NUMBER),  # Anthropic: N tokens > M maximum
    re.compile(_NUMBER + r" \+ \d[\d,]* > " + _NUMBER),  # Anthropic: N + max_tokens > M
    re.compile(r"(?:resulted in|requested) " + _NUMBER + r" tokens"),
)
_LIMIT = re.compile(r"maximum context length is " + _NUMBER)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def context_overflow(line: str, message: str, *, code: str | None = None) -> ContextOverflow | None:
    """A `ContextOverflow` when a provider's error message says the request is too long, else None.

    Args:
        line: The one-line error for users.
        message: The provider's own error message.
        code: The provider's error code, if any (`context_length_exceeded`).

    Returns:
        The error, with the request's size and the model's window when the message gives them.
    """
    if code != "context_length_exceeded" and not _TOO_LONG.search(message):
        return None
    tokens = limit = None
    for pattern in _TOKENS:
        found = pattern.search(message)
        if found is not None:
            tokens = _int(found.group(1))
            if found.lastindex == 2:
                limit = _int(found.group(2))
            break
    found = _LIMIT.search(message)
    if found is not None:
        limit = _int(found.group(1))
    return ContextOverflow(line, tokens=tokens, limit=limit)


def refused(line: str, message: str, *, status: int | None = None, code: str | None = None) -> ProviderError:
    """The error for a request the server refused, by status or by an error payload mid-stream.

    Args:
        line: The provider's one line for users.
        message: The server's own error message.
        status: The HTTP status; None for an error payload inside a streamed 200.
        code: The server's error code, if any (`context_length_exceeded`).

    Returns:
        `ContextOverflow` when the request was too long for the model, else `ProviderError`.
    """
    if status is None or status in OVERFLOW_STATUSES:
        overflow = context_overflow(line, message, code=code)
        if overflow is not None:
            return overflow
    if status == 413:
        return ContextOverflow(line)
    return ProviderError(line)


def retried_after(request: Any) -> str:
    """` after N attempts` when the SDK retried the request, else nothing (for status lines)."""
    attempts = sdk_attempts(request)
    return f" after {attempts} attempts" if attempts > 1 else ""


def timed_out(where: str, request: Any) -> ProviderError:
    """The error for a server that did not answer in time, the SDK's retries included."""
    return ProviderError(f"{where} did not answer in time ({plural(sdk_attempts(request), 'attempt')})")


def unreachable(where: str, error: BaseException, message: str, *, hint: str = "") -> ProviderError:
    """The error for a server that could not be reached (the transport's own cause named)."""
    cause = exc_text(error.__cause__) if error.__cause__ is not None else message
    return ProviderError(one_line(f"could not reach {where}: {cause}{hint}"))
