"""Flows and MCP from the command palette: the grounded question (with approval) and MCP status."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Input

from tui_assist.core.tree import NodeLog
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.grounded_prompt import GroundedPromptScreen
from tui_assist.ui.session import ProviderUnavailable
from tui_assist.ui.widgets.conversation import Notice
from tui_assist.ui.widgets.flow_panel import FlowPanel

from .helpers import FakeToolbox, screen_text, settings, wait_until

CORPUS = Path(__file__).parents[1] / "flows" / "grounded_corpus"


def _no_provider() -> object:
    raise ProviderUnavailable("offline")


def offline_app(workdir: Path) -> TuiAssistApp:
    """A real store (under the test's XDG dirs) and no model: the grounded flow runs its rules."""
    return TuiAssistApp(
        settings(workdir),
        provider_factory=_no_provider,  # type: ignore[arg-type]
        toolbox_factory=lambda: FakeToolbox(workdir),
    )


async def run_palette(pilot, title: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+p")
    await pilot.press(*title)
    await pilot.pause(0.2)
    await pilot.press("enter")


def notices(app: TuiAssistApp) -> list[str]:
    return [n.source for n in app.screen.query(Notice)]


async def test_grounded_question_animates_the_flow_cites_and_approves(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    shutil.copytree(CORPUS, corpus)
    app = offline_app(corpus)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        main = app.main_screen

        # A question the docs answer: the flow panel draws the run, the answer cites its chunk.
        await run_palette(pilot, "flow: grounded question")
        await wait_until(pilot, lambda: isinstance(app.screen, GroundedPromptScreen))
        assert app.screen.query_one("#grounded-corpus", Input).value == str(corpus)
        await pilot.press(*"How much can I spend on a hotel per night in London?", "enter")
        await wait_until(pilot, lambda: any("**grounded** · `answered`" in n for n in notices(app)))
        flow = main.query_one(FlowPanel)
        log: NodeLog = main.log_model
        root = log.nodes[flow.turn_id or ""]
        assert (root.kind, root.label, root.status) == ("flow", "grounded", "done")
        labels = [r.label for r in log.walk(root.node_id)]
        assert {"classify", "retrieve #1", "answer", "check citations", "release"} <= set(labels)
        answer = notices(app)[-1]
        assert "London 180 GBP" in answer and "`[handbook-travel#c0004]`" in answer
        assert "grounded" in screen_text(app)
        assert main.held_run_id is None

        # A question that drafts an email is held: nothing is sent until f8 approves it.
        await run_palette(pilot, "flow: grounded question")
        await wait_until(pilot, lambda: isinstance(app.screen, GroundedPromptScreen))
        await pilot.press(*"Draft an email to my manager asking for approval of my business travel", "enter")
        await wait_until(pilot, lambda: main.held_run_id is not None)
        held = notices(app)[-1]
        assert "`awaiting_approval`" in held and "Held for approval" in held and "**f8**" in held
        run_id = main.held_run_id
        assert run_id is not None
        await pilot.press("f8")
        await wait_until(pilot, lambda: notices(app)[-1].startswith("**approved**"))
        assert main.held_run_id is None
        approved = notices(app)[-1]
        assert "`answered`" in approved and "Subject: Business travel" in approved
        row = await app.session.store.get_flow_run(run_id)
        assert row is not None and row.outcome == "answered"
        await pilot.press("f8")  # nothing is held any more: f8 does nothing
        await pilot.pause()
        assert notices(app)[-1] == approved


async def test_mcp_palette_with_no_servers(tmp_path: Path) -> None:
    app = offline_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await run_palette(pilot, "mcp: list servers")
        await wait_until(pilot, lambda: any("MCP servers" in n for n in notices(app)))
        assert "no MCP servers configured" in notices(app)[-1]
        assert "no MCP servers configured" in screen_text(app)
        await run_palette(pilot, "mcp: restart server")
        await wait_until(pilot, lambda: any("no MCP servers" in n.message for n in app._notifications))


async def test_choosing_a_flow_panel_row_inspects_its_inputs_and_outputs(tmp_path: Path) -> None:
    from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted
    from tui_assist.ui.widgets.node_inspector import NodeInspector

    app = offline_app(tmp_path)
    async with app.run_test(size=(120, 34)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        main = app.main_screen
        inspector = main.query_one(NodeInspector)
        assert inspector.has_class("-empty")
        for event in (
            NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="agent turn", detail="list it"),
            ToolCallStarted(node_id="x", parent_id="t", call_id="c", name="bash", input={"command": "ls"}),
            ToolCallFinished(
                node_id="x", call_id="c", name="bash", output="notes.txt", is_error=False, duration=0.2
            ),
            NodeFinished(node_id="t", outcome="answered", output="One file."),
        ):
            main.apply_event(event, replay=True)
        await pilot.pause()
        await pilot.click(FlowPanel, offset=(3, 1))
        await pilot.pause()
        assert inspector.node_id == "x" and not inspector.has_class("-empty")
        shown = str(inspector.render())
        assert '{"command": "ls"}' in shown and "notes.txt" in shown
        await pilot.click(FlowPanel, offset=(3, 0))
        assert inspector.node_id == "t"
        assert "list it" in str(inspector.render()) and "One file." in str(inspector.render())
