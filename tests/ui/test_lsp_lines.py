"""An edit's `LSP:` lines stay in sight where the UI cuts a long tool result."""

from __future__ import annotations

from tui_assist.core.tree import NodeRecord
from tui_assist.ui.widgets.node_inspector import inspector_content
from tui_assist.ui.widgets.turn_parts import ToolCallView

LSP_LINE = "LSP: mod.py:40:7: Undefined name `undefined_name` [F821]"
LONG_RESULT = "Edited mod.py. The edited region now reads:\n" + "\n".join(
    f"{n:6}\tx = {n}" for n in range(2_000)
)


def test_the_node_inspector_keeps_the_lsp_lines_of_a_long_result() -> None:
    record = NodeRecord(
        "tool-1", "round-1", "tool", "str_replace_based_edit_tool", output=f"{LONG_RESULT}\n{LSP_LINE}"
    )

    shown = inspector_content(record).plain

    assert len(shown) < len(record.output)
    assert shown.endswith(LSP_LINE)


def test_the_tool_calls_details_keep_the_lsp_lines_of_a_long_result() -> None:
    view = ToolCallView("tool-1", "str_replace_based_edit_tool", {"command": "str_replace", "path": "mod.py"})
    view.output = f"{LONG_RESULT}\n{LSP_LINE}"

    shown = view._body_content().plain

    assert "[… truncated]" in shown
    assert shown.endswith(LSP_LINE)
