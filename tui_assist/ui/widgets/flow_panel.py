"""The flow panel: the composition of the current turn or flow, with states and a timeline.

Each row is one node (nested as it ran: Refine → rounds → generate / critic → tools, or a
workflow's Chain / Route / Parallel nodes), its state, and a bar on a shared time axis that shows
when it ran. Clicking a round row opens its review.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

from tui_assist.core.text import clip, duration

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui_assist.core.tree import NodeLog, NodeRecord

_STATE_STYLE = {"running": "$warning", "done": "$success", "failed": "$error", "cancelled": "$error 70%"}
_ICONS = {"running": "◌", "done": "✓", "failed": "✗", "cancelled": "⊘"}
_LABEL_MIN, _LABEL_MAX = 12, 36
"""Cells of the label column: as wide as the longest label (indent included), within these bounds
and at most half the panel."""
_TIME_WIDTH = 6
_BAR_MIN = 4
_COMBINATORS = {
    "chain": "Chain",
    "route": "Route",
    "parallel": "Parallel",
    "orchestrator": "OrchestratorWorkers",
    "refine": "Refine",
}


class FlowPanel(Widget):
    """Rows of the latest turn's nodes with a timeline bar each."""

    DEFAULT_CSS = """
    FlowPanel {
        height: auto;
        min-height: 3;
        background: $surface;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    class RoundChosen(Message):
        """A round row was clicked."""

        def __init__(self, round_id: str) -> None:
            super().__init__()
            self.round_id = round_id

    class NodeChosen(Message):
        """A row was clicked: its node is the selected one now."""

        def __init__(self, node_id: str) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, log: NodeLog | Callable[[], NodeLog], *, id: str | None = None) -> None:
        """Draw a turn of `log`, or of the log `log()` returns when first asked (the screen's is
        made with the first turn: the empty panel of the first frame imports no core events)."""
        super().__init__(id=id)
        self._log_of = log if callable(log) else lambda: log
        self.turn_id: str | None = None
        self.selected: str | None = None
        """The node whose row is highlighted (an inspector shows its inputs and outputs)."""
        self.clock = time.time
        self._rows: list[NodeRecord] = []

    @property
    def node_log(self) -> NodeLog:
        return self._log_of()

    def show_turn(self, turn_id: str | None) -> None:
        self.turn_id = turn_id
        self.selected = None
        self.refresh(layout=True)

    def select(self, node_id: str | None) -> None:
        self.selected = node_id
        self.refresh()

    def changed(self) -> None:
        self.refresh(layout=True)

    def tick(self) -> None:
        """Redraw the running rows' times: no layout of the screen unless the rows changed (a
        layout costs a frame as much as a streaming answer's growth)."""
        self.refresh(layout=len(self._records()) != len(self._rows))

    def _records(self) -> list[NodeRecord]:
        if self.turn_id is None:
            return []
        return list(self.node_log.walk(self.turn_id))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # One line per node, never wrapped (rows are cut to the width instead).
        return len(self._records()) or 2

    def render(self) -> Content:
        rows = self._records()
        self._rows = rows
        width = max(10, self.content_region.width or 60)
        if not rows:
            return Content.styled("No turn yet.\nA turn's composition shows here.", "$foreground 55%")
        turn = rows[0]
        start = turn.started_at
        end = max(
            [r.finished_at for r in rows if r.finished_at is not None]
            + [self.clock() if any(r.status == "running" for r in rows) else start + 0.001]
        )
        span = max(end - start, 1e-3)
        labels = [("  " * self.node_log.depth(r.node_id), self.name_of(r)) for r in rows]
        longest = max(len(indent) + len(label) for indent, label in labels)
        # label, space, icon, space, bar, time: labels come first, the bar gets what is left (at
        # least a few cells, else none).
        label_width = min(max(longest, _LABEL_MIN), _LABEL_MAX, width - 3 - _TIME_WIDTH - _BAR_MIN)
        bar_width = width - label_width - 3 - _TIME_WIDTH
        if label_width < _LABEL_MIN:
            bar_width = 0
            label_width = max(4, width - 3 - _TIME_WIDTH)
        lines: list[Content] = []
        for record, (indent, label) in zip(rows, labels, strict=True):
            room = label_width - len(indent)
            text = indent + clip(label, room) if room >= 4 else clip(label, label_width)
            text = text.ljust(label_width)
            elapsed = record.elapsed
            seconds = duration(elapsed) if elapsed is not None else "…"
            if record.node_id == self.selected:
                text_style = "reverse"
            else:
                text_style = "bold" if record.kind in ("turn", "round") else ""
            parts: list[Content | tuple[str, str] | str] = [
                (text, text_style),
                " ",
                (_ICONS[record.status], _STATE_STYLE[record.status]),
                " ",
            ]
            if bar_width:
                begin = int((record.started_at - start) / span * bar_width)
                stop_at = record.finished_at if record.finished_at is not None else self.clock()
                finish = min(max(begin + 1, int((stop_at - start) / span * bar_width)), bar_width)
                begin = min(begin, bar_width - 1)
                parts += [
                    " " * begin,
                    ("━" * (finish - begin), _STATE_STYLE[record.status]),
                    " " * (bar_width - finish),
                ]
            parts.append((f" {seconds:>{_TIME_WIDTH - 1}}", "$foreground 55%"))
            lines.append(Content.assemble(*parts))
        return Content("\n").join(lines)

    def name_of(self, record: NodeRecord) -> str:
        """What a row is called: the kind of turn, its loop, a sub-agent by its task, a composition."""
        match record.kind:
            case "turn" if record.label.startswith("goal "):  # `GoalTurn`'s label: its attempts are rounds
                return "Goal turn"
            case "turn":
                return "Refine turn" if self.node_log.rounds(record.node_id) else "Agent turn"
            case "round":
                # A turn's round has its critic's verdict; a workflow's Refine round, its outcome.
                verdict = record.verdict or (record.outcome if record.outcome in ("pass", "revise") else None)
                return f"{record.label} {verdict.upper()}" if verdict else record.label
            case "critic":
                return f"critic {record.verdict.upper()}" if record.verdict else "critic"
            case "tool":
                from tui_assist.core.tool_labels import tool_title

                return tool_title(record.tool_name, record.tool_input or {}, record.diff)
            case "agent":
                parent = self.node_log.nodes.get(record.parent_id or "")
                if parent is not None and parent.kind == "tool":
                    return f"sub-agent: {record.label}"  # run by the agent tool: its description
                return "agent loop"
            case "chain" if record.label == "chain":
                return self._chain_label(record)
            case kind if kind in _COMBINATORS and record.label == kind:
                # Combinators read as the composition they are: Route → network...
                name = _COMBINATORS[kind]
                return f"{name} → {record.outcome}" if kind == "route" and record.outcome else name
            case _:
                return record.label

    def _chain_label(self, record: NodeRecord) -> str:
        """`a.then(b).then(c)` nests chains: name each by its steps, `Chain …→ c`, `Chain a → b`."""
        steps = [c for c in record.children if c.kind != "tool"]
        if not steps:
            return "Chain"
        first, last = steps[0], steps[-1]
        if len(steps) == 1:
            return f"Chain {self._short(first)}"
        head = "…" if first.kind == "chain" else self._short(first)
        return f"Chain {head} → {self._short(last)}"

    def _short(self, record: NodeRecord) -> str:
        if record.kind == "chain" and record.label == "chain":
            return "Chain"
        return self.name_of(record)

    def on_click(self, event: Click) -> None:
        row = event.y - self.styles.padding.top
        if 0 <= row < len(self._rows):
            record = self._rows[row]
            self.select(record.node_id)
            self.post_message(self.NodeChosen(record.node_id))
            target = record if record.kind == "round" else None
            if target is None:
                target = next((a for a in self.node_log.ancestors(record.node_id) if a.kind == "round"), None)
            if target is not None:
                self.post_message(self.RoundChosen(target.node_id))
