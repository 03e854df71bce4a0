"""The live agent tree: turn → round → generate / critic → tool calls and sub-agents.

Nodes are added and restyled as events arrive. Labels are drawn from the `NodeLog` records at
render time, so a state change only refreshes one line, and colours come from component classes
(theme variables), never from the labels themselves.

An agent that set a plan (`todo_write`) has it as its first child: a `Plan 1/3 done` row over
one row per step, read from the log (`NodeLog.plan`) when drawn, so a new call only refreshes
them. It is open while the agent runs and folds when the agent ends; the user folds it as any node.
"""

from __future__ import annotations

import time

from rich.style import Style
from rich.text import Text
from textual.content import Content
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import NodeID, TreeNode

from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted, TurnEvent
from tui_assist.core.plan import TODO_TOOL, plan_progress
from tui_assist.core.text import clip, duration
from tui_assist.core.tool_labels import tool_title
from tui_assist.core.tree import NodeLog, NodeRecord
from tui_assist.ui.widgets.plan import plan_item

_ICONS = {"running": "◌", "done": "✓", "failed": "✗", "cancelled": "⊘"}


class AgentTree(Tree[str]):
    """One tree node per core node; data is the node id."""

    DEFAULT_CSS = """
    AgentTree {
        background: $surface;
        padding: 0 1;
        overflow-x: hidden;
    }
    AgentTree > .agent-tree--running { color: $warning; }
    AgentTree > .agent-tree--done { color: $success; }
    AgentTree > .agent-tree--failed { color: $error; }
    AgentTree > .agent-tree--cancelled { color: $error 70%; }
    AgentTree > .agent-tree--pass { color: $success; text-style: bold; }
    AgentTree > .agent-tree--revise { color: $warning; text-style: bold; }
    AgentTree > .agent-tree--muted { color: $foreground 55%; }
    AgentTree > .agent-tree--round { color: $secondary; text-style: bold; }
    AgentTree > .agent-tree--turn { color: $primary; text-style: bold; }
    """
    COMPONENT_CLASSES = {
        "agent-tree--running",
        "agent-tree--done",
        "agent-tree--failed",
        "agent-tree--cancelled",
        "agent-tree--pass",
        "agent-tree--revise",
        "agent-tree--muted",
        "agent-tree--round",
        "agent-tree--turn",
    }

    class RoundChosen(Message):
        """The user picked a round (or a node inside one) to review."""

        def __init__(self, round_id: str) -> None:
            super().__init__()
            self.round_id = round_id

    def __init__(self, log: NodeLog, *, id: str | None = None) -> None:
        super().__init__("turns", id=id)
        self.node_log = log
        self._plans: dict[str, TreeNode[str]] = {}
        """The plan row of each agent that set one, by the agent's node id."""
        self._plan_rows: dict[NodeID, tuple[str, int]] = {}
        """What a plan row draws: its agent's id and the step's index (-1: the `Plan` row)."""
        self.show_root = False
        self.guide_depth = 3
        self._by_node_id: dict[str, TreeNode[str]] = {}
        self.clock = time.time
        """Where elapsed times of running nodes come from (tests pin it)."""

    @property
    def round_count(self) -> int:
        return sum(
            1 for r in self.node_log.nodes.values() if r.kind == "round" and r.node_id in self._by_node_id
        )

    def node_for(self, node_id: str) -> TreeNode[str] | None:
        return self._by_node_id.get(node_id)

    def plan_node(self, node_id: str) -> TreeNode[str] | None:
        """The `Plan` row of the agent `node_id`, if it set a plan."""
        return self._plans.get(node_id)

    def apply(self, event: TurnEvent, record: NodeRecord | None) -> None:
        """Reflect one event whose record the NodeLog already updated."""
        if record is None:
            return
        if isinstance(event, NodeStarted | ToolCallStarted):
            self._add(event, record)
        else:
            node = self._by_node_id.get(record.node_id)
            if node is not None:
                node.refresh()
            if record.parent_id and record.kind == "critic":
                parent = self._by_node_id.get(record.parent_id)
                if parent is not None:
                    parent.refresh()
        if isinstance(event, ToolCallStarted | ToolCallFinished) and record.tool_name == TODO_TOOL:
            self._show_plan(record.parent_id or "")
        elif isinstance(event, NodeFinished) and record.node_id in self._plans:
            self._plans[record.node_id].collapse()  # the run is over: its plan folds to its progress

    def _add(self, event: NodeStarted | ToolCallStarted, record: NodeRecord) -> None:
        parent = self._by_node_id.get(record.parent_id or "")
        if parent is None and record.parent_id is not None:
            return
        under = parent if parent is not None else self.root
        leaf = record.kind == "tool" and not record.children
        node = under.add(record.label, data=record.node_id, expand=True, allow_expand=not leaf)
        if record.kind == "tool":
            node.allow_expand = True
        self._by_node_id[record.node_id] = node
        if record.parent_id is None:
            self._collapse_older_turns(record.node_id)
        if isinstance(event, NodeStarted) and event.node_kind in ("agent", "generate") and parent is not None:
            parent.allow_expand = True
        self._track_cursor(node)

    def _show_plan(self, owner_id: str) -> None:
        """Draw the plan `owner_id` set (after one of its `todo_write` calls started or ended)."""
        owner = self._by_node_id.get(owner_id)
        items = self.node_log.plan(owner_id)
        node = self._plans.get(owner_id)
        if owner is None or items is None:
            if node is not None:  # its only call failed: it set no plan after all
                self._forget_plan(owner_id)
                node.remove()
            return
        if node is None:
            node = owner.add("Plan", before=0, expand=True)
            self._plans[owner_id] = node
            self._plan_rows[node.id] = (owner_id, -1)
        node.refresh()
        if len(node.children) == len(items):
            for row in node.children:
                row.refresh()
            return
        for row in node.children:
            self._plan_rows.pop(row.id, None)
        node.remove_children()
        for index in range(len(items)):
            self._plan_rows[node.add_leaf("step").id] = (owner_id, index)

    def _forget_plan(self, owner_id: str) -> None:
        node = self._plans.pop(owner_id, None)
        if node is not None:
            for row in (node, *node.children):
                self._plan_rows.pop(row.id, None)

    def _collapse_older_turns(self, keep: str) -> None:
        for node_id, node in self._by_node_id.items():
            if node.parent is self.root and node_id != keep:
                node.collapse()
        while len(self.root.children) > self.node_log.max_turns:
            oldest = self.root.children[0]
            for record_id in [n for n, tn in self._by_node_id.items() if self._is_under(tn, oldest)]:
                self._by_node_id.pop(record_id, None)
                self._forget_plan(record_id)
            oldest.remove()

    @staticmethod
    def _is_under(node: TreeNode[str], ancestor: TreeNode[str]) -> bool:
        current: TreeNode[str] | None = node
        while current is not None:
            if current is ancestor:
                return True
            current = current.parent
        return False

    def _track_cursor(self, node: TreeNode[str]) -> None:
        if not self.has_focus:
            self.call_after_refresh(self.scroll_to_node, node, animate=False)

    def tick(self) -> None:
        """Redraw running nodes (their elapsed time)."""
        for record_id, node in self._by_node_id.items():
            record = self.node_log.nodes.get(record_id)
            if record is not None and record.status == "running":
                node.refresh()

    def clear_turns(self) -> None:
        self._by_node_id.clear()
        self._plans.clear()
        self._plan_rows.clear()
        self.clear()

    # -- rendering -------------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"agent-tree--{name}", partial=True)

    def label_text(self, record: NodeRecord, width: int | None = None) -> Text:
        """The label of `record`'s line; what says which node it is is clipped (with "…") to fit `width`."""
        state = record.status
        style = self._style
        head = Text(_ICONS[state] + " ", style(state))
        main = Text()
        tail = Text()
        match record.kind:
            case "turn":
                # Turns are told apart by what was asked (the flow panel says agent or refine).
                main.append(clip(record.detail or record.label, 200), style("turn"))
            case "round":
                main.append(record.label, style("round"))
                if record.verdict:
                    tail.append(f" · {record.verdict.upper()}", style(record.verdict))
            case "critic":
                main.append("critic")
                if record.verdict:
                    tail.append(f" {record.verdict.upper()}", style(record.verdict))
            case "compact":
                main.append("compact")
                if record.output:
                    main.append(" " + clip(record.output, 200), style("muted"))
            case "tool":
                verb, _, rest = tool_title(record.tool_name, record.tool_input or {}, record.diff).partition(
                    " "
                )
                main.append(verb)
                if rest:
                    main.append(" " + clip(rest, 200), style("muted"))
            case _:
                main.append(clip(record.label, 200))
                if record.thinking:
                    main.append(
                        " · thought" if record.text or state != "running" else " · thinking", style("muted")
                    )
        if state == "running":
            tail.append(f" {duration(max(0.0, self.clock() - record.started_at))}", style("muted"))
        else:
            elapsed = record.elapsed
            if elapsed is not None:
                tail.append(f" {duration(elapsed)}", style("muted"))
            if state == "failed" and record.error:
                tail.append(" " + clip(record.error, 40), style("failed"))
        if width is not None:
            room = max(4, width - head.cell_len - tail.cell_len)
            if main.cell_len > room:
                main.truncate(room - 1)
                main.rstrip()
                main.append("…")
            if head.cell_len + main.cell_len + tail.cell_len > width:
                tail.truncate(max(0, width - head.cell_len - main.cell_len - 1))
                tail.append("…", style("muted"))
        return Text.assemble(head, main, tail)

    def plan_text(self, owner_id: str, index: int) -> Text:
        """A plan row's label: `☰ Plan 1/3 done` (index -1), else the step's mark and label."""
        items = self.node_log.plan(owner_id) or []
        if index < 0:
            return Text.assemble(
                ("☰ ", self._style("muted")),
                ("Plan", "bold"),
                (" " + plan_progress(items), self._style("muted")),
            )
        if index >= len(items):
            return Text()
        return _rich_text(plan_item(items[index]))

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        record = self.node_log.nodes.get(node.data or "")
        plan_row = self._plan_rows.get(node.id)
        if record is None and plan_row is None:
            return super().render_label(node, base_style, style)
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        # The line is the guides, a two-cell expand icon, then the label: fit it, never scroll.
        room = self.scrollable_content_region.width - depth * self.guide_depth - 2
        if record is not None:
            label = self.label_text(record, room if room > 0 else None)
        else:
            assert plan_row is not None
            label = self.plan_text(*plan_row)
            if room > 0 and label.cell_len > room:
                label.truncate(max(1, room - 1))
                label.append("…", self._style("muted"))
        label.stylize(style)
        if node.allow_expand and node.children:
            prefix = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE, base_style)
        else:
            prefix = ("  ", base_style)
        return Text.assemble(prefix, label)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        record = self.node_log.nodes.get(event.node.data or "")
        if record is None:
            return
        target = record if record.kind == "round" else None
        if target is None:
            target = next((a for a in self.node_log.ancestors(record.node_id) if a.kind == "round"), None)
        if target is not None:
            event.stop()
            self.post_message(self.RoundChosen(target.node_id))


def _rich_text(content: Content) -> Text:
    """`content` as Rich text (a `Tree` draws labels as Rich text), its theme variables resolved."""
    return Text.assemble(*((text, style.rich_style) for text, style in content.render()))
