"""`todo_write`: the plan is validated, acknowledged, and read back from the call's input."""

from __future__ import annotations

import pytest

from tui_assist.core.plan import TodoItem, plan_of, plan_progress, todo_dicts
from tui_assist.core.tool_labels import tool_title
from tui_assist.core.tooling import ToolContext, ToolInputError
from tui_assist.tools.todo import TodoWriteTool

TODOS = {
    "todos": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
        {"content": "Fix what fails", "status": "pending"},
    ]
}


async def test_a_plan_is_acknowledged_and_read_back_from_the_input(ctx: ToolContext) -> None:
    tool = TodoWriteTool()
    items = tool.parse(TODOS)
    assert not tool.side_effecting(items) and tool.summary(items) == "plan: 1/3 done"
    output = await tool.run(items, ctx)
    assert not output.is_error and "in progress: Run the tests" in output.content
    assert plan_of(TODOS) == items
    assert [item.label for item in items] == ["Read the code", "Running the tests", "Fix what fails"]
    assert todo_dicts(items) == TODOS["todos"]


@pytest.mark.parametrize(
    "raw",
    [
        {"todos": [{"content": "x", "status": "done"}]},
        {"todos": [{"content": "", "status": "pending"}]},
        {"todos": [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]},
        {},
    ],
)
def test_a_malformed_plan_is_refused_with_a_message(raw: dict[str, object]) -> None:
    with pytest.raises(ToolInputError, match="todo_write"):
        TodoWriteTool().parse(raw)


def test_stored_input_that_is_not_a_plan_draws_what_it_can() -> None:
    assert plan_of({"todos": "nope"}) == []
    assert plan_of({"todos": [{"content": "a", "status": "pending"}, 3, {"status": "pending"}]}) == [
        TodoItem("a", "pending")
    ]
    assert plan_progress([]) == "0/0 done"


def test_the_title_of_a_plan_call_says_where_the_plan_stands() -> None:
    assert tool_title("todo_write", TODOS) == "plan 1/3 done: Running the tests"
    assert (
        tool_title("bash", {"command": "npm run dev", "run_in_background": True})
        == "bash (background): npm run dev"
    )
