"""Compacting a conversation's history: the pieces, free of any store and of the when-to policy.

What is sent to the model is compacted in two stages, cheapest first:

1. Tool results of older turns are cut to a bounded size, head and tail kept, with a marker that
   says so (`cut_tool_results`). No model call.
2. One model call with no tools summarises the older turns (`summarise`); the summary then stands
   in for them (`summary_messages`), and the latest turns stay verbatim.

Nothing here changes a stored message: a compacted history is a *view* of the full one. The
policy (when to compact, how much to keep, where a summary is kept) belongs to the host's
`ContextGuard` (see `core/context.py`).

Token counts here are estimates (a token per 4 characters of the request's JSON, as the loopback
fake and the API's own rule of thumb count); a guard calibrates them against what the provider
measures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tui_assist.core.conversation import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from tui_assist.core.model import ModelRequest, Provider, ProviderError, StreamSink
from tui_assist.core.text import clip, estimate_tokens, plural, truncate_middle

SUMMARY_SYSTEM = """\
You summarise the earlier part of a conversation between a user and an AI assistant that works \
in a terminal with tools (a shell, a file editor, sub-agents), so that the conversation can go on \
without it: the assistant will see only your summary and the most recent turns.

Write a dense, factual summary in Markdown:
- the user's goals and requests, in order, and what is still open or was promised;
- decisions, constraints and preferences the user stated;
- files, paths, commands, identifiers, errors and results that later work may need, exactly as written;
- what the assistant did and found (tool calls in brief, never their full output).
Leave out pleasantries and anything later superseded. Do not add anything that is not in the \
transcript. Reply with the summary only."""
"""The summariser's system prompt."""

SUMMARY_ACK = "Understood. I have the summary of our earlier conversation and will continue from it."
"""The assistant's reply to the summary message, so roles keep alternating for every provider."""

_INSTRUCTIONS_TEMPLATE = "\n\nThe user asked for this summary with these instructions:\n{instructions}"


@dataclass(frozen=True, slots=True)
class HistorySummary:
    """A summary that stands in for the first `covered` messages of a conversation's history."""

    text: str
    covered: int
    """How many leading messages of the full history it replaces (whole turns)."""
    turns: int
    """How many turns those messages are."""
    tokens_before: int = 0
    """Estimated input tokens of the request before this compaction."""
    tokens_after: int = 0
    """Estimated input tokens of the same request after it."""


def is_tool_results(message: Message) -> bool:
    """Whether `message` carries tool results (the user side of a tool round trip)."""
    return message.role == "user" and any(isinstance(b, ToolResultBlock) for b in message.content)


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Where each turn of a history begins: at every user message that is not tool results.

    Returns:
        Indices into `messages`, ascending.
    """
    return [i for i, m in enumerate(messages) if m.role == "user" and not is_tool_results(m)]


def _json_chars(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":")))


IMAGE_TOKENS = 1_600
"""What an attached image is estimated at: about the most the Messages API bills for one (it
scales images down past about 1.15 megapixels); its base64 text is no measure of that."""


def message_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of `messages` as they travel (their Messages API JSON; images apart)."""
    chars = images = 0
    for m in messages:
        if m.images:
            images += len(m.images)
            m = Message(m.role, tuple(b for b in m.content if not isinstance(b, ImageBlock)))
        chars += _json_chars(m.to_dict())
    return estimate_tokens(chars) + images * IMAGE_TOKENS


def request_tokens(request: ModelRequest) -> int:
    """Estimated input tokens of a whole request: system prompt, tool definitions and messages."""
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
    ]
    fixed = estimate_tokens(len(request.system) + (_json_chars(tools) if tools else 0))
    return fixed + message_tokens(request.messages)


def cut_marker(omitted: int) -> str:
    """The line that stands in for the part of a tool result compaction left out."""
    return f"\n[... {omitted} characters cut to save context; run the tool again for the full output ...]\n"


def cut_tool_results(message: Message, max_chars: int) -> Message:
    """`message` with each tool result longer than `max_chars` cut to its head and tail.

    Returns:
        `message` itself when nothing was long enough to cut.
    """
    if not any(isinstance(b, ToolResultBlock) and len(b.content) > max_chars for b in message.content):
        return message
    blocks = tuple(
        ToolResultBlock(b.tool_use_id, truncate_middle(b.content, max_chars, cut_marker), b.is_error)
        if isinstance(b, ToolResultBlock)
        else b
        for b in message.content
    )
    return Message(message.role, blocks)


def summary_messages(summary: HistorySummary) -> tuple[Message, Message]:
    """The two messages that stand in for the turns `summary` covers: the summary, and a short reply."""
    header = (
        f"[The earlier conversation ({plural(summary.turns, 'turn')}) was compacted into this summary; "
        "the full history is kept by the app.]"
    )
    return (
        Message.user(f"{header}\n\n<summary>\n{summary.text.strip()}\n</summary>"),
        Message.assistant(SUMMARY_ACK),
    )


def render_transcript(messages: Sequence[Message], result_chars: int) -> str:
    """Messages as a plain transcript for the summariser (which gets no tools, so no tool blocks).

    Args:
        messages: Whole turns of history.
        result_chars: How much of each tool result to show (head and tail).

    Returns:
        One paragraph per message part: `User:`, `Assistant:`, tool calls and results.
    """
    parts: list[str] = []
    for message in messages:
        for block in message.content:
            match block:
                case TextBlock(text=text) if text.strip():
                    who = "User" if message.role == "user" else "Assistant"
                    parts.append(f"{who}: {text.strip()}")
                case ToolUseBlock(name=name, input=input_):
                    parts.append(
                        f"Assistant called {name}: {clip(json.dumps(input_, ensure_ascii=False), 400)}"
                    )
                case ToolResultBlock(content=content, is_error=is_error):
                    label = "Tool error" if is_error else "Tool result"
                    parts.append(f"{label}: {truncate_middle(content.strip(), result_chars, cut_marker)}")
                case _:
                    pass
    return "\n\n".join(parts)


def summary_request(
    transcript: str, *, previous: str | None, instructions: str | None, max_tokens: int
) -> ModelRequest:
    """The summariser's request: one user message, no tools.

    Args:
        transcript: The turns to summarise (`render_transcript`).
        previous: The summary of the turns before them, which the new summary must take in.
        instructions: What the user asked the summary to focus on (`/compact INSTRUCTIONS`).
        max_tokens: The longest summary.
    """
    text = ""
    if previous:
        text += f"<previous_summary>\n{previous.strip()}\n</previous_summary>\n\n"
    text += f"<transcript>\n{transcript}\n</transcript>\n\n"
    text += (
        "Summarise the transcript"
        + (", taking in the previous summary it continues" if previous else "")
        + ", as the system prompt says."
    )
    if instructions and instructions.strip():
        text += _INSTRUCTIONS_TEMPLATE.format(instructions=instructions.strip())
    return ModelRequest(
        system=SUMMARY_SYSTEM,
        messages=(Message.user(text),),
        tools=(),
        max_tokens=max_tokens,
        cache_tail=False,
    )


@dataclass(frozen=True, slots=True)
class Summarised:
    """What one summariser call produced."""

    text: str
    usage: Usage
    model: str


async def summarise(provider: Provider, request: ModelRequest, sink: StreamSink) -> Summarised:
    """Run one summariser call (`summary_request`).

    Raises:
        ProviderError: when the call fails, or the reply holds no text.
    """
    response = await provider.complete(request, sink)
    text = response.message.text.strip()
    if not text:
        raise ProviderError(f"the summary came back empty (stop reason {response.stop_reason})")
    return Summarised(text, response.usage, response.model)
