"""Every help-desk pattern on all twelve tickets: the benchmark's table, in the TUI.

The runs use the deterministic `rules` leaves, so this is the same table `tui-assist bench
helpdesk` prints, byte for byte in its numbers: a summary per pattern, then one row per ticket
with what each pattern decided.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui_assist.flows.helpdesk import (
    PATTERN_NAMES,
    PATTERNS,
    PatternName,
    TicketResult,
    load_tickets,
    run_benchmark,
)


class HelpdeskResultsScreen(Screen[None]):
    """The results of all five patterns; escape goes back to the Explorer."""

    DEFAULT_CSS = """
    HelpdeskResultsScreen > #results-header {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    HelpdeskResultsScreen > DataTable {
        height: auto;
        max-height: 1fr;
        margin: 1 0 0 0;
    }
    """
    BINDINGS = [Binding("escape,q,f6", "close_results", "Back", id="close-results")]

    def __init__(self) -> None:
        super().__init__()
        self.results: list[TicketResult] = []

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                ("Help-desk benchmark", "$primary bold"),
                ("  ·  12 tickets, rules leaves (deterministic)", "$foreground 60%"),
            ),
            id="results-header",
        )
        yield DataTable(id="results-summary", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="results-tickets", cursor_type="row", zebra_stripes=True)
        yield Footer()

    async def on_mount(self) -> None:
        self.results = await run_benchmark()
        by_pattern: dict[PatternName, list[TicketResult]] = {
            name: [r for r in self.results if r.pattern == name] for name in PATTERN_NAMES
        }
        summary = self.query_one("#results-summary", DataTable)
        summary.add_columns("pattern", "correct", "steps", "how")
        for name, rows in by_pattern.items():
            summary.add_row(
                name,
                f"{sum(r.correct for r in rows)}/{len(rows)}",
                str(sum(r.steps for r in rows)),
                PATTERNS[name].summary,
                key=name,
            )
        tickets = self.query_one("#results-tickets", DataTable)
        tickets.add_columns("ticket", "expected")
        for name in PATTERN_NAMES:
            # Styled cells aren't measured for auto width: size the columns for "✗ hardware".
            tickets.add_column(name, width=max(len(name), 10), key=name)
        for ticket in load_tickets():
            cells: list[str | Content] = [f"#{ticket.id} {ticket.subject}", ticket.category]
            for name in PATTERN_NAMES:
                result = next(r for r in by_pattern[name] if r.ticket == ticket.id)
                style = "$success" if result.correct else "$error bold"
                cells.append(Content.styled(f"{'✓' if result.correct else '✗'} {result.got}", style))
            tickets.add_row(*cells, key=str(ticket.id))

    def action_close_results(self) -> None:
        self.dismiss(None)
