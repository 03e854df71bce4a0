"""The plan in the TUI: each `todo_write` is a live checklist in the conversation, and the agent's
plan rows in the tree; both fold, and both are drawn again when the conversation resumes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.style import Style

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tests.ui.helpers import FakeToolbox, make_app, screen_text, settled, wait_until
from tui_assist.core.conversation import TextBlock, ToolUseBlock
from tui_assist.session.config import ApprovalSettings, Settings
from tui_assist.tools.todo import TodoWriteTool
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import StartOptions
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.plan import PlanView
from tui_assist.ui.widgets.prompt import Prompt


def todo(*statuses: str) -> ToolUse:
    steps = ("Read the code", "Run the tests")
    return ToolUse(
        "todo_write", {"todos": [{"content": c, "status": s} for c, s in zip(steps, statuses, strict=True)]}
    )


def checklists(app: TuiAssistApp) -> list[list[str]]:
    return [[item.status for item in view.items] for view in app.query(PlanView)]


def sdk_app(fake: FakeAnthropic, tmp_path: Path, start: StartOptions | None = None) -> TuiAssistApp:
    """The app on the real SDK against `fake`, storing in `tmp_path` (the same store each time)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    settings = Settings(
        provider="anthropic",
        workdir=work,
        data_dir=tmp_path / "data",
        approval=ApprovalSettings(default="ask"),
        sandbox="off",
        checkpoints=False,
    )
    return TuiAssistApp(settings, chat_start=start)


def planner(tree: AgentTree) -> str | None:
    """The node id of the agent whose `todo_write` calls the tree shows."""
    calls = [r for r in tree.node_log.nodes.values() if r.tool_name == "todo_write"]
    return calls[-1].parent_id if calls else None


def plan_rows(tree: AgentTree) -> list[str]:
    """The agent's plan as the tree draws it: the `Plan` row, then one row per step."""
    node = tree.plan_node(planner(tree) or "")
    if node is None:
        return []
    rows = [node, *node.children]
    return [tree.render_label(row, Style(), Style()).plain.strip() for row in rows]


def drawn(tree: AgentTree) -> str:
    """The tree's lines as drawn (through its line cache: a row not refreshed shows its old text)."""
    return "\n".join(tree.render_line(y).text for y in range(tree.size.height))


async def test_the_plan_ticks_off_live_and_comes_back_on_resume(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    fake.add(
        Reply([todo("in_progress", "pending")]), Reply([todo("completed", "in_progress")]), Reply("Done.")
    )

    def make(start: StartOptions | None = None) -> TuiAssistApp:
        return sdk_app(fake, tmp_path, start)

    app = make()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"plan it", "enter")  # never asked: the plan changes nothing
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: len(checklists(app)) == 2)
        assert checklists(app) == [["in_progress", "pending"], ["completed", "in_progress"]]
        await wait_until(pilot, lambda: "Plan 1/2 done" in screen_text(app))
        assert "☑ Read the code" in screen_text(app) and "◐ Run the tests" in screen_text(app)
        conversation_id = app.session.conversation_id
    assert conversation_id is not None

    resumed = make(StartOptions(resume=conversation_id))
    async with resumed.run_test(size=(120, 40)) as pilot:
        await resumed.session.wait_ready()
        await wait_until(pilot, lambda: len(checklists(resumed)) == 2)
        assert checklists(resumed)[-1] == ["completed", "in_progress"]


async def test_the_agent_tree_shows_the_plan_as_rows_that_tick_off_fold_and_resume(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    # The turn waits before each of the last two plans, so the test sees the one before it drawn.
    second = Reply([todo("completed", "in_progress")], hold_after=1)
    third = Reply([todo("completed", "completed")], hold_after=1)
    fake.add(Reply([todo("in_progress", "pending")]), second, third, Reply("Done."))

    app = sdk_app(fake, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"plan it", "enter")
        await wait_until(pilot, second.held.is_set)
        tree = app.query_one(AgentTree)
        await wait_until(pilot, lambda: len(plan_rows(tree)) == 3)
        assert plan_rows(tree) == ["▼ ☰ Plan 0/2 done", "◐ Read the code", "☐ Run the tests"]
        agent = planner(tree)
        assert agent is not None and tree.node_log.nodes[agent].kind == "agent"
        plan = tree.plan_node(agent)
        assert plan is not None and plan.is_expanded
        owner = tree.node_for(agent)
        assert owner is not None and plan.parent is owner
        assert owner.children[0] is plan  # above the agent's tool calls
        await wait_until(pilot, lambda: "◐ Read the code" in drawn(tree) and "☐ Run the tests" in drawn(tree))

        # The user folds it and opens it again, as any node of the tree.
        tree.focus()
        tree.move_cursor(plan)
        await pilot.press("enter")
        await wait_until(pilot, lambda: not plan.is_expanded)
        assert plan_rows(tree)[0] == "▶ ☰ Plan 0/2 done"
        await wait_until(pilot, lambda: "◐ Read the code" not in drawn(tree))
        await pilot.press("enter")
        await wait_until(pilot, lambda: plan.is_expanded)

        second.release()
        await wait_until(pilot, third.held.is_set)
        await wait_until(pilot, lambda: "☑ Read the code" in drawn(tree) and "◐ Run the tests" in drawn(tree))
        assert "☐ Run the tests" not in drawn(tree)
        assert tree.plan_node(agent) is plan  # one plan per agent, however many calls set it

        third.release()
        await app.workers.wait_for_complete()
        # The agent is done: its plan folds to its progress.
        await wait_until(pilot, lambda: not plan.is_expanded)
        assert plan_rows(tree)[0] == "▶ ☰ Plan 2/2 done"
        plan.expand()
        await wait_until(pilot, lambda: "☑ Read the code" in drawn(tree) and "☑ Run the tests" in drawn(tree))

        # The checklist in the conversation folds too.
        view = list(app.query(PlanView))[-1]
        assert view.has_class("-expanded")
        view.focus()
        await pilot.press("enter")
        assert not view.has_class("-expanded")
        await pilot.press("enter")
        assert view.has_class("-expanded")
        conversation_id = app.session.conversation_id
    assert conversation_id is not None

    resumed = sdk_app(fake, tmp_path, StartOptions(resume=conversation_id))
    async with resumed.run_test(size=(120, 40)) as pilot:
        await resumed.session.wait_ready()
        await wait_until(
            pilot, lambda: resumed.screen.query(AgentTree) and plan_rows(resumed.query_one(AgentTree))
        )
        tree = resumed.query_one(AgentTree)
        assert plan_rows(tree) == ["▶ ☰ Plan 2/2 done", "☑ Read the code", "☑ Run the tests"]
        stored = tree.plan_node(planner(tree) or "")
        assert stored is not None and not stored.is_expanded
        stored.expand()
        assert plan_rows(tree)[0] == "▼ ☰ Plan 2/2 done"


def _plan_app() -> TuiAssistApp:
    """A scripted agent turn that sets a plan twice, then answers."""
    steps = ("Read the code", "Fix the bug", "Run the tests")

    def call(call_id: str, *statuses: str) -> list[Any]:
        todos = [{"content": c, "status": s} for c, s in zip(steps, statuses, strict=True)]
        return [TextBlock("Planning."), ToolUseBlock(call_id, "todo_write", {"todos": todos})]

    script = [
        call("toolu_1", "in_progress", "pending", "pending"),
        call("toolu_2", "completed", "in_progress", "pending"),
        [TextBlock("Half way there.")],
    ]
    toolbox = PlanToolbox(Path("/work/project"))
    return make_app(script, toolbox_factory=lambda: toolbox)


@dataclass
class PlanToolbox(FakeToolbox):
    @property
    def tools(self) -> Sequence[Any]:
        return (self.shell, TodoWriteTool())


def test_the_plan_in_the_tree_and_the_conversation(snap_compare, fixed_clock) -> None:
    async def run_turn_and_open_the_plan(pilot) -> None:
        app = pilot.app
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        app.query_one(Prompt).cursor_blink = False
        await pilot.press(*"fix it", "enter")
        await app.workers.wait_for_complete()
        tree = app.query_one(AgentTree)
        await wait_until(pilot, lambda: tree.plan_node(planner(tree) or "") is not None)
        plan = tree.plan_node(planner(tree) or "")
        assert plan is not None
        plan.expand()  # folded when the agent ended
        await settled(pilot)

    assert snap_compare(_plan_app(), run_before=run_turn_and_open_the_plan, terminal_size=(110, 34))
