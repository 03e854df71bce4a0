"""The flow panel: the composition of the current turn or flow, with states and a timeline.

Each row is one node (nested as it ran: Refine → rounds → generate / critic → tools, or a
workflow's Chain / Route / Parallel nodes), its state, and a bar on a shared time axis that shows
when it ran. Clicking a round row opens its review.
"""

from __future__ import annotations

import time

from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from tui_assist.core.text import duration
from tui_assist.core.tree import NodeLog, NodeRecord

_STATE_STYLE = {"running": "$warning", "done": "$success", "failed": "$error", "cancelled": "$error 70%"}
_ICONS = {"running": "◌", "done": "✓", "failed": "✗", "cancelled": "⊘"}
_LABEL_WIDTH = 24
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

    def __init__(self, log: NodeLog, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.node_log = log
        self.turn_id: str | None = None
        self.selected: str | None = None
        """The node whose row is highlighted (an inspector shows its inputs and outputs)."""
        self.clock = time.time
        self._rows: list[NodeRecord] = []

    def show_turn(self, turn_id: str | None) -> None:
        self.turn_id = turn_id
        self.selected = None
        self.refresh(layout=True)

    def select(self, node_id: str | None) -> None:
        self.selected = node_id
        self.refresh()

    def changed(self) -> None:
        self.refresh(layout=True)

    def _records(self) -> list[NodeRecord]:
        if self.turn_id is None:
            return []
        return list(self.node_log.walk(self.turn_id))

    def render(self) -> Content:
        rows = self._records()
        self._rows = rows
        if not rows:
            return Content.styled(
                "No turn yet. The composition of a running turn shows here.", "$foreground 55%"
            )
        turn = rows[0]
        start = turn.started_at
        end = max(
            [r.finished_at for r in rows if r.finished_at is not None]
            + [self.clock() if any(r.status == "running" for r in rows) else start + 0.001]
        )
        span = max(end - start, 1e-3)
        width = max(10, self.content_region.width or 60)
        bar_width = max(4, width - _LABEL_WIDTH - 10)
        lines: list[Content] = []
        for record in rows:
            depth = self.node_log.depth(record.node_id)
            label = self._label(record)
            text = ("  " * depth + label)[:_LABEL_WIDTH].ljust(_LABEL_WIDTH)
            begin = int((record.started_at - start) / span * bar_width)
            stop_at = record.finished_at if record.finished_at is not None else self.clock()
            finish = max(begin + 1, int((stop_at - start) / span * bar_width))
            finish = min(finish, bar_width)
            begin = min(begin, bar_width - 1)
            elapsed = record.elapsed
            seconds = f"{duration(elapsed):>6}" if elapsed is not None else "   …  "
            if record.node_id == self.selected:
                text_style = "reverse"
            else:
                text_style = "bold" if record.kind in ("turn", "round") else ""
            lines.append(
                Content.assemble(
                    (text, text_style),
                    " ",
                    (_ICONS[record.status], _STATE_STYLE[record.status]),
                    " ",
                    " " * begin,
                    ("━" * (finish - begin), _STATE_STYLE[record.status]),
                    " " * (bar_width - finish),
                    (f" {seconds}", "$foreground 55%"),
                )
            )
        return Content("\n").join(lines)

    def _label(self, record: NodeRecord) -> str:
        match record.kind:
            case "turn":
                return "Refine" if self.node_log.rounds(record.node_id) else "Agent"
            case "round":
                # A turn's round has its critic's verdict; a workflow's Refine round, its outcome.
                verdict = record.verdict or (record.outcome if record.outcome in ("pass", "revise") else None)
                return f"{record.label} {verdict.upper()}" if verdict else record.label
            case "critic":
                return f"critic {record.verdict.upper()}" if record.verdict else "critic"
            case "tool":
                return record.tool_name
            case kind if kind in _COMBINATORS and record.label == kind:
                # Combinators read as the composition they are: Chain, Route → network...
                name = _COMBINATORS[kind]
                return f"{name} → {record.outcome}" if kind == "route" and record.outcome else name
            case _:
                return record.label

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
