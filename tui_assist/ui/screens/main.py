"""The main screen: conversation and prompt, the live agent tree and flow panel, the status bar.

The screen composes the widgets, pushes core events down to them ("attributes down, messages
up"), lays them out and binds the keys. The session's `TurnController` (`session/controller.py`)
owns every run (a turn, a flow, a resume, a rewind; the queue, cancel, retry, the meter) and
starts their work in this screen's workers (its launcher). The rest is in parts of their own, by
reason to change; the screen keeps thin methods where Textual needs them (actions, handlers):
- `main_host.py`: the controller's `Host`, what shows the runs as they start, stream and end;
- `main_start.py`: the first frame, loading the session, what the command line opens;
- `conversation_opening.py`: a new conversation, resume and rewind;
- `main_flows.py`: the grounded flow and the MCP servers.
Approvals go through the bridge's modal. Its keys and palette entries come from the one command
table (`session/commands.py`, bound in `ui/command_bindings.py`); the slash commands' handlers
are in `tui_assist.ui.slash_commands`, given a `CommandContext` (`ui/command_context.py`), not
the screen. The screen is given its controller (and so its session) by the app: `connect`, called
on first use, after the first frame.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import Footer, Static
from textual.worker import Worker

from tui_assist.ui.command_bindings import command_bindings
from tui_assist.ui.screens.main_kept_pane import KeptPane
from tui_assist.ui.screens.main_start import StartUp
from tui_assist.ui.textual_private import PacedScreen
from tui_assist.ui.widgets.conversation import MAX_TURN_VIEWS, Conversation
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.footer import KeysFooter
from tui_assist.ui.widgets.node_inspector import NodeInspector
from tui_assist.ui.widgets.prompt import Prompt, PromptBox
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.tasks import TasksStrip

if TYPE_CHECKING:
    from pathlib import Path

    from tui_assist.core.events import TurnEvent
    from tui_assist.core.tree import NodeLog, NodeRecord
    from tui_assist.session.chat import ChatSession
    from tui_assist.session.controller import Host, TurnController
    from tui_assist.session.runs import Launcher, Run, RunKind, Work
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.bridge import CoreEvent, TextualObserver
    from tui_assist.ui.screens.conversation_opening import ConversationOpening
    from tui_assist.ui.screens.main_flows import FlowActions
    from tui_assist.ui.screens.main_host import ScreenHost
    from tui_assist.ui.slash_commands import SlashCommands
    from tui_assist.ui.status_line import StatusLineGlue
    from tui_assist.ui.widgets.agent_tree import AgentTree

NARROW_WIDTH = 80
"""Below this many columns the side panels, when open, take the screen instead of the chat."""
MEDIUM_WIDTH = 100
"""Below this many columns the side panels start hidden and open narrow beside the chat (f2 / f3)."""
QUIT_PRESS_SECONDS = 3.0
"""How long after the first idle ctrl+c a second one quits."""
TREE_HINT = "agent tree · empty until the first turn"


@dataclass(frozen=True, slots=True)
class StartOptions:
    """Where the chat starts (`tui-assist "PROMPT"`, `--continue`, `--resume [ID]`)."""

    prompt: str | None = None
    """Sent as the first prompt, once the conversation is open."""
    continue_latest: bool = False
    """Open the most recent conversation."""
    resume: str | None = None
    """Open this conversation (an id or a prefix of one); "" opens the picker."""


Connect = Callable[["Host", "Launcher"], "TurnController"]
"""How the screen gets its controller, and through it its session: given what shows the runs (the
screen's host) and what starts their work (its workers), the app builds the session and a
controller over it. Called once, on first use: after the first frame (the session's modules are
not few)."""


class MainScreen(PacedScreen[None]):
    """The chat: its widgets, its layout and its keys; its parts show the runs and open conversations.

    Its frames are drawn when asked for, not on Textual's grid (see `PacedScreen`).
    """

    # Layout lives in main.tcss beside this module; the app loads it (see TuiAssistApp.CSS_PATH).
    AUTO_FOCUS = "#prompt"
    BINDINGS = command_bindings()

    def __init__(
        self,
        start: StartOptions | None = None,
        *,
        connect: Connect | None = None,
        session: Callable[[], ChatSession] | None = None,
    ) -> None:
        """The chat, opening `start`; `connect` gives it its controller (None: a screen with no
        session, whose first use of one fails); `session`, when given, the controller's session
        before the controller is needed."""
        super().__init__()
        self.start = start or StartOptions()
        self._connect = connect
        self._session_alone = session
        self._controller: TurnController | None = None
        self.status_line: StatusLineGlue | None = None
        """The user's `[status_line]` command, when configured (started once the settings load)."""
        self._bridge: TextualObserver | None = None
        self._slash: SlashCommands | None = None
        self._tree: AgentTree | None = None
        """The agent tree once mounted (kept: most events reach it, and a query walks every widget)."""
        self._flow_roots: set[str] = set()
        """Roots of flow runs: their events go to the tree and flow panel, not the conversation."""
        self._quit_armed = False
        self._last_idle_escape = 0.0
        """When escape was last pressed on an empty, idle prompt (twice in a second: rewind)."""
        # The screen's parts, by reason to change; the screen keeps its widgets, layout and keys.
        # Only the start-up is made before the first frame; the others (and the core's events
        # they import) when first used.
        self.start_up = StartUp(self)
        self.kept_pane = KeptPane(self)

    @cached_property
    def host(self) -> ScreenHost:
        """The controller's host: what shows the runs."""
        from tui_assist.ui.screens.main_host import ScreenHost

        return ScreenHost(self)

    @cached_property
    def opening(self) -> ConversationOpening:
        from tui_assist.ui.screens.conversation_opening import ConversationOpening

        return ConversationOpening(self)

    @cached_property
    def flows(self) -> FlowActions:
        from tui_assist.ui.screens.main_flows import FlowActions

        return FlowActions(self)

    @cached_property
    def log_model(self) -> NodeLog:
        """Every node of the newest turns, for the agent tree, the flow panel and the inspector: as
        many turns as the conversation keeps mounted (the tree's lines are rebuilt as it changes,
        so a tree of every turn of a long session would cost more each turn). Made on first use."""
        from tui_assist.core.tree import NodeLog

        return NodeLog(max_turns=MAX_TURN_VIEWS)

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Conversation(lambda: self.log_model, id="conversation")
                yield PromptBox(id="prompt-box")
            with Vertical(id="side", classes="-fresh"):
                # The agent tree itself is mounted with the first turn (see `agent_tree`).
                yield Static(TREE_HINT, id="tree-title")
                yield Static("flow", id="flow-title")
                with VerticalScroll(id="flow-scroll"):
                    yield FlowPanel(lambda: self.log_model, id="flow")
                yield NodeInspector(id="inspector")
        yield TasksStrip(id="tasks-strip")
        yield StatusBar(id="status")
        yield KeysFooter()

    # -- widgets --------------------------------------------------------------------------------

    @property
    def tui_app(self) -> TuiAssistApp:
        return cast("TuiAssistApp", self.app)

    @property
    def slash(self) -> SlashCommands:
        """The slash commands: the built-ins' handlers and the custom ones on disk."""
        if self._slash is None:
            from tui_assist.ui.slash_commands import SlashCommands

            self._slash = SlashCommands(self)
        return self._slash

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
    def session(self) -> ChatSession:
        """The session this screen was given (with its controller, on first use)."""
        if self._controller is None and self._session_alone is not None:
            # A conversation resumed at start reads its store before any run: the controller's
            # modules (~50 ms) would hold back its first paint.
            return self._session_alone()
        return self.controller.session

    @property
    def controller(self) -> TurnController:
        """What a prompt does: the session's turn controller, with this screen as its host."""
        if self._controller is None:
            if self._connect is None:
                raise RuntimeError("this main screen was given no session (see `connect`)")
            self._controller = self._connect(self.host, self._launch)
        return self._controller

    def _launch(self, work: Work) -> Worker[None]:
        """Start a run's work in a worker (so it can await the approval modal)."""
        return self.run_worker(work, group="run", exit_on_error=False)

    @property
    def running(self) -> bool:
        """Whether a run (a turn, a flow run, a resume or a rewind) is under way."""
        # (Not `self.controller`: the footer asks this before the first frame, before any session.)
        return self._controller is not None and self._controller.running

    def _running_kind(self) -> RunKind | None:
        current = self._controller.current if self._controller is not None else None
        return current.kind if current is not None else None

    @property
    def failed_prompt(self) -> str | None:
        """The prompt of the last turn, when it failed (f6 sends it again)."""
        return None if self._controller is None else self._controller.failed_prompt

    @property
    def turn_observer(self) -> TextualObserver:
        """Core events to this screen as messages; approvals through the modal."""
        if self._bridge is None:
            from tui_assist.ui.bridge import TextualObserver

            self._bridge = TextualObserver(self, self.app)
        return self._bridge

    # -- first frame, loading, start ------------------------------------------------------------

    def on_mount(self) -> None:
        status, app = self.status, self.tui_app
        status.refine = app.refine_at_start
        status.rounds = app.preview.rounds
        status.model = app.preview.model
        self.show_workdir(app.preview.workdir)
        status.state = "loading"
        self._layout_for(self.size.width)
        self.kept_pane.show()
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        self.start_up.after_first_frame()

    def show_workdir(self, workdir: Path) -> None:
        """Give the widgets that show or resolve paths the workdir (the preview's, then the session's)."""
        self.status.workdir = workdir
        self.prompt.workdir = workdir
        self.conversation.workdir = workdir

    # -- core events ----------------------------------------------------------------------------

    def on_core_event(self, message: CoreEvent) -> None:
        self.apply_event(message.deliver())

    def apply_event(self, event: TurnEvent) -> None:
        """Push one core event, live or replayed from the store, down to the widgets."""
        from tui_assist.core.events import TextDelta, ThinkingDelta

        record = self.apply_to_conversation(event)
        if not isinstance(event, TextDelta | ThinkingDelta):
            self.apply_to_panels(event, record)

    def apply_to_conversation(self, event: TurnEvent) -> NodeRecord | None:
        """The node log and the conversation's part of `apply_event`; the event's node record."""
        from tui_assist.core.events import NodeStarted

        record = self.log_model.apply(event)
        if isinstance(event, NodeStarted) and event.parent_id is None and self._running_kind() == "flow":
            self._flow_roots.add(event.node_id)
        if self.log_model.turn_id_of(event.node_id) not in self._flow_roots:
            self.conversation.apply(event)
        return record

    def apply_to_panels(self, event: TurnEvent, record: NodeRecord | None) -> None:
        """The agent tree's, the flow panel's and the inspector's part of `apply_event`."""
        from tui_assist.core.events import NodeStarted

        self.agent_tree.apply(event, record)
        inspector = self.query_one(NodeInspector)
        if isinstance(event, NodeStarted) and event.parent_id is None:
            self._show_fresh(False)
            self.flow.show_turn(event.node_id)
            inspector.show(None)
        else:
            self.flow.changed()
            if inspector.node_id is not None and record is not None and record.node_id == inspector.node_id:
                inspector.show(record, self.flow.name_of(record))

    def _show_fresh(self, fresh: bool) -> None:
        """Before the first turn, the tree's title says what will show there (the tree is hidden).

        The class is the side panel's, not the screen's: changing a class restyles the widgets
        below it, and the screen's are all of them (a first turn would pay for restyling them).
        """
        side = self.query_one("#side")
        if fresh == side.has_class("-fresh"):
            return
        side.set_class(fresh, "-fresh")
        for title in self.query("#tree-title").results(Static):
            title.update(TREE_HINT if fresh else "agent tree")

    def show_notes(self) -> None:
        """What the session wants the user to know, once, in the conversation pane."""
        while self.session.notes:
            self.conversation.add_notice(self.session.notes.pop(0), classes="-warning")

    def tick_panels(self) -> None:
        """Redraw the elapsed times of the running nodes (the host's tick)."""
        if self._tree is not None:
            self._tree.tick()
        self.flow.tick()

    def show_empty_conversation(self) -> None:
        """Empty every view of the conversation, and show the session's meter and context fill."""
        self.status.context = self.session.context_fill
        if "host" in self.__dict__:  # (a cached property) before it, nothing was metered to clear
            self.host.show_meter()
        self.conversation.clear_all()
        for turn_id in list(self.log_model.turns):  # f4, the tree and the flow panel read this log
            self.log_model.forget(turn_id)
        if self._tree is not None:
            self._tree.clear_turns()
        self._show_fresh(True)
        self.flow.show_turn(None)
        self.query_one(NodeInspector).show(None)

    # -- sending --------------------------------------------------------------------------------

    @on(Prompt.Submitted)
    def _submitted(self, event: Prompt.Submitted) -> None:
        self.submit(event.text, hold=event.hold)

    def submit(self, text: str, *, hold: bool = False) -> None:
        """Hand what the user sent to the controller (`hold`: for after the running turn)."""
        self._quit_armed = False
        self.session.prompt_history.add(text)
        self.controller.submit(text, hold=hold)

    def action_retry_turn(self) -> None:
        prompt = self.failed_prompt
        editor = self.prompt
        if prompt is not None and editor.text.strip() == prompt and not self.running:
            editor.clear()
        self.controller.retry()

    def action_cancel_turn(self) -> None:
        """Cancel the run, started or not (a turn under way is kept, marked interrupted)."""
        kind = self._running_kind()
        if self.controller.cancel():
            self.notify("Turn cancelled." if kind in ("turn", "shell") else "Cancelled.", timeout=2)
        self.prompt.focus()  # so the user can steer at once

    def interrupt_or_quit(self) -> None:
        """ctrl+c with nothing selected: stop the running turn, else clear the prompt, else quit
        (on a second press)."""
        if self.running:
            self.action_cancel_turn()
            return
        prompt = self.prompt
        if prompt.text.strip():
            prompt.clear()
            prompt.focus()
            return
        if self._quit_armed:
            self.app.exit()
            return
        self._quit_armed = True
        self.notify(f"press {self.tui_app.interrupt_key} again to quit", timeout=QUIT_PRESS_SECONDS)
        self.set_timer(QUIT_PRESS_SECONDS, self._disarm_quit)

    def _disarm_quit(self) -> None:
        self._quit_armed = False

    # -- conversations: new, resume, rewind (see `conversation_opening.py`) -----------------------

    def action_new_conversation(self) -> None:
        self.opening.new_conversation()

    def action_resume_conversation(self, query: str = "") -> None:
        self.opening.choose_conversation(query)

    def resume(self, conversation_id: str) -> Run | None:
        """Open a stored conversation, as a run (escape cancels it)."""
        return self.opening.resume(conversation_id)

    def open_rewind(self) -> None:
        """The rewind picker for this conversation (also: escape twice on an empty prompt)."""
        self.opening.open_rewind()

    def action_idle_escape(self) -> None:
        """Escape twice on an empty prompt opens the rewind picker."""
        now = time.monotonic()
        if now - self._last_idle_escape < 1.0:
            self._last_idle_escape = 0.0
            self.open_rewind()
        else:
            self._last_idle_escape = now

    # -- flows, MCP, export (see `main_flows.py`) --------------------------------------------------

    @property
    def held_run_id(self) -> str | None:
        """A grounded run awaiting approval (f8 approves it): none until the flows are first used (the
        footer asks before the first frame, which need not import them)."""
        flows: FlowActions | None = self.__dict__.get("flows")
        return None if flows is None else flows.held_run_id

    def action_ask_grounded(self) -> None:
        self.flows.ask_grounded()

    def action_approve_flow(self) -> None:
        self.flows.approve()

    def action_list_mcp(self) -> None:
        self.flows.list_mcp()

    def action_restart_mcp(self, name: str | None = None) -> None:
        self.flows.restart_mcp(name)

    def action_export_markdown(self) -> None:
        """The palette's export: what `/export md` writes (the stored turns, rounds included)."""
        self.submit("/export md")

    # -- layout ---------------------------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        self._layout_for(event.size.width)

    def _layout_for(self, width: int) -> None:
        self.set_class(0 < width < NARROW_WIDTH, "-narrow")
        self.set_class(NARROW_WIDTH <= width < MEDIUM_WIDTH, "-medium")
        for footer in self.query(Footer).results(Footer):
            footer.compact = 0 < width < MEDIUM_WIDTH  # every key fits in 80 columns

    def action_toggle_tree(self) -> None:
        self._toggle_panel("-tree-hidden")

    def action_toggle_flow(self) -> None:
        self._toggle_panel("-flow-hidden")

    def _toggle_panel(self, hidden_class: str) -> None:
        if self.has_class("-narrow") or self.has_class("-medium"):
            opening = not self.has_class("-side-open")
            self.set_class(opening, "-side-open")
            if opening:
                self.remove_class(hidden_class)
            return
        self.toggle_class(hidden_class)

    # -- keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            # With the focus in the search bar, escape closes the bar first.
            searching = self.focused is not None and any(
                node.id == "search" for node in self.focused.ancestors_with_self
            )
            return self.running and not searching
        if action == "idle_escape":
            # Idle, escape on an empty prompt (no completion open) counts toward a rewind. Asked
            # before the prompt is mounted too (a terminal's focus event at start-up).
            prompt = next(iter(self.query(Prompt)), None)
            if prompt is None:
                return False
            completions = prompt.completions
            return not self.running and not prompt.text and not (completions and completions.is_open)
        if action == "approve_flow":
            return self.held_run_id is not None
        if action == "retry_turn":
            return self.failed_prompt is not None and not self.running
        return True

    # -- view actions ---------------------------------------------------------------------------

    def action_cycle_mode(self) -> None:
        """Approvals: default (ask) -> accept-edits -> plan -> default."""
        from tui_assist.core.approval import describe_mode

        mode = self.session.approvals.next_mode()
        self.status.mode = mode
        self.notify(f"Mode {mode}: {describe_mode(mode)}", timeout=2)

    def action_toggle_refine(self) -> None:
        self.set_refine(not self.session.refine)

    def set_refine(self, on: bool) -> None:
        """Turn Refine mode on or off, show it, and remember it for the next start."""
        session = self.session
        session.refine = on
        self.status.refine = on
        self.notify(f"Refine {'ON' if on else 'OFF'} (≤{session.rounds} rounds)", timeout=1.5)
        self.tui_app.save_preferences(refine=on)

    def set_rounds(self, rounds: int) -> None:
        self.session.rounds = rounds
        self.status.rounds = rounds
        self.notify(f"Refine round budget: {rounds}", timeout=1.5)

    def action_find(self) -> None:
        """Search the conversation pane (the bar opens above the prompt)."""
        from tui_assist.ui.widgets.conversation_search import ConversationSearch  # not for the first frame

        bars = self.query(ConversationSearch)
        if bars:
            bar = bars.first()
        else:
            bar = ConversationSearch(self.conversation, id="search")
            self.query_one("#chat").mount(bar, before=self.prompt)
        self.call_after_refresh(bar.open)

    def on_conversation_search_closed(self) -> None:
        self.prompt.focus()

    def action_copy_answer(self, last: bool = False) -> None:
        """Copy the message selected in the conversation pane, else (or if `last`) the last answer."""
        conversation = self.conversation
        selected = None if last else conversation.selected_message
        if selected is not None:
            text, what = selected.copy_text(), selected.copy_label
        else:
            text, what = conversation.last_answer, "the last answer"
        if not text:
            empty = "No answer to copy yet." if selected is None else f"Nothing to copy in {what}."
            self.notify(empty, timeout=2)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({len(text):,} characters).", timeout=2)

    def action_review_round(self) -> None:
        for turn_id in reversed(list(self.log_model.turns)):
            rounds = self.log_model.rounds(turn_id)
            if rounds:
                self.open_round(rounds[-1].node_id)
                return
        self.notify("No refine rounds to review yet: turn Refine on with ctrl+r.", timeout=3)

    def open_round(self, round_id: str) -> None:
        from tui_assist.ui.screens.round_review import RoundReviewScreen

        review = RoundReviewScreen(self.log_model, round_id, self.session.history)
        self.app.push_screen(review, self._offer_prompt)

    def _offer_prompt(self, prompt: str | None) -> None:
        """Put the prompt the round review offers (why hunks were reverted) in the prompt box."""
        if prompt:
            self.prompt.restore(prompt)

    @on(FlowPanel.NodeChosen)
    def _node_chosen(self, event: FlowPanel.NodeChosen) -> None:
        """Show the chosen node's inputs and outputs below the flow panel."""
        record = self.log_model.nodes.get(event.node_id)
        self.query_one(NodeInspector).show(record, self.flow.name_of(record) if record else None)

    @on(FlowPanel.RoundChosen)
    def _round_chosen(self, event: FlowPanel.RoundChosen) -> None:
        self.open_round(event.round_id)

    def on_agent_tree_round_chosen(self, event: AgentTree.RoundChosen) -> None:
        self.open_round(event.round_id)
