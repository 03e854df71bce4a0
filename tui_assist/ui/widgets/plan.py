"""The plan as a checklist in the conversation: each `todo_write` call is drawn as its todo list.

The checklist is the call's own input, so a resumed conversation draws it again from the stored
call. It is shown open; `enter` or a click folds it to its header (`Plan 2/5 done`). One step's
line (`plan_item`) is drawn here for the agent tree's plan rows too, so both read alike.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content

from tui_assist.core.plan import CHECKBOXES, TODO_TOOL, TodoItem, plan_of, plan_progress
from tui_assist.ui.widgets.turn_parts import ToolCallView

__all__ = ["PlanView", "plan_item", "tool_call_view"]

_ITEM_STYLES = {"pending": "", "in_progress": "bold $warning", "completed": "dim strike"}


def plan_item(item: TodoItem) -> Content:
    """One step of the plan: its mark (☐ ◐ ☑), then its label, styled by its state."""
    look = _ITEM_STYLES[item.status]
    return Content.assemble(
        (CHECKBOXES[item.status], look or "dim"), " ", (item.label, look) if look else item.label
    )


class PlanView(ToolCallView):
    """A `todo_write` call: the plan it set, as a checklist."""

    DEFAULT_CSS = """
    PlanView > .tool-call--body { color: $foreground; }
    """

    def __init__(self, node_id: str, name: str, tool_input: dict[str, Any]) -> None:
        super().__init__(node_id, name, tool_input)
        self.items = plan_of(tool_input)
        self.add_class("-expanded")
        self._body.update(self._body_content())

    def _header_content(self) -> Content:
        items = plan_of(self.tool_input)
        style = {"running": "$warning", "done": "$success", "failed": "$error", "cancelled": "$error"}[
            self.state
        ]
        icon = "✗" if self.state in ("failed", "cancelled") else "☰"
        return Content.assemble((icon, style), " ", ("Plan", "bold"), " ", (plan_progress(items), "dim"))

    def _body_content(self) -> Content:
        if self.state == "failed":
            return Content(self.output)
        if not self.items:
            return Content("(an empty plan)")
        return Content("\n").join(plan_item(item) for item in self.items)


def tool_call_view(node_id: str, name: str, tool_input: dict[str, Any]) -> ToolCallView:
    """The view of one tool call: a checklist for `todo_write`, else the generic call."""
    if name == TODO_TOOL:
        return PlanView(node_id, name, tool_input)
    return ToolCallView(node_id, name, tool_input)
