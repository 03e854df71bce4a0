"""A turn's event log as the store keeps it: text deltas coalesced, and what a cancelled turn's events tell.

Pure functions over events, with no database; both read the events through `NodeLog`, the one
fold of the event stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tui_assist.core.conversation import Usage
from tui_assist.core.events import TurnEvent
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.tree import NodeLog


def folded(events: Iterable[TurnEvent] | NodeLog) -> NodeLog:
    """The log of a turn's events: the one given, or a fold of the events given."""
    return events if isinstance(events, NodeLog) else NodeLog.of(events)


def coalesce_text(events: Iterable[TurnEvent] | NodeLog) -> list[TurnEvent]:
    """Merge runs of consecutive `TextDelta`s (or `ThinkingDelta`s) of one node into one delta.

    A model call streams hundreds of deltas; the tree and the text they fold into are the same
    once merged, so the store keeps one row per run instead of one per chunk. A `StreamRetried`
    or any other event ends a run, so retries replay exactly as they happened.

    Args:
        events: One turn's events, in order (events of nodes never started are dropped), or
            their log.

    Returns:
        The same events with delta runs merged.
    """
    log = folded(events)
    return [event for root in log.roots for event in log.streamed(root.node_id)]


@dataclass(slots=True)
class EventSummary:
    """What a cancelled turn's events tell about it (there is no `TurnResult`)."""

    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    calls: list[tuple[int | None, ToolCallRecord]] = field(
        default_factory=lambda: list[tuple[int | None, ToolCallRecord]]()
    )


def summarize(events: Sequence[TurnEvent] | NodeLog) -> EventSummary:
    """Usage, rounds and tool calls (with their round) read off a turn's events (or their log)."""
    log = folded(events)
    summary = EventSummary()
    for root in log.roots:
        summary.usage = summary.usage + log.usage(root.node_id)
        summary.rounds += log.rounds_started(root.node_id)
        for start, record in log.tool_calls(root.node_id):
            if record.status == "running":  # started but never finished: the cancel cut it
                output, is_error, duration = "(not finished)", True, 0.0
            else:
                output, is_error, duration = record.output, record.status == "failed", record.duration or 0.0
            call = ToolCallRecord(
                start.node_id, start.parent_id, start.name, start.input, output, is_error, duration
            )
            summary.calls.append((log.round_of(start.parent_id), call))
    return summary
