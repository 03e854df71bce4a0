"""SVG snapshots of the Workflow Explorer (`tui-assist explore`) and its all-patterns results.

The patterns run their deterministic rules leaves; `fixed_clock` pins the events' stamps, which
are the only times the Explorer draws (its flow panel's "now" is the run's own clock), and the
runs are shown at once (`explorer_pace=0`) so no frame depends on a timer.

Update on purpose with `pytest tests/ui/test_snapshots_explorer.py --snapshot-update`, then look
at the report.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.explorer import ExplorerScreen
from tui_assist.ui.screens.helpdesk_results import HelpdeskResultsScreen
from tui_assist.ui.widgets.node_inspector import NodeInspector

from .helpers import settings, wait_until

SIZE = (120, 36)


def _app(theme: str = "tui-dark") -> TuiAssistApp:
    return TuiAssistApp(
        settings(theme=theme),
        provider_factory=lambda: ScriptedProvider([]),
        use_store=False,
        start="explore",
        explorer_pace=0,
    )


async def _explorer(pilot: Any) -> ExplorerScreen:
    app = pilot.app
    await app.session.wait_ready()
    await wait_until(pilot, lambda: isinstance(app.screen, ExplorerScreen))
    explorer = app.screen
    assert isinstance(explorer, ExplorerScreen)
    explorer.query_one("#ticket-text", Input).cursor_blink = False
    return explorer


async def _finish(pilot: Any, explorer: ExplorerScreen) -> None:
    await wait_until(pilot, lambda: explorer.last_result is not None)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _run(*keys: str, ticket: str | None = None) -> Callable[[Any], Awaitable[None]]:
    """Highlight a pattern with `keys`, then run it (on a packaged ticket, if given)."""

    async def run_before(pilot: Any) -> None:
        explorer = await _explorer(pilot)
        await pilot.press(*keys)
        if ticket is None:
            await pilot.press("f5")
        else:
            explorer.query_one("#tickets").focus()
            await pilot.press(ticket, "enter")
        await _finish(pilot, explorer)

    return run_before


@pytest.mark.parametrize("theme", ["tui-dark", "tui-light"])
def test_explorer_after_a_chain_run(snap_compare, fixed_clock, theme: str) -> None:
    """The default ticket through chain: every node done, the result line, the root inspected."""
    assert snap_compare(_app(theme), run_before=_run(), terminal_size=SIZE)


def test_explorer_router_on_a_packaged_ticket(snap_compare, fixed_clock) -> None:
    """Ticket 12 through the router: `Route → accounts` and the miss marked against `network`."""
    assert snap_compare(_app(), run_before=_run("down", ticket="end"), terminal_size=SIZE)


def test_explorer_vote_with_a_step_inspected(snap_compare, fixed_clock) -> None:
    """Vote fans out in parallel; clicking a voter's row shows what it was given and decided."""

    async def run_before(pilot: Any) -> None:
        await _run("down", "down")(pilot)
        explorer = pilot.app.screen
        assert isinstance(explorer, ExplorerScreen)
        rows = list(explorer.log_model.walk(explorer.flow.turn_id or ""))
        await pilot.click(explorer.flow, offset=(2, 2))
        await pilot.pause()
        assert explorer.query_one(NodeInspector).node_id == rows[2].node_id  # "most hits"

    assert snap_compare(_app(), run_before=run_before, terminal_size=SIZE)


def test_helpdesk_results(snap_compare, fixed_clock) -> None:
    """F6: every pattern on all twelve tickets, the summary above the per-ticket table."""

    async def run_before(pilot: Any) -> None:
        await _explorer(pilot)
        await pilot.press("f6")
        app = pilot.app
        await wait_until(pilot, lambda: isinstance(app.screen, HelpdeskResultsScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one("#results-tickets", DataTable).row_count == 12)
        await pilot.pause()

    assert snap_compare(_app(), run_before=run_before, terminal_size=(140, 36))
