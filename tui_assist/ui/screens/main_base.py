"""The main screen's base: its widgets, the state its parts share, and how core events reach them.

`MainScreen` is built from parts that each hold one kind of action: sending turns (`main_turns`),
choosing the conversation (`main_conversations`), flows, MCP and the export (`main_flows`). They
all build on this class, which gives them the widgets (the agent tree is mounted with the first
turn), the state they share, and `apply_event`: the one path by which a core event, live or
replayed from the store, reaches the conversation, the agent tree and the flow panel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import on
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui_assist.core.events import NodeStarted, TextDelta, ThinkingDelta, TurnEvent, UsageRecorded
from tui_assist.ui.bridge import CoreEvent
from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.node_inspector import NodeInspector
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui_assist.core.tree import NodeLog
    from tui_assist.session.chat import ChatSession
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.main import MainScreen
    from tui_assist.ui.slash_commands import SlashCommands
    from tui_assist.ui.widgets.agent_tree import AgentTree

TREE_HINT = "agent tree · empty until the first turn"


class MainScreenBase(Screen[None]):
    """The chat screen's widgets and shared state; core events pushed down to the widgets."""

    session: ChatSession
    log_model: NodeLog
    """Every node of every turn shown, for the agent tree, the flow panel and the inspector."""
    held_run_id: str | None
    """A grounded run awaiting approval (f8 approves it)."""
    failed_prompt: str | None
    """The prompt of the last turn, when it failed (f6 sends it again)."""
    _turn_worker: Worker[None] | None
    """The worker of the running turn (or flow run, or resume): one at a time."""
    _flow_running: bool
    _flow_roots: set[str]
    """Roots of flow runs: their events go to the tree and flow panel, not the conversation."""
    _slash: SlashCommands | None
    _tree: AgentTree | None
    """The agent tree once mounted (kept: most events reach it, and a query walks every widget)."""

    # -- widgets --------------------------------------------------------------------------------

    @property
    def slash(self) -> SlashCommands:
        """The slash commands: the built-ins and the custom ones on disk."""
        if self._slash is None:
            from tui_assist.ui.slash_commands import SlashCommands

            self._slash = SlashCommands(cast("MainScreen", self))  # the only subclass shown
        return self._slash

    @property
    def tui_app(self) -> TuiAssistApp:
        return cast("TuiAssistApp", self.app)

    @property
    def conversation(self) -> Conversation:
        return self.query_one(Conversation)

    @property
    def agent_tree(self) -> AgentTree:
        """The agent tree, mounted on first use: until the first turn only its title shows (and
        Textual's `Tree` is not even imported before the first frame)."""
        if self._tree is None:
            from tui_assist.ui.widgets.agent_tree import AgentTree

            self._tree = AgentTree(self.log_model, id="tree")
            self.query_one("#side").mount(self._tree, after="#tree-title")
        return self._tree

    def _clear_tree(self) -> None:
        if self._tree is not None:
            self._tree.clear_turns()

    @property
    def flow(self) -> FlowPanel:
        return self.query_one(FlowPanel)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def prompt(self) -> Prompt:
        return self.query_one(Prompt)

    @property
    def running(self) -> bool:
        """Whether a turn (or a flow run) is under way."""
        return self._turn_worker is not None and self._turn_worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    # -- core events ----------------------------------------------------------------------------

    @on(CoreEvent)
    def _route(self, message: CoreEvent) -> None:
        self.apply_event(message.deliver())

    def apply_event(self, event: TurnEvent, *, replay: bool = False) -> None:
        """Push one core event down to the widgets (`replay`: from the store, not spent now)."""
        record = self.log_model.apply(event)
        if isinstance(event, NodeStarted) and event.parent_id is None and self._flow_running:
            self._flow_roots.add(event.node_id)
        if self.log_model.turn_id_of(event.node_id) not in self._flow_roots:
            self.conversation.apply(event)
        if isinstance(event, TextDelta | ThinkingDelta):
            return
        self.agent_tree.apply(event, record)
        if isinstance(event, NodeStarted) and event.parent_id is None:
            self._show_fresh(False)
            self.flow.show_turn(event.node_id)
            self.query_one(NodeInspector).show(None)
        else:
            self.flow.changed()
            inspector = self.query_one(NodeInspector)
            if inspector.node_id is not None and record is not None and record.node_id == inspector.node_id:
                inspector.show(record, self.flow.name_of(record))
        if isinstance(event, UsageRecorded) and not replay:
            model = event.model or self.session.model
            self.session.meter.add(event.usage, self.session.price(model), model)
            self._show_meter()
            self.status.context = self.session.context_fill

    def _show_meter(self) -> None:
        self.status.usage = self.session.meter.usage
        self.status.cost = self.session.meter.cost

    def _show_fresh(self, fresh: bool) -> None:
        """Before the first turn, the tree's title says what will show there (the tree is hidden)."""
        if fresh == self.has_class("-fresh"):
            return
        self.set_class(fresh, "-fresh")
        for title in self.query("#tree-title").results(Static):
            title.update(TREE_HINT if fresh else "agent tree")

    def _show_notes(self) -> None:
        """What the session wants the user to know, once, in the conversation pane."""
        while self.session.notes:
            self.conversation.add_notice(self.session.notes.pop(0), classes="-warning")
