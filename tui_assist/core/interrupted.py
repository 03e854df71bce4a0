"""What an interrupted turn leaves in the history, rebuilt from the turn's events.

When the user stops a turn, the conversation keeps the prompt, the tool calls that finished (with
their results) and the partial answer, closed with a marker, so "no, do it like this instead" has
something to refer to. The events are the record of what happened, as it happened (text as it
streamed, each call as it ran), so the history is rebuilt from them rather than from the inside of
a strategy that was cancelled mid-step. Every message it returns is valid for the Messages API:
a tool call that did not finish is left out together with its `tool_use` block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_assist.core.conversation import Block, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import (
    PromptJoined,
    StreamRetried,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
)
from tui_assist.core.steering import joined_block
from tui_assist.core.tree import NodeLog, TextSegment

INTERRUPTED_MARKER = "[interrupted by the user]"
"""Closes the history of a turn the user stopped."""


@dataclass
class _Response:
    """One model response of the agent being rebuilt: its text, then the calls it made."""

    text: str
    calls: list[ToolCallStarted] = field(default_factory=lambda: list[ToolCallStarted]())
    results: dict[str, ToolCallFinished] = field(default_factory=lambda: dict[str, ToolCallFinished]())
    joined: list[str] = field(default_factory=lambda: list[str]())
    """Prompts the user sent meanwhile that joined the request after this response."""

    def messages(self) -> list[Message]:
        """The assistant message and, if calls finished, the user message with their results."""
        finished = [call for call in self.calls if call.call_id in self.results]
        blocks: list[Block] = [TextBlock(self.text)] if self.text.strip() else []
        blocks += [ToolUseBlock(call.call_id, call.name, call.input) for call in finished]
        if not blocks:
            return []
        results = [self.results[call.call_id] for call in finished]
        out = [Message("assistant", tuple(blocks))]
        if results:
            answers: list[Block] = [ToolResultBlock(r.call_id, r.output, r.is_error) for r in results]
            out.append(Message("user", (*answers, *(joined_block(t) for t in self.joined))))
        return out


def interrupted_history(
    prompt: str, events: Sequence[TurnEvent] | NodeLog, turn_id: str, images: Sequence[ImageBlock] = ()
) -> list[Message]:
    """The messages a turn stopped by the user adds to the history.

    Args:
        prompt: The turn's prompt.
        events: The turn's events so far, in order, or the log that folded them.
        turn_id: The turn's node id.
        images: The images attached to the prompt.

    Returns:
        The prompt, each finished model response with its finished tool calls and their results,
        then the partial answer, closed with `INTERRUPTED_MARKER`.
    """
    log = events if isinstance(events, NodeLog) else NodeLog.of(events)
    generators = log.main_generators(turn_id)  # the turn's agent, or its latest round's generator
    node = generators[-1].node_id if generators else ""
    responses: list[_Response] = []
    streaming = ""
    for event in log.subtree_timeline(node):
        match event:
            case TextSegment(node_id=n, text=text) if n == node:
                streaming += text
            case StreamRetried(node_id=n) if n == node:
                streaming = ""
            case UsageRecorded(node_id=n, cut=False) if n == node:
                responses.append(_Response(streaming))
                streaming = ""
            case ToolCallStarted(parent_id=n) if n == node and responses:
                responses[-1].calls.append(event)
            case ToolCallFinished() if responses:
                responses[-1].results[event.call_id] = event
            case PromptJoined(node_id=n, text=text) if n == node and responses:
                responses[-1].joined.append(text)
            case _:
                pass
    messages = [Message.user(prompt, images)]
    for response in responses:
        messages += response.messages()
    closing = f"{streaming.strip()}\n\n{INTERRUPTED_MARKER}" if streaming.strip() else INTERRUPTED_MARKER
    if messages[-1].role == "assistant":  # an answer that finished just before the stop
        last = messages.pop()
        messages.append(Message("assistant", (*last.content, TextBlock(closing))))
    else:
        messages.append(Message.assistant(closing))
    return messages
