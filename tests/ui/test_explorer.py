from __future__ import annotations

from textual.widgets import DataTable, Input, Static

from tui_assist.cli import build_parser
from tui_assist.flows.helpdesk import DEFAULT_TICKET_TEXT
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.explorer import ExplorerScreen
from tui_assist.ui.screens.helpdesk_results import HelpdeskResultsScreen
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.node_inspector import NodeInspector

from .helpers import screen_text, settings, wait_until


def explorer_app(pace: float) -> TuiAssistApp:
    return TuiAssistApp(
        settings(),
        provider_factory=lambda: ScriptedProvider([]),  # the Explorer makes no model calls
        use_store=False,
        start="explore",
        explorer_pace=pace,
    )


def test_explore_is_a_command() -> None:
    assert build_parser().parse_args(["explore", "--theme", "x"]).command == "explore"


async def test_explorer_animates_a_run_from_the_event_stream() -> None:
    app = explorer_app(pace=0.05)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ExplorerScreen))
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen)
        assert explorer.query_one("#ticket-text", Input).value == DEFAULT_TICKET_TEXT
        assert explorer.pattern == "chain"

        await pilot.press("f5")
        flow = explorer.query_one(FlowPanel)
        # The tree grows node by node: caught part-way, the root runs and nodes are still to come.
        await wait_until(pilot, lambda: len(explorer.log_model.nodes) >= 3)
        partway = len(list(explorer.log_model.walk(flow.turn_id or "")))
        assert 3 <= partway < 7
        assert explorer.log_model.nodes[flow.turn_id or ""].status == "running"
        assert explorer.last_result is None
        # "Now" is the run's own time as far as the playback has got, not the wall clock: the
        # running nodes' bars end where the latest node shown does, on one axis with the rest.
        shown = list(explorer.log_model.walk(flow.turn_id or ""))
        latest = max(r.finished_at or r.started_at for r in shown)
        assert flow.clock() == explorer.playback_time() == latest

        await wait_until(pilot, lambda: explorer.last_result is not None)
        rows = list(explorer.log_model.walk(flow.turn_id or ""))
        # chain(chain(chain(normalize, extract), categorize), draft): the composition as built.
        assert [(explorer.log_model.depth(r.node_id), r.kind, r.label) for r in rows] == [
            (0, "chain", "chain"),
            (1, "chain", "chain"),
            (2, "chain", "chain"),
            (3, "step", "normalize"),
            (3, "step", "extract"),
            (2, "step", "categorize"),
            (1, "step", "draft"),
        ]
        assert all(r.status == "done" for r in rows)
        text = screen_text(app)
        for label in ("Chain", "normalize", "extract", "categorize", "draft"):
            assert label in text
        assert explorer.last_result is not None
        assert (explorer.last_result.pattern, explorer.last_result.got) == ("chain", "network")
        assert "chain → network" in str(explorer.query_one("#explorer-result", Static).render())

        # Selecting a node shows what it was given and what it produced.
        inspector = explorer.query_one(NodeInspector)
        assert inspector.node_id == flow.turn_id
        draft = rows[-1]
        await pilot.click(FlowPanel, offset=(2, rows.index(draft)))
        assert inspector.node_id == draft.node_id
        inspected = str(inspector.render())
        assert "#0 → network" in inspected and "[network] Hi there" in inspected


async def test_explorer_runs_a_packaged_ticket_and_shows_every_pattern_on_one_key() -> None:
    app = explorer_app(pace=0)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ExplorerScreen))
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen)
        # The router on ticket 12 (a password and the VPN): first match honestly picks accounts.
        await pilot.press("down")  # router
        explorer.query_one("#tickets").focus()
        await pilot.press("end", "enter")
        await wait_until(pilot, lambda: explorer.last_result is not None)
        result = explorer.last_result
        assert result is not None
        assert (result.pattern, result.ticket, result.expected, result.got, result.correct) == (
            "router",
            12,
            "network",
            "accounts",
            False,
        )
        assert "✗ expected network" in str(explorer.query_one("#explorer-result", Static).render())

        await pilot.press("f6")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpdeskResultsScreen))
        results = app.screen
        await wait_until(pilot, lambda: results.query_one("#results-summary", DataTable).row_count == 5)
        summary = results.query_one("#results-summary", DataTable)
        assert [summary.get_row(name)[1] for name in ("router", "vote")] == ["10/12", "11/12"]
        tickets = results.query_one("#results-tickets", DataTable)
        assert tickets.row_count == 12
        assert str(tickets.get_row("12")[3]) == "✗ accounts"

        await pilot.press("escape")
        assert app.screen is explorer
        await pilot.press("escape")
        assert not isinstance(app.screen, ExplorerScreen)
