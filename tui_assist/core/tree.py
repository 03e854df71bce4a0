"""Fold events into the node tree of every turn and flow: one model for the live run and the log.

Every view of a turn (the TUI's agent tree, flow panel and round review, the history viewer, a
test) reads this one model, and it is built only by `NodeLog.apply(event)`. Live events and
events replayed from the store therefore make the same records, so a turn redrawn tomorrow has
exactly the shape it had while it ran. The tree is plain data; how a node is drawn (a widget, a
Markdown heading, a log line) is the host's business.

Streamed text is merged into segments as it arrives, so memory grows with the text, not with
the number of deltas; the per-turn timeline keeps the order things happened in, which is what a
round's transcript is read from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_assist.core.conversation import Usage
from tui_assist.core.events import (
    FileDiff,
    NodeFinished,
    NodeStarted,
    StreamRetried,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
    Verdict,
    VerdictReached,
)
from tui_assist.core.observer import ApprovalDecision, ToolApproval
from tui_assist.core.plan import TODO_TOOL, TodoItem, plan_of

NodeStatus = Literal["running", "done", "failed", "cancelled"]


class TextSegment:
    """Text one node streamed between two other happenings (tool calls, other nodes).

    The deltas are kept as pieces and joined when the text is read, so a long answer streamed in
    thousands of deltas is not copied once per delta.
    """

    __slots__ = ("_pieces", "node_id", "voided")
    __match_args__ = ("node_id", "text")

    def __init__(self, node_id: str, text: str = "") -> None:
        self.node_id = node_id
        self._pieces = [text]
        self.voided = ""
        """The text a retried stream voided (then `text` is empty): kept so the log replays as it
        streamed."""

    @property
    def text(self) -> str:
        """The segment's text (empty once voided)."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0]

    @property
    def streamed(self) -> str:
        """The text as it streamed, voided or not."""
        return self.voided or self.text

    def append(self, text: str) -> None:
        """Add the text of one more delta."""
        self._pieces.append(text)

    def void(self) -> None:
        """A retried stream voided this text."""
        self.voided = self.voided or self.text
        self._pieces = [""]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextSegment):
            return NotImplemented
        return (self.node_id, self.text, self.voided) == (other.node_id, other.text, other.voided)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass's

    def __repr__(self) -> str:
        return f"TextSegment(node_id={self.node_id!r}, text={self.text!r})"


@dataclass(slots=True)
class NodeRecord:
    """One node (a turn, round, model call, tool call or workflow step), as far as events tell."""

    node_id: str
    parent_id: str | None
    kind: str
    """The node kind (`turn`, `round`, `generate`, `critic`, `agent`, `tool`, a combinator...)."""
    label: str
    """The node's label; a tool call's label is the tool's name."""
    detail: str = ""
    """What the node was given (a prompt, an input summary)."""
    status: NodeStatus = "running"
    started_at: float = 0.0
    finished_at: float | None = None
    outcome: str | None = None
    """The closed outcome a node finished with (`answered`, `pass`, `budget_exhausted`...)."""
    output: str = ""
    """What the node produced: its answer, or a tool call's result."""
    error: str | None = None
    verdict: Verdict | None = None
    """For critic nodes, and the round that holds them: the verdict reached."""
    feedback: str = ""
    """For critic nodes, and the round that holds them: the feedback with the verdict."""
    round_index: int | None = None
    """For round nodes: 1-based position among the turn's rounds."""
    tool_name: str = ""
    tool_input: dict[str, Any] | None = None
    """For tool nodes: the input the model gave."""
    duration: float | None = None
    """For tool nodes: seconds the call took."""
    diff: FileDiff | None = None
    """For tool nodes that wrote a file with the editor: its text before and after."""
    usage: Usage = field(default_factory=Usage)
    """Tokens spent by model calls made directly under this node."""
    children: list[NodeRecord] = field(default_factory=lambda: list[NodeRecord]())
    """Child nodes, in start order."""
    segments: list[TextSegment] = field(default_factory=lambda: list[TextSegment]())
    """Text streamed under this node, one segment per uninterrupted stretch."""
    thinking: str = ""
    """For model-call nodes: the extended thinking they streamed (never part of `text`)."""

    @property
    def text(self) -> str:
        """Everything the node streamed (a retried call's text voided), in order."""
        return "".join(s.text for s in self.segments)

    @property
    def elapsed(self) -> float | None:
        """Seconds from start to finish, when finished."""
        if self.duration is not None:
            return self.duration
        if self.finished_at is None:
            return None
        return max(0.0, self.finished_at - self.started_at)

    def walk(self) -> Iterator[NodeRecord]:
        """This node and all its descendants, depth first, in start order.

        Returns:
            An iterator over the subtree.
        """
        yield self
        for child in self.children:
            yield from child.walk()


TimelineItem = TurnEvent | TextSegment
"""What happened in a turn, in order: events (deltas merged into text segments)."""


@dataclass(slots=True)
class TurnLog:
    """The timeline of one root node (a turn or a flow run)."""

    turn_id: str
    timeline: list[TimelineItem] = field(default_factory=lambda: list[TimelineItem]())


class NodeLog:
    """Records of every node seen, grouped by root (turn or flow), with the order things happened.

    A node whose parent is unknown becomes a root rather than being lost; events for unknown
    nodes are ignored, so a partial log (a crash, a cancel) still yields the tree of what is known.
    """

    def __init__(self, max_turns: int = 200) -> None:
        self.nodes: dict[str, NodeRecord] = {}
        self.turns: dict[str, TurnLog] = {}
        self.max_turns = max_turns
        """Older turns are forgotten (they stay in the store), so a long session stays flat."""

    @classmethod
    def of(cls, events: Iterable[TurnEvent]) -> NodeLog:
        """Fold a run of events (a turn's, live or stored) into a new log.

        Args:
            events: Events in the order they happened.

        Returns:
            The log, with no turn forgotten.
        """
        log = cls(max_turns=1 << 30)
        for event in events:
            log.apply(event)
        return log

    @property
    def roots(self) -> list[NodeRecord]:
        """The root nodes, oldest first."""
        return [self.nodes[t] for t in self.turns if t in self.nodes]

    def apply(self, event: TurnEvent) -> NodeRecord | None:
        """Fold one event into the tree.

        Args:
            event: Any turn event; kinds that do not shape the tree only update their node.

        Returns:
            The record the event touched, or None when it concerns no known node.
        """
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
                return self._add(record, event)
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
                return self._add(record, event)
            case TextDelta():
                record = self.nodes.get(event.node_id)
                if record is None:
                    return None
                log = self._turn_log(record)
                last = log.timeline[-1] if log is not None and log.timeline else None
                if isinstance(last, TextSegment) and last.node_id == record.node_id:
                    last.append(event.text)
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
                record.status = event.status
                record.finished_at = event.at
                record.outcome = event.outcome
                record.output = event.output
                record.error = event.error
            case ToolCallFinished():
                record.status = "failed" if event.is_error else "done"
                record.finished_at = event.at
                record.output = event.output
                record.duration = event.duration
                record.diff = event.diff
            case VerdictReached():
                record.verdict = event.verdict
                record.feedback = event.feedback
                parent = self.nodes.get(record.parent_id or "")
                if parent is not None and parent.kind == "round":
                    parent.verdict = event.verdict
                    parent.feedback = event.feedback
            case ThinkingDelta():
                record.thinking += event.text
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
                item.void()
                return
            if isinstance(item, UsageRecorded) and item.node_id == record.node_id and not item.cut:
                return
            if isinstance(item, ToolCallStarted) and item.parent_id == record.node_id:
                return

    def _add(self, record: NodeRecord, event: TurnEvent) -> NodeRecord:
        existing = self.nodes.get(record.node_id)
        if existing is not None:
            return existing
        self.nodes[record.node_id] = record
        parent = self.nodes.get(record.parent_id or "")
        if parent is not None:
            parent.children.append(record)
            if record.kind == "round":
                record.round_index = sum(1 for c in parent.children if c.kind == "round")
        else:
            self.turns[record.node_id] = TurnLog(record.node_id)
            self._trim()
        log = self._turn_log(record)
        if log is not None:
            log.timeline.append(event)
        return record

    def _trim(self) -> None:
        while len(self.turns) > self.max_turns:
            self.forget(next(iter(self.turns)))

    def forget(self, turn_id: str) -> None:
        """Drop a turn and all its records.

        Args:
            turn_id: The root node's id.
        """
        self.turns.pop(turn_id, None)
        for record in list(self.walk(turn_id)):
            self.nodes.pop(record.node_id, None)

    def turn_id_of(self, node_id: str) -> str | None:
        """The root (turn or flow) a node belongs to.

        Args:
            node_id: Any known node.

        Returns:
            The root's id, or None for an unknown node.
        """
        record = self.nodes.get(node_id)
        while record is not None and record.parent_id is not None and record.parent_id in self.nodes:
            record = self.nodes[record.parent_id]
        return record.node_id if record is not None else None

    def _turn_log(self, record: NodeRecord) -> TurnLog | None:
        turn_id = self.turn_id_of(record.node_id)
        return self.turns.get(turn_id) if turn_id else None

    def walk(self, node_id: str) -> Iterator[NodeRecord]:
        """The node and its descendants, depth first in start order.

        Args:
            node_id: Where to start (nothing for an unknown node).

        Returns:
            An iterator over the subtree.
        """
        record = self.nodes.get(node_id)
        return record.walk() if record is not None else iter(())

    def ancestors(self, node_id: str) -> Iterator[NodeRecord]:
        """The node's parents, nearest first.

        Args:
            node_id: Any known node.

        Returns:
            An iterator over its ancestors.
        """
        record = self.nodes.get(node_id)
        while record is not None and record.parent_id is not None:
            record = self.nodes.get(record.parent_id)
            if record is not None:
                yield record

    def depth(self, node_id: str) -> int:
        """How many ancestors a node has.

        Args:
            node_id: Any known node.

        Returns:
            0 for a root.
        """
        return sum(1 for _ in self.ancestors(node_id))

    def rounds(self, turn_id: str) -> list[NodeRecord]:
        """The round nodes of a turn, in order.

        Args:
            turn_id: The turn.

        Returns:
            Its rounds (none for an agent turn).
        """
        turn = self.nodes.get(turn_id)
        return [] if turn is None else [c for c in turn.children if c.kind == "round"]

    def subtree_timeline(self, node_id: str) -> list[TimelineItem]:
        """The timeline items of a node's subtree, in the order they happened.

        Args:
            node_id: The subtree's top.

        Returns:
            Its events and text segments.
        """
        log = self.turns.get(self.turn_id_of(node_id) or "")
        if log is None:
            return []
        inside = {r.node_id for r in self.walk(node_id)}
        return [item for item in log.timeline if item.node_id in inside]

    # -- queries: what the hosts, the history and the store read off the log ----------------------

    def is_main_generator(self, node_id: str) -> bool:
        """Whether a node is one of its turn's main generators.

        A main generator writes the turn's answer: the turn's agent, or the generator of one of
        the turn's rounds. Sub-agents (under a tool call) and critics are not.

        Args:
            node_id: Any node.

        Returns:
            True for an `agent` or `generate` node right under its root, or under a round that is.
        """
        record = self.nodes.get(node_id)
        if record is None or record.kind not in ("agent", "generate"):
            return False
        parent = self.nodes.get(record.parent_id or "")
        if parent is None or parent.parent_id is None:
            return parent is not None
        grandparent = self.nodes.get(parent.parent_id)
        return parent.kind == "round" and grandparent is not None and grandparent.parent_id is None

    def main_generators(self, turn_id: str) -> list[NodeRecord]:
        """A turn's main generators (see `is_main_generator`), in start order.

        Args:
            turn_id: The turn.

        Returns:
            Its agent, or its rounds' generators; none for an unknown turn.
        """
        return [r for r in self.walk(turn_id) if self.is_main_generator(r.node_id)]

    def usage(self, node_id: str) -> Usage:
        """Tokens spent under a node: every `UsageRecorded` in its subtree, cut calls' included.

        Args:
            node_id: The subtree's top (a turn for the turn's spend).

        Returns:
            The sum (zero for an unknown node).
        """
        return sum((r.usage for r in self.walk(node_id)), Usage())

    def round_of(self, node_id: str) -> int | None:
        """The 1-based index of the round a node runs in.

        Args:
            node_id: Any node.

        Returns:
            The nearest enclosing round's index (the node's own, for a round), or None.
        """
        record = self.nodes.get(node_id)
        if record is not None and record.kind == "round":
            return record.round_index
        return next((a.round_index for a in self.ancestors(node_id) if a.kind == "round"), None)

    def tool_calls(self, node_id: str) -> list[tuple[ToolCallStarted, NodeRecord]]:
        """The tool calls made in a subtree, in the order they finished, then the unfinished ones.

        Args:
            node_id: The subtree's top (a turn for all its calls).

        Returns:
            Each call's start event (its `call_id` and input) with its record (its result in
            `output` and `status`, `running` for a call that never finished).
        """
        done: list[tuple[ToolCallStarted, NodeRecord]] = []
        starts: dict[str, ToolCallStarted] = {}
        for item in self.subtree_timeline(node_id):
            if isinstance(item, ToolCallStarted):
                starts[item.node_id] = item
            elif isinstance(item, ToolCallFinished) and item.node_id in starts:
                done.append((starts.pop(item.node_id), self.nodes[item.node_id]))
        return done + [(start, self.nodes[start.node_id]) for start in starts.values()]

    def plan(self, node_id: str) -> list[TodoItem] | None:
        """The plan an agent (or a round's generator) set: its last `todo_write` call's input.

        A call that failed (an invalid list) set nothing, so the call before it still stands; a
        call still running already counts, so the plan shows as soon as the model gives it.

        Args:
            node_id: The node that made the calls.

        Returns:
            The plan's items, or None when the node set none.
        """
        record = self.nodes.get(node_id)
        calls = [] if record is None else record.children
        for call in reversed(calls):
            if call.kind == "tool" and call.tool_name == TODO_TOOL and call.status != "failed":
                return plan_of(call.tool_input or {})
        return None

    def rounds_started(self, turn_id: str) -> int:
        """How many rounds a turn (or a flow) started, at any depth.

        Args:
            turn_id: The root.

        Returns:
            The number of `round` nodes in its subtree.
        """
        return sum(1 for r in self.walk(turn_id) if r.kind == "round")

    def streamed(self, node_id: str) -> list[TurnEvent]:
        """A subtree's events as they happened, each run of text (or thinking) of a node as one delta.

        This is the log as the store keeps it, and what a view replays to build itself again: it
        folds into the same tree as the original events, a retried stream's text included (the
        `StreamRetried` after it voids it again).

        Args:
            node_id: The subtree's top (a turn for the whole turn).

        Returns:
            The events, text deltas merged; events of unknown nodes were never in the log.
        """
        events: list[TurnEvent] = []
        for item in self.subtree_timeline(node_id):
            if isinstance(item, TextSegment):
                events.append(TextDelta(node_id=item.node_id, text=item.streamed))
                continue
            last = events[-1] if events else None
            if isinstance(item, ThinkingDelta) and isinstance(last, ThinkingDelta):
                if last.node_id == item.node_id:
                    events[-1] = ThinkingDelta(node_id=item.node_id, text=last.text + item.text)
                    continue
            events.append(item)
        return events


class NodeLogObserver:
    """Folds every event it sees into `log`, once; decides nothing (a `FanOutObserver`'s second)."""

    def __init__(self, log: NodeLog | None = None) -> None:
        self.log = log if log is not None else NodeLog(max_turns=1 << 30)

    def on_event(self, event: TurnEvent) -> None:
        """Fold the event."""
        self.log.apply(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Deny: a log decides nothing."""
        return ApprovalDecision.deny()


def build_tree(events: Iterable[TurnEvent]) -> list[NodeRecord]:
    """Fold events (live or stored) into their node tree.

    Args:
        events: A turn's events, in the order they happened.

    Returns:
        The root nodes (normally one: the turn), each with its children in start order.
    """
    return NodeLog.of(events).roots
