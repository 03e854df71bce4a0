"""The main screen at the sizes people use, and labels that say what they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.helpers import make_app, screen_text
from tests.ui.test_snapshots import _app as refine_app
from tests.ui.test_snapshots import _run_turn
from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted, TurnEvent
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.status_bar import StatusBar

FOOTER_KEYS = (
    "^r Refine",
    "^o Resume",
    "f2 Tree",
    "f3 Flow",
    "f4 Review",
    "f5 Copy",
    "^q Quit",
    "^p palette",
)


def _lines(app) -> list[str]:
    return screen_text(app).rstrip("\n").splitlines()


@pytest.mark.parametrize("width", [80, 90, 99])
async def test_below_100_columns_the_panels_wait_behind_f2_and_footer_and_status_bar_are_whole(
    fixed_clock, width: int
) -> None:
    app = refine_app("tui-dark")
    async with app.run_test(size=(width, 24)) as pilot:
        await _run_turn(pilot)
        *_, status, footer = _lines(app)
        assert all(key in footer for key in FOOTER_KEYS), footer
        assert "Refine ON" in status and status.rstrip().endswith("/work/project")
        assert app.query_one("#side").region.width == 0

        await pilot.press("f2")
        await pilot.pause()
        side, chat = app.query_one("#side").region, app.query_one("#chat").region
        assert chat.width > 0 and 30 <= side.width <= 36  # beside the chat, narrow
        tree = app.query_one(AgentTree)
        assert tree.virtual_size.width <= tree.scrollable_content_region.width  # nothing to scroll to
        assert not tree.show_horizontal_scrollbar
        flow = app.query_one(FlowPanel)
        assert flow.size.height == len(list(flow.node_log.walk(flow.turn_id or "")))  # one line a row
        for line in _lines(app)[:-2]:
            assert len(line) <= width


async def test_at_100_columns_and_more_the_panels_are_open(fixed_clock) -> None:
    app = refine_app("tui-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await _run_turn(pilot)
        assert app.query_one("#side").region.width >= 32
        *_, status, footer = _lines(app)
        assert all(key in footer for key in FOOTER_KEYS)
        # Beside the mode (spelled in full), the sandbox and the context fill, the token counts take
        # their short form, then the model's name goes (the fill stays: it matters more).
        assert "cache r0 w0" in status and " default " in status and " ctx 0%" in status
        assert status.rstrip().endswith("/work/project")


async def test_the_status_bar_keeps_the_end_of_a_long_workdir(tmp_path: Path) -> None:
    app = make_app([])
    async with app.run_test(size=(80, 24)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        status = app.query_one(StatusBar)
        status.workdir = Path("/srv/builds/customer-portal/services/payments-gateway")
        status.model = "claude-sonnet-4-6-with-a-long-suffix"
        await pilot.pause()
        line = _lines(app)[-2]
        assert "Refine OFF" in line
        assert line.rstrip().endswith("…/services/payments-gateway") or line.rstrip().endswith(
            "payments-gateway"
        )
        assert "…" in line  # what was clipped says so


def _events(turn: str, prompt: str) -> list[TurnEvent]:
    """An agent turn whose loop runs the `agent` tool: a sub-agent with its description."""
    loop, call, sub = f"{turn}.loop", f"{turn}.call", f"{turn}.sub"
    return [
        NodeStarted(node_id=turn, parent_id=None, node_kind="turn", label="agent turn", detail=prompt),
        NodeStarted(node_id=loop, parent_id=turn, node_kind="agent", label="agent", detail=prompt),
        ToolCallStarted(
            node_id=call,
            parent_id=loop,
            call_id="c1",
            name="agent",
            input={"description": "survey the tests", "prompt": "list them"},
        ),
        NodeStarted(
            node_id=sub, parent_id=call, node_kind="agent", label="survey the tests", detail="list them"
        ),
        NodeFinished(node_id=sub, outcome="answered", output="12 tests"),
        ToolCallFinished(node_id=call, call_id="c1", name="agent", output="12 tests"),
        NodeFinished(node_id=loop, outcome="answered", output="done"),
        NodeFinished(node_id=turn, outcome="answered", output="done"),
    ]


async def test_a_turn_its_loop_and_a_sub_agent_are_named_apart_and_the_tree_shows_the_prompt() -> None:
    app = make_app([])
    async with app.run_test(size=(120, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        screen = app.main_screen
        prompt = (
            "why does the nightly build fail on the arm64 runners since Tuesday's merge of the cache work?"
        )
        screen.conversation.begin_turn(prompt, "agent")
        for event in _events("t1", prompt):
            screen.apply_event(event)
        await pilot.pause()
        flow = app.query_one(FlowPanel)
        names = [flow.name_of(record) for record in flow.node_log.walk("t1")]
        assert names == ["Agent turn", "agent loop", "agent: survey the tests", "sub-agent: survey the tests"]

        tree = app.query_one(AgentTree)
        turn_line = next(line for line in _lines(app) if "why does the nightly" in line)
        assert "…" in turn_line  # the prompt is clipped to the panel, with an ellipsis
        label = tree.label_text(flow.node_log.nodes["t1"]).plain
        assert prompt in label


async def test_nested_chains_are_named_by_their_steps() -> None:
    app = make_app([])
    async with app.run_test(size=(120, 30)) as pilot:
        await app.session.wait_ready()
        flow = app.main_screen.flow
        log = flow.node_log
        # a.then(b).then(c): Chain(Chain(a, b), c)
        for event in [
            NodeStarted(node_id="f", parent_id=None, node_kind="chain", label="chain"),
            NodeStarted(node_id="f.1", parent_id="f", node_kind="chain", label="chain"),
            NodeStarted(node_id="a", parent_id="f.1", node_kind="step", label="normalize"),
            NodeStarted(node_id="b", parent_id="f.1", node_kind="step", label="extract"),
            NodeStarted(node_id="c", parent_id="f", node_kind="step", label="draft"),
        ]:
            log.apply(event)
        await pilot.pause()
        assert [flow.name_of(r) for r in log.walk("f")] == [
            "Chain … → draft",
            "Chain normalize → extract",
            "normalize",
            "extract",
            "draft",
        ]


@pytest.mark.parametrize("width", [80, 140])
async def test_the_status_bar_names_the_mode_as_the_flag_spells_it(width: int) -> None:
    app = make_app([], mode="accept-edits")
    async with app.run_test(size=(width, 24)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        seen = []
        for _ in range(4):
            await pilot.pause()
            status = _lines(app)[-2]
            seen.append(next(m for m in ("accept-edits", "plan", "bypass", "default") if f" {m} " in status))
            assert "Refine OFF" in status and status.rstrip().endswith("/work/project")
            await pilot.press("shift+tab")
        assert seen == ["accept-edits", "plan", "default", "accept-edits"]
        assert " edits " not in status and " ask " not in status
