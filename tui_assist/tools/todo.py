"""The `todo_write` tool: the model sets its plan, a todo list, whole, each time.

It changes nothing on disk and is never asked (plan mode too); what it sets is its own input, so
the plan is stored with the turn and resumed with it (`core/plan.py`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_assist.core.model import ToolSpec
from tui_assist.core.plan import TODO_TOOL, TodoItem, plan_progress
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.tools.base import validate_input

__all__ = ["TodoWriteTool"]

_DESCRIPTION = """\
Set your plan for the task: the whole todo list, each time (it replaces the previous one). The \
user sees it as a live checklist. Use it for work of several steps: write the steps first, mark \
one `in_progress` before you start it (one at a time) and `completed` as soon as it is done; add \
steps you discover. Skip it for a single, simple step."""


class _Todo(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    content: str = Field(min_length=1)
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str = ""  # noqa: N815  # the tool's field name, as Claude Code's


class _TodoInput(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    todos: list[_Todo]


class TodoWriteTool:
    """`todo_write` (`{"todos": [{"content", "status", "activeForm"?}]}`)."""

    def __init__(self) -> None:
        """The tool (it keeps nothing: the plan is its calls' input)."""
        todo = {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The step, imperative: `Run the tests`."},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                "activeForm": {"type": "string", "description": "While in progress: `Running the tests`."},
            },
            "required": ["content", "status"],
        }
        self._spec = ToolSpec(
            name=TODO_TOOL,
            description=_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {"todos": {"type": "array", "items": todo, "description": "The whole plan."}},
                "required": ["todos"],
            },
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> list[TodoItem]:
        """Validate the todo list.

        Raises:
            ToolInputError: for a malformed list, or more than one step in progress.
        """
        data = validate_input(_TodoInput, raw, TODO_TOOL)
        items = [TodoItem(todo.content, todo.status, todo.activeForm) for todo in data.todos]
        if sum(item.status == "in_progress" for item in items) > 1:
            raise ToolInputError(f"invalid input for {TODO_TOOL}: only one step may be in_progress at a time")
        return items

    def side_effecting(self, args: list[TodoItem]) -> bool:
        """Never: it only shows the plan."""
        return False

    def summary(self, args: list[TodoItem]) -> str:
        """`plan: 2/5 done`."""
        return f"plan: {plan_progress(args)}"

    async def run(self, args: list[TodoItem], ctx: ToolContext) -> ToolOutput:
        """Acknowledge the plan; it is shown from the call's input."""
        current = next((item.content for item in args if item.status == "in_progress"), None)
        now = f"; in progress: {current}" if current else ""
        return ToolOutput(f"The plan is updated ({plan_progress(args)}{now}). Keep it current as you work.")
