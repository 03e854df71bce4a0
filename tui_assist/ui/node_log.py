"""What the UI knows about running and finished nodes, rebuilt from events alone.

Every view of a turn (the agent tree, the flow panel, the round review) reads this one model,
and it is built only by `apply(event)`: live events and events replayed from the store make the
same records. Streamed text is merged into segments as it arrives, so memory grows with the
text, not with the number of deltas.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_assist.core.conversation import Usage
from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    StreamRetried,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
    VerdictReached,
)

NodeState = Literal["running", "done", "failed", "cancelled"]


@dataclass(slots=True)
class TextSegment:
    """Text one node streamed between two other happenings (tool calls, other nodes)."""

    node_id: str
    text: str = ""


@dataclass(slots=True)
class NodeRecord:
    """One node: a turn, round, model call, tool call or workflow step."""

    node_id: str
    parent_id: str | None
    kind: str
    label: str
    detail: str = ""
    state: NodeState = "running"
    started_at: float = 0.0
    finished_at: float | None = None
    outcome: str | None = None
    output: str = ""
    error: str | None = None
    verdict: str | None = None
    feedback: str = ""
    round_index: int | None = None
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    duration: float | None = None
    usage: Usage = field(default_factory=Usage)
    children: list[str] = field(default_factory=lambda: list[str]())
    segments: list[TextSegment] = field(default_factory=lambda: list[TextSegment]())

    @property
    def text(self) -> str:
        """Everything the node streamed (after retries), in order."""
        return "".join(s.text for s in self.segments)

    @property
    def elapsed(self) -> float | None:
        """Seconds from start to finish, when finished."""
        if self.duration is not None:
            return self.duration
        if self.finished_at is None:
            return None
        return max(0.0, self.finished_at - self.started_at)


TimelineItem = TurnEvent | TextSegment
"""What happened in a turn, in order: events (deltas merged into text segments)."""


@dataclass(slots=True)
class TurnLog:
    """The records and timeline of one turn."""

    turn_id: str
    timeline: list[TimelineItem] = field(default_factory=lambda: list[TimelineItem]())


class NodeLog:
    """Records of every node seen, grouped by turn, with the order things happened in."""

    def __init__(self, max_turns: int = 200) -> None:
        self.nodes: dict[str, NodeRecord] = {}
        self.turns: dict[str, TurnLog] = {}
        self.max_turns = max_turns
        """Older turns are forgotten (they stay in the store), so a long session stays flat."""

    def apply(self, event: TurnEvent) -> NodeRecord | None:
        """Fold one event in; returns the record it changed (None for an unknown node)."""
        match event:
            case NodeStarted():
                record = NodeRecord(
                    event.node_id,
                    event.parent_id,
                    event.node_kind,
                    event.label,
                    detail=event.detail,
                    started_at=event.at,
                )
                self._add(record, event)
                if record.kind == "round" and record.parent_id in self.nodes:
                    siblings = self.nodes[record.parent_id].children
                    record.round_index = sum(1 for c in siblings if self.nodes[c].kind == "round")
                return record
            case ToolCallStarted():
                record = NodeRecord(
                    event.node_id,
                    event.parent_id,
                    "tool",
                    event.name,
                    started_at=event.at,
                    tool_name=event.name,
                    tool_input=dict(event.input),
                )
                self._add(record, event)
                return record
            case TextDelta():
                record = self.nodes.get(event.node_id)
                if record is None:
                    return None
                log = self._turn_log(record)
                last = log.timeline[-1] if log and log.timeline else None
                if isinstance(last, TextSegment) and last.node_id == record.node_id:
                    last.text += event.text
                else:
                    segment = TextSegment(record.node_id, event.text)
                    record.segments.append(segment)
                    if log is not None:
                        log.timeline.append(segment)
                return record
            case _:
                record = self.nodes.get(event.node_id)
                if record is None:
                    return None
                self._fold(record, event)
                log = self._turn_log(record)
                if log is not None:
                    log.timeline.append(event)
                return record

    def _fold(self, record: NodeRecord, event: TurnEvent) -> None:
        match event:
            case NodeFinished():
                record.state = "done" if event.status == "done" else event.status
                record.finished_at = event.at
                record.outcome = event.outcome
                record.output = event.output
                record.error = event.error
            case ToolCallFinished():
                record.state = "failed" if event.is_error else "done"
                record.finished_at = event.at
                record.output = event.output
                record.duration = event.duration
            case VerdictReached():
                record.verdict = event.verdict
                record.feedback = event.feedback
                parent = self.nodes.get(record.parent_id or "")
                if parent is not None and parent.kind == "round":
                    parent.verdict = event.verdict
                    parent.feedback = event.feedback
            case UsageRecorded():
                record.usage = record.usage + event.usage
            case StreamRetried():
                self._void_last_call_text(record)
            case _:
                pass

    def _void_last_call_text(self, record: NodeRecord) -> None:
        """A retried stream voids the text of its call: the node's segment after its last tool call."""
        log = self._turn_log(record)
        if log is None:
            return
        for item in reversed(log.timeline):
            if isinstance(item, TextSegment) and item.node_id == record.node_id:
                item.text = ""
                return
            if isinstance(item, UsageRecorded) and item.node_id == record.node_id:
                return
            if isinstance(item, ToolCallStarted) and item.parent_id == record.node_id:
                return

    def _add(self, record: NodeRecord, event: TurnEvent) -> None:
        self.nodes[record.node_id] = record
        parent = self.nodes.get(record.parent_id or "")
        if parent is not None:
            parent.children.append(record.node_id)
        if record.parent_id is None or parent is None:
            self.turns[record.node_id] = TurnLog(record.node_id)
            self._trim()
        log = self._turn_log(record)
        if log is not None:
            log.timeline.append(event)

    def _trim(self) -> None:
        while len(self.turns) > self.max_turns:
            oldest = next(iter(self.turns))
            self.forget(oldest)

    def forget(self, turn_id: str) -> None:
        """Drop a turn and all its records."""
        self.turns.pop(turn_id, None)
        for record in list(self.walk(turn_id)):
            self.nodes.pop(record.node_id, None)

    def turn_id_of(self, node_id: str) -> str | None:
        """The root (turn or flow) a node belongs to."""
        record = self.nodes.get(node_id)
        while record is not None and record.parent_id is not None and record.parent_id in self.nodes:
            record = self.nodes[record.parent_id]
        return record.node_id if record is not None else None

    def _turn_log(self, record: NodeRecord) -> TurnLog | None:
        turn_id = self.turn_id_of(record.node_id)
        return self.turns.get(turn_id) if turn_id else None

    def walk(self, node_id: str) -> Iterator[NodeRecord]:
        """The node and its descendants, depth first in start order."""
        record = self.nodes.get(node_id)
        if record is None:
            return
        yield record
        for child in record.children:
            yield from self.walk(child)

    def ancestors(self, node_id: str) -> Iterator[NodeRecord]:
        """The node's parents, nearest first."""
        record = self.nodes.get(node_id)
        while record is not None and record.parent_id is not None:
            record = self.nodes.get(record.parent_id)
            if record is not None:
                yield record

    def depth(self, node_id: str) -> int:
        """How many ancestors a node has."""
        return sum(1 for _ in self.ancestors(node_id))

    def rounds(self, turn_id: str) -> list[NodeRecord]:
        """The round nodes of a turn, in order."""
        turn = self.nodes.get(turn_id)
        if turn is None:
            return []
        return [self.nodes[c] for c in turn.children if c in self.nodes and self.nodes[c].kind == "round"]

    def subtree_timeline(self, node_id: str) -> list[TimelineItem]:
        """The timeline items of a node's subtree, in the order they happened."""
        turn_id = self.turn_id_of(node_id)
        log = self.turns.get(turn_id or "")
        if log is None:
            return []
        inside = {r.node_id for r in self.walk(node_id)}
        return [item for item in log.timeline if item.node_id in inside]
