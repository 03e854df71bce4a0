"""Text helpers for messages shown to users: one line, clipped, exceptions named, tokens counted.

The one home of clipping (`clip`), of the token estimate (`estimate_tokens`: characters / 4), of
how a token count is written (`token_count`: `850`, `1.2k`, `12k`, `1.5M`), and of the span a
completion replaces in a prompt (`CompletionSpan`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

MAX_LINE = 300
"""Longest error line shown to users."""


@dataclass(frozen=True, slots=True)
class CompletionSpan:
    """The part of a prompt a completion replaces, `text[start:end]`, with `query` typed so far.

    For an `@` mention `start` is the `@`'s index, and `end` may go past the cursor (the rest of the
    mention's text).
    """

    start: int
    end: int
    query: str


def plural(n: int, word: str) -> str:
    """`1 attempt`, `3 attempts`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def exc_text(exc: BaseException) -> str:
    """An exception as `Type: message`."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def clip(text: str, limit: int, *, fold: bool = True) -> str:
    """`text` cut to `limit` characters, ending with `…` when it was cut.

    The one clipper: labels, summaries, table cells and error lines all cut this way.

    Args:
        text: The text.
        limit: The longest text returned.
        fold: Fold whitespace (newlines included) to single spaces first, for one line.

    Returns:
        The text, at most `limit` characters long.
    """
    line = " ".join(text.split()) if fold else text
    return line if len(line) <= limit else line[: limit - 1] + "…"


def one_line(text: str) -> str:
    """An error message fit for one line of a terminal."""
    return clip(text, MAX_LINE)


def duration(seconds: float) -> str:
    """A duration for a glance: `40µs`, `850ms`, `3.2s` under a minute, then `2m05s`.

    Milli- and microseconds, because workflow steps without a model take that little, and `0.0s`
    or `0ms` read as if nothing ran.
    """
    if seconds < 0.0009995:  # what would round to 1000µs reads as 1ms
        return f"{max(0.0, seconds) * 1_000_000:.0f}µs"
    if seconds < 0.9995:  # what would round to 1000ms reads as 1.0s
        return f"{seconds * 1000:.0f}ms"
    if seconds < 59.95:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def file_size(size: int) -> str:
    """A byte count for people: `812 B`, `14 KB`, `2.3 MB`."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.0f} KB"
    return f"{size / 1_000_000:.1f} MB"


def base64_size(data: str) -> int:
    """How many bytes the base64 text `data` decodes to, without decoding it."""
    padding = min(len(data) - len(data.rstrip("=")), 2)
    return len(data) * 3 // 4 - padding


def truncation_marker(omitted: int) -> str:
    """The line that stands in for output that was cut.

    Args:
        omitted: How many characters were left out.

    Returns:
        The marker, on a line of its own.
    """
    return f"\n[... {omitted} characters truncated ...]\n"


def truncate_middle(text: str, max_chars: int, marker: Callable[[int], str] = truncation_marker) -> str:
    """Keep the head and the tail of a long text, with a marker in between.

    The head usually says what a command was doing and the tail how it ended, so both are kept.

    Args:
        text: The full text.
        max_chars: How many characters of the text to keep at most (the marker comes on top).
        marker: Makes the marker from the number of characters left out.

    Returns:
        `text` itself when short enough, else its head, a marker and its tail.
    """
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    return text[:head] + marker(len(text) - max_chars) + text[len(text) - tail :]


CHARS_PER_TOKEN = 4.0
"""The usual rule of thumb for English text (code and JSON run nearer 3)."""


def estimate_tokens(text: str | int, *, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """About how many tokens a text is: its characters / `chars_per_token`, rounded up.

    The one token estimator: compaction, the critic's room, the grounded flow's budget check and
    the scripted provider all count this way. Code and JSON run at nearer 3 characters a token, so
    callers that must fit a window leave a margin (or pass a smaller `chars_per_token`).

    Args:
        text: The text, or its length in characters when it is already measured.
        chars_per_token: How many characters a token is taken to be.

    Returns:
        The estimate (0 for an empty text).
    """
    chars = text if isinstance(text, int) else len(text)
    return math.ceil(chars / chars_per_token)


def token_count(n: float) -> str:
    """A token count for a glance: `850`, `1.2k`, `12k`, `1.5M`."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1_000:
        return f"{n / 1000:.1f}k"
    return f"{n:.0f}"


def money(usd: float) -> str:
    """`$0.0123`: four decimals below a dollar, two from there on."""
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def spend_text(cost: float | None, cap: float | None) -> str:
    """`$spent`, or `$spent/$cap` under a spend cap (`$–` for unknown): the meter's figure."""
    spent = "$–" if cost is None else f"${cost:.4f}"
    return spent if cap is None else f"{spent}/{money(cap)}"
