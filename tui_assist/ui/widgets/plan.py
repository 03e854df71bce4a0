"""The plan as a checklist in the conversation: each `todo_write` call is drawn as its todo list.

The checklist is the call's own input, so a resumed conversation draws it again from the stored
call. It is shown open; `enter` or a click folds it to its header (`Plan 2/5 done`).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content

from tui_assist.core.plan import CHECKBOXES, TODO_TOOL, plan_of, plan_progress
from tui_assist.ui.widgets.turn_parts import ToolCallView

__all__ = ["PlanView", "tool_call_view"]

_ITEM_STYLES = {"pending": "", "in_progress": "bold $warning", "completed": "dim strike"}


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
        lines: list[Content | tuple[str, str] | str] = []
        for index, item in enumerate(self.items):
            if index:
                lines.append("\n")
            lines += [(CHECKBOXES[item.status], _ITEM_STYLES[item.status] or "dim"), " "]
            lines.append((item.label, _ITEM_STYLES[item.status]) if _ITEM_STYLES[item.status] else item.label)
        return Content.assemble(*lines) if lines else Content("(an empty plan)")


def tool_call_view(node_id: str, name: str, tool_input: dict[str, Any]) -> ToolCallView:
    """The view of one tool call: a checklist for `todo_write`, else the generic call."""
    if name == TODO_TOOL:
        return PlanView(node_id, name, tool_input)
    return ToolCallView(node_id, name, tool_input)
