"""Fold a turn's events into its node tree.

One function serves the live run and the stored log alike: the TUI applies events as they arrive
and the history viewer replays a stored turn's events through the same `TreeBuilder`, so a turn
redrawn tomorrow has exactly the shape it had while it ran. The tree is plain data; how a node is
drawn (a widget, a Markdown heading, a log line) is the host's business.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    Verdict,
    VerdictReached,
)

TreeStatus = Literal["running", "done", "failed", "cancelled"]


@dataclass(slots=True)
class TreeNode:
    """One node of a turn's tree, as far as the events so far tell."""

    node_id: str
    parent_id: str | None
    kind: str
    """The node kind (`turn`, `round`, `generate`, `critic`, `agent`, `tool`, a combinator...)."""
    label: str
    """The node's label; a tool call's label is the tool's name."""
    status: TreeStatus = "running"
    outcome: str | None = None
    """The closed outcome a node finished with (`answered`, `pass`, `budget_exhausted`...)."""
    verdict: Verdict | None = None
    """For critic nodes: the verdict they reached."""
    feedback: str = ""
    """For critic nodes: the feedback that came with the verdict."""
    detail: str = ""
    """What the node was given (a prompt, an input summary)."""
    text: str = ""
    """Model text streamed under this node (reset when a broken stream is retried)."""
    output: str = ""
    """What the node produced: its answer, or a tool call's result."""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    """Tokens spent by model calls made directly under this node."""
    tool_input: dict[str, Any] | None = None
    """For tool nodes: the input the model gave."""
    duration: float | None = None
    """For tool nodes: seconds the call took."""
    children: list[TreeNode] = field(default_factory=lambda: list[TreeNode]())

    def walk(self) -> Iterable[TreeNode]:
        """This node and all its descendants, depth first, in order."""
        yield self
        for child in self.children:
            yield from child.walk()


class TreeBuilder:
    """Applies events one at a time; `roots` is the tree so far.

    Unknown parents make a node a root rather than losing it; events for unknown nodes are ignored,
    so a partial log (a crash, a cancel) still yields the tree of what is known.
    """

    def __init__(self) -> None:
        self.roots: list[TreeNode] = []
        self._nodes: dict[str, TreeNode] = {}

    def node(self, node_id: str) -> TreeNode | None:
        """The node with this id, if it has started."""
        return self._nodes.get(node_id)

    def apply(self, event: TurnEvent) -> TreeNode | None:
        """Fold one event into the tree.

        Args:
            event: Any turn event; kinds that do not shape the tree only update their node.

        Returns:
            The node the event touched, or None when it concerns no known node.
        """
        match event:
            case NodeStarted():
                return self._add(
                    TreeNode(
                        node_id=event.node_id,
                        parent_id=event.parent_id,
                        kind=event.node_kind,
                        label=event.label,
                        detail=event.detail,
                    )
                )
            case ToolCallStarted():
                return self._add(
                    TreeNode(
                        node_id=event.node_id,
                        parent_id=event.parent_id,
                        kind="tool",
                        label=event.name,
                        tool_input=dict(event.input),
                    )
                )
            case _:
                pass
        node = self._nodes.get(event.node_id)
        if node is None:
            return None
        match event:
            case NodeFinished():
                node.status = event.status
                node.outcome = event.outcome
                node.output = event.output
                node.error = event.error
            case ToolCallFinished():
                node.status = "failed" if event.is_error else "done"
                node.output = event.output
                node.duration = event.duration
            case VerdictReached():
                node.verdict = event.verdict
                node.feedback = event.feedback
            case TextDelta():
                node.text += event.text
            case StreamRetried():
                node.text = ""
            case UsageRecorded():
                node.usage = node.usage + event.usage
        return node

    def _add(self, node: TreeNode) -> TreeNode:
        existing = self._nodes.get(node.node_id)
        if existing is not None:
            return existing
        self._nodes[node.node_id] = node
        parent = self._nodes.get(node.parent_id) if node.parent_id is not None else None
        (parent.children if parent is not None else self.roots).append(node)
        return node


def build_tree(events: Iterable[TurnEvent]) -> list[TreeNode]:
    """Fold events (live or stored) into their node tree.

    Args:
        events: A turn's events, in the order they happened.

    Returns:
        The root nodes (normally one: the turn), each with its children in start order.
    """
    builder = TreeBuilder()
    for event in events:
        builder.apply(event)
    return builder.roots
