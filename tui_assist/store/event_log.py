"""A turn's event log as the store keeps it: text deltas coalesced, and what a cancelled turn's events tell.

Pure functions over events, with no database.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tui_assist.core.agent import ToolCallRecord
from tui_assist.core.conversation import Usage
from tui_assist.core.events import (
    NodeStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
)


def coalesce_text(events: Iterable[TurnEvent]) -> list[TurnEvent]:
    """Merge runs of consecutive `TextDelta`s (or `ThinkingDelta`s) of one node into one delta.

    A model call streams hundreds of deltas; the tree and the text they fold into are the same
    once merged, so the store keeps one row per run instead of one per chunk. A `StreamRetried`
    or any other event ends a run, so retries replay exactly as they happened.

    Args:
        events: Events in order.

    Returns:
        The same events with delta runs merged.
    """
    merged: list[TurnEvent] = []
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, TextDelta) and isinstance(last, TextDelta) and last.node_id == event.node_id:
            merged[-1] = TextDelta(node_id=event.node_id, text=last.text + event.text)
        elif (
            isinstance(event, ThinkingDelta)
            and isinstance(last, ThinkingDelta)
            and last.node_id == event.node_id
        ):
            merged[-1] = ThinkingDelta(node_id=event.node_id, text=last.text + event.text)
        else:
            merged.append(event)
    return merged


@dataclass(slots=True)
class EventSummary:
    """What a cancelled turn's events tell about it (there is no `TurnResult`)."""

    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    calls: list[tuple[int | None, ToolCallRecord]] = field(
        default_factory=lambda: list[tuple[int | None, ToolCallRecord]]()
    )


def summarize(events: Sequence[TurnEvent]) -> EventSummary:
    """Usage, rounds and tool calls (with their round) read off a turn's events."""
    summary = EventSummary()
    parents: dict[str, str | None] = {}
    round_of: dict[str, int] = {}
    started: dict[str, ToolCallStarted] = {}

    def round_index(node_id: str | None) -> int | None:
        seen: set[str] = set()
        while node_id is not None and node_id not in seen:
            if node_id in round_of:
                return round_of[node_id]
            seen.add(node_id)
            node_id = parents.get(node_id)
        return None

    for event in events:
        match event:
            case NodeStarted():
                parents[event.node_id] = event.parent_id
                if event.node_kind == "round":
                    summary.rounds += 1
                    round_of[event.node_id] = summary.rounds
            case ToolCallStarted():
                parents[event.node_id] = event.parent_id
                started[event.node_id] = event
            case ToolCallFinished():
                call = started.pop(event.node_id, None)
                if call is not None:
                    record = ToolCallRecord(
                        call.node_id,
                        call.parent_id,
                        call.name,
                        call.input,
                        event.output,
                        event.is_error,
                        event.duration,
                    )
                    summary.calls.append((round_index(call.parent_id), record))
            case UsageRecorded():
                summary.usage = summary.usage + event.usage
            case _:
                pass
    for call in started.values():  # started but never finished: the cancel cut it
        record = ToolCallRecord(
            call.node_id, call.parent_id, call.name, call.input, "(not finished)", True, 0.0
        )
        summary.calls.append((round_index(call.parent_id), record))
    return summary
