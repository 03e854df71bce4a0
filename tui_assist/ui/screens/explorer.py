"""The Workflow Explorer: run one help-desk pattern on a ticket and watch its composition run.

Everything here is offline: the patterns run with their deterministic `rules` leaves. The run
reports through the same `TextualObserver` a chat turn uses, and its events are folded into a
`NodeLog` that the reused `FlowPanel` draws. A rules run finishes at once, so the screen
plays the event stream back at `pace` seconds per node event: the tree grows as the run went,
in the order it went, instead of appearing all at once.

Played back, "now" is the run's own time as far as the playback has got (the stamp of the latest
event shown), not the wall clock: a running node's bar ends where the run had got to, on the same
axis as the finished ones, rather than stretching to a moment long after the run ended. Nothing
on this screen reads the wall clock, so a run's frame depends only on its events' stamps.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted, TurnEvent
from tui_assist.core.tree import NodeLog, NodeRecord
from tui_assist.flows.helpdesk import (
    DEFAULT_TICKET_TEXT,
    PATTERN_NAMES,
    PATTERNS,
    PatternName,
    Ticket,
    TicketResult,
    load_tickets,
    run_pattern,
)
from tui_assist.ui.bridge import CoreEvent, TextualObserver
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.node_inspector import NodeInspector

TYPED_TICKET = "typed"
"""The ticket option that runs the text in the input box."""


class ExplorerScreen(Screen[None]):
    """Pick a pattern and a ticket, run it, watch the flow panel; F6 shows all patterns' results."""

    CSS_PATH = "explorer.tcss"
    AUTO_FOCUS = "#patterns"
    BINDINGS = [
        Binding("f5", "run_pattern", "Run", id="run-pattern"),
        Binding("f6", "show_results", "All results", id="show-results"),
        Binding("escape", "close_explorer", "Back to chat", id="close-explorer"),
    ]

    def __init__(self, *, pace: float = 0.12) -> None:
        super().__init__()
        self.pace = pace
        """Seconds between node events on screen (0 shows each event as it arrives)."""
        self.log_model = NodeLog(max_turns=20)
        self.pattern: PatternName = PATTERN_NAMES[0]
        self.ticket_choice: str = TYPED_TICKET
        self.last_result: TicketResult | None = None
        """The result of the latest run, once its events are all on screen."""
        self._pending: deque[TurnEvent] = deque()
        self._finished: TicketResult | None = None
        self._timer: Timer | None = None
        self._shown_at = 0.0
        """The stamp of the latest event on screen: the playback's "now" on the run's own clock."""

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                ("Workflow Explorer", "$primary bold"),
                ("  ·  the five help-desk patterns, offline (rules leaves)", "$foreground 60%"),
            ),
            id="explorer-header",
        )
        with Horizontal(id="explorer-body"):
            with Vertical(id="explorer-choices"):
                yield Static("pattern", classes="explorer--title")
                yield OptionList(*(Option(name, id=name) for name in PATTERN_NAMES), id="patterns")
                yield Static(PATTERNS[self.pattern].summary, id="pattern-summary")
                yield Static("ticket", classes="explorer--title")
                yield OptionList(
                    Option("the text below", id=TYPED_TICKET),
                    *(Option(f"#{t.id} {t.subject}", id=str(t.id)) for t in load_tickets()),
                    id="tickets",
                )
            with Vertical(id="explorer-run"):
                yield Input(DEFAULT_TICKET_TEXT, placeholder="a ticket to run", id="ticket-text")
                yield Static("flow", classes="explorer--title")
                with VerticalScroll(id="explorer-flow-scroll"):
                    yield FlowPanel(self.log_model, id="explorer-flow")
                yield Static(
                    "Pick a pattern (enter runs it) or press F5. F6 shows every pattern on all 12 tickets.",
                    id="explorer-result",
                )
                yield NodeInspector(id="explorer-inspector")
        yield Footer()

    @property
    def flow(self) -> FlowPanel:
        return self.query_one("#explorer-flow", FlowPanel)

    def on_mount(self) -> None:
        self.flow.clock = self.playback_time
        if self.pace > 0:
            self._timer = self.set_interval(self.pace, self._play_next, pause=True)

    # -- choices ---------------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#patterns")
    def _pattern_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._choose_pattern(event.option.id)

    @on(OptionList.OptionSelected, "#patterns")
    def _pattern_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose_pattern(event.option.id)
        self.action_run_pattern()

    def _choose_pattern(self, option_id: str | None) -> None:
        for name in PATTERN_NAMES:
            if name == option_id:
                self.pattern = name
                self.query_one("#pattern-summary", Static).update(PATTERNS[name].summary)

    @on(OptionList.OptionSelected, "#tickets")
    def _ticket_selected(self, event: OptionList.OptionSelected) -> None:
        self.ticket_choice = event.option.id or TYPED_TICKET
        ticket = self._packaged_ticket()
        if ticket is not None:
            self.query_one("#ticket-text", Input).value = ticket.body
        self.action_run_pattern()

    @on(Input.Submitted, "#ticket-text")
    def _ticket_typed(self) -> None:
        self.action_run_pattern()

    def _packaged_ticket(self) -> Ticket | None:
        return next((t for t in load_tickets() if str(t.id) == self.ticket_choice), None)

    def ticket(self) -> Ticket:
        """The ticket to run: the packaged one chosen (if its text is untouched), else the typed text."""
        text = self.query_one("#ticket-text", Input).value.strip() or DEFAULT_TICKET_TEXT
        packaged = self._packaged_ticket()
        if packaged is not None and packaged.body == text:
            return packaged
        return Ticket.from_text(text)

    # -- running ---------------------------------------------------------------------------------

    def action_run_pattern(self) -> None:
        self._pending.clear()
        self._finished = None
        self.last_result = None
        self.query_one("#explorer-result", Static).update(
            Content.styled(f"running {self.pattern}…", "$warning")
        )
        self.run_selected(self.pattern, self.ticket())

    @work(exclusive=True, group="explore", exit_on_error=False)
    async def run_selected(self, name: PatternName, ticket: Ticket) -> None:
        result = await run_pattern(name, ticket, TextualObserver(self, self.app))
        # Posted after the run's events, so it is handled after all of them.
        self.call_later(self._run_finished, result)

    def _run_finished(self, result: TicketResult) -> None:
        self._finished = result
        self._settle()

    @on(CoreEvent)
    def _queue_event(self, message: CoreEvent) -> None:
        self._pending.append(message.deliver())
        if self._timer is None:
            self._play_all()
        else:
            self._timer.resume()

    def _play_all(self) -> None:
        while self._pending:
            self._apply(self._pending.popleft())
        self._settle()

    def _play_next(self) -> None:
        """One timer tick: apply events up to and including the next node start or finish."""
        while self._pending:
            event = self._pending.popleft()
            self._apply(event)
            if isinstance(event, NodeStarted | NodeFinished):
                break
        self._settle()

    def playback_time(self) -> float:
        """The run's time as far as the playback has got: the stamp of the latest event shown."""
        return self._shown_at

    def _apply(self, event: TurnEvent) -> None:
        if isinstance(event, NodeStarted | NodeFinished | ToolCallStarted | ToolCallFinished):
            self._shown_at = max(self._shown_at, event.at)
        self.log_model.apply(event)
        if isinstance(event, NodeStarted) and event.parent_id is None:
            self.flow.show_turn(event.node_id)
            self.flow.select(event.node_id)
        else:
            self.flow.changed()
        self._inspect(self.flow.selected)

    def _settle(self) -> None:
        if self._pending:
            return
        if self._timer is not None:
            self._timer.pause()
        result = self._finished
        if result is None:
            return
        self._finished = None
        self.last_result = result
        self.query_one("#explorer-result", Static).update(_result_content(result))

    # -- inspecting ------------------------------------------------------------------------------

    @on(FlowPanel.NodeChosen)
    def _node_chosen(self, event: FlowPanel.NodeChosen) -> None:
        self._inspect(event.node_id)

    def _inspect(self, node_id: str | None) -> None:
        record: NodeRecord | None = self.log_model.nodes.get(node_id or "")
        self.query_one(NodeInspector).show(record, self.flow.name_of(record) if record else None)

    # -- other screens ---------------------------------------------------------------------------

    def action_show_results(self) -> None:
        from tui_assist.ui.screens.helpdesk_results import HelpdeskResultsScreen

        self.app.push_screen(HelpdeskResultsScreen())

    def action_close_explorer(self) -> None:
        self.workers.cancel_group(self, "explore")
        self.dismiss(None)


def _result_content(result: TicketResult) -> Content:
    parts: list[Any] = [(f"{result.pattern}", "$primary bold"), " → ", (result.got, "bold")]
    if result.expected:
        mark, style = ("✓", "$success bold") if result.correct else ("✗", "$error bold")
        parts += ["  ", (f"{mark} expected {result.expected}", style)]
    parts += [(f"  ·  {result.steps} steps  ·  {result.detail}", "$foreground 70%")]
    if result.error:
        parts += [("  " + result.error, "$error")]
    return Content.assemble(*parts)
