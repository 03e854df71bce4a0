"""The model's plan: the todo list `todo_write` sets, whole, each time it is called.

The plan is the input of the last `todo_write` call, so it is stored with the turn (as that call)
and comes back on resume with it; hosts draw it from the call's input (`plan_of`), the TUI as a
checklist, ACP as a `plan` update, stream-json as a `todo` line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, cast, get_args

__all__ = ["TODO_TOOL", "TodoItem", "TodoStatus", "plan_of", "plan_progress", "todo_dicts"]

TODO_TOOL: Final = "todo_write"

TodoStatus = Literal["pending", "in_progress", "completed"]
STATUSES: Final[tuple[str, ...]] = get_args(TodoStatus)
CHECKBOXES: Final[Mapping[str, str]] = {"pending": "☐", "in_progress": "◐", "completed": "☑"}


@dataclass(frozen=True, slots=True)
class TodoItem:
    """One step of the plan."""

    content: str
    """What is to be done (`Run the tests`)."""
    status: TodoStatus
    active_form: str = ""
    """How it reads while in progress (`Running the tests`); empty: `content`."""

    @property
    def label(self) -> str:
        """The text to show: the active form while in progress."""
        return self.active_form if self.status == "in_progress" and self.active_form else self.content


def plan_of(tool_input: Mapping[str, Any]) -> list[TodoItem]:
    """The plan a `todo_write` input sets; entries that are not todos are left out.

    Stored input is drawn as it was, whatever it holds, so nothing here trusts its shape.
    """
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return []
    items: list[TodoItem] = []
    for raw in cast("list[object]", todos):
        if not isinstance(raw, dict):
            continue
        entry = cast("dict[str, object]", raw)
        content, status, active = entry.get("content"), entry.get("status"), entry.get("activeForm", "")
        if isinstance(content, str) and isinstance(status, str) and status in STATUSES:
            items.append(
                TodoItem(content, cast("TodoStatus", status), active if isinstance(active, str) else "")
            )
    return items


def plan_progress(items: Sequence[TodoItem]) -> str:
    """`2/5 done`."""
    done = sum(item.status == "completed" for item in items)
    return f"{done}/{len(items)} done"


def todo_dicts(items: Sequence[TodoItem]) -> list[dict[str, str]]:
    """The plan in the tool's own shape (`content`, `status`, `activeForm`), for JSON."""
    return [
        {
            "content": item.content,
            "status": item.status,
            **({"activeForm": item.active_form} if item.active_form else {}),
        }
        for item in items
    ]
