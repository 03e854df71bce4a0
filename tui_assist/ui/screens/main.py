"""The main screen: conversation and prompt, the live agent tree and flow panel, the status bar.

One class that composes the widgets, pushes core events down to them ("attributes down, messages
up") and is the `Host` of the session's `TurnController` (`session/controller.py`): the
controller owns every run (a turn, a flow, a resume, a rewind; the queue, cancel, retry, the
meter) and starts their work in this screen's workers (its launcher); this screen shows it and
asks the person what only a person can answer (approvals, through the bridge's modal). Its keys
and palette entries come from the one command table (`session/commands.py`); the slash commands'
handlers are in `tui_assist.ui.slash_commands`.

The first frame is kept light (see "First paint before heavy imports" in docs/architecture.md):
the side panels' tree, the session's parts and the Markdown parser load after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.timer import Timer
from textual.widgets import Footer, Static
from textual.worker import Worker

from tui_assist.core.events import NodeStarted, TextDelta, ThinkingDelta, TurnEvent
from tui_assist.core.tree import NodeLog
from tui_assist.session.commands import COMMANDS
from tui_assist.ui.bridge import CoreEvent, TextualObserver
from tui_assist.ui.setup_help import provider_notice
from tui_assist.ui.textual_private import PacedScreen
from tui_assist.ui.widgets.conversation import MAX_TURN_VIEWS, Conversation, TurnView
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.footer import KeysFooter
from tui_assist.ui.widgets.node_inspector import NodeInspector
from tui_assist.ui.widgets.prompt import Prompt, PromptBox
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.streaming_markdown import (
    defer_highlighting,
    highlight_deferred,
    with_next_flush,
)
from tui_assist.ui.widgets.streaming_markdown import load_parser as load_markdown_parser
from tui_assist.ui.widgets.streaming_markdown import warm_up as warm_up_markdown
from tui_assist.ui.widgets.tasks import TasksStrip
from tui_assist.ui.widgets.turn_parts import Notice

if TYPE_CHECKING:
    from tui_assist.core.tree import NodeRecord
    from tui_assist.session.chat import ChatSession
    from tui_assist.session.controller import TurnController, TurnEnded
    from tui_assist.session.mentions import Attachments
    from tui_assist.session.runs import Run, RunKind, Work
    from tui_assist.session.slash_commands import SlashInput
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.rewind import RewindChoice
    from tui_assist.ui.slash_commands import SlashCommands
    from tui_assist.ui.status_line import StatusLineGlue
    from tui_assist.ui.widgets.agent_tree import AgentTree
    from tui_assist.ui.widgets.conversation import EarlierTurns
    from tui_assist.ui.widgets.queued_prompt import QueuedPrompt

NARROW_WIDTH = 80
"""Below this many columns the side panels, when open, take the screen instead of the chat."""
MEDIUM_WIDTH = 100
"""Below this many columns the side panels start hidden and open narrow beside the chat (f2 / f3)."""
FOOTER_WAIT = 0.5
"""Seconds loading waits at most for the footer's keys."""
PAINT_WAIT = 2.0
"""Seconds a resume waits at most for its newest turns to be drawn before reading the rest."""
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


def command_bindings() -> list[Binding]:
    """The screen's key bindings, built from the command table.

    The turn's own keys (those that win over the prompt's: Refine, cancel, mode, retry) come
    first, so the footer shows them first; the rest follow in the table's order.
    """
    bindings = [
        Binding(
            key.key,
            command.action,
            key.label,
            id=key.id,
            show=key.show,
            priority=key.priority,
            tooltip=key.tooltip,
        )
        for command in COMMANDS
        for key in command.keys
        if not command.action.startswith("app.")
    ]
    return sorted(bindings, key=lambda binding: not binding.priority)


class MainScreen(PacedScreen[None]):
    """The chat: its widgets, its keys, and the host of the session's turn controller.

    Its frames are drawn when asked for, not on Textual's grid (see `PacedScreen`).
    """

    # Layout lives in main.tcss beside this module; the app loads it (see TuiAssistApp.CSS_PATH).
    AUTO_FOCUS = "#prompt"
    BINDINGS = command_bindings()

    def __init__(self, start: StartOptions | None = None) -> None:
        super().__init__()
        self.start = start or StartOptions()
        self._controller: TurnController | None = None
        self.status_line: StatusLineGlue | None = None
        """The user's `[status_line]` command, when configured (started once the settings load)."""
        self.log_model = NodeLog(max_turns=MAX_TURN_VIEWS)
        """Every node of the newest turns, for the agent tree, the flow panel and the inspector: as
        many turns as the conversation keeps mounted (the tree's lines are rebuilt as it changes,
        so a tree of every turn of a long session would cost more each turn)."""
        self.held_run_id: str | None = None
        """A grounded run awaiting approval (f8 approves it)."""
        self._bridge: TextualObserver | None = None
        self._markdown_loaded: asyncio.Future[None] | None = None
        """The Markdown parser's and Pygments' loading, when it started while the session loads."""
        self._slash: SlashCommands | None = None
        self._tree: AgentTree | None = None
        """The agent tree once mounted (kept: most events reach it, and a query walks every widget)."""
        self._view: TurnView | None = None
        """The view of the turn the controller runs."""
        self._shown_attachments: set[str] = set()
        self._queued_views: list[QueuedPrompt] = []
        self._retry_view: TurnView | None = None
        """The failed turn's view, told how to retry once the prompt's worker is done."""
        self._tick: Timer | None = None
        self._blinked: bool | None = None
        """Whether the prompt's cursor blinked before the running turn (it holds still in one)."""
        self._flow_roots: set[str] = set()
        """Roots of flow runs: their events go to the tree and flow panel, not the conversation."""
        self._quit_armed = False
        self._last_idle_escape = 0.0
        """When escape was last pressed on an empty, idle prompt (twice in a second: rewind)."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Conversation(self.log_model, id="conversation")
                yield PromptBox(id="prompt-box")
            with Vertical(id="side", classes="-fresh"):
                # The agent tree itself is mounted with the first turn (see `agent_tree`).
                yield Static(TREE_HINT, id="tree-title")
                yield Static("flow", id="flow-title")
                with VerticalScroll(id="flow-scroll"):
                    yield FlowPanel(self.log_model, id="flow")
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
        """The app's session (built after the first frame, on first use)."""
        return self.tui_app.session

    @property
    def controller(self) -> TurnController:
        """What a prompt does: the session's turn controller, with this screen as its host."""
        if self._controller is None:
            from tui_assist.session.controller import TurnController

            self._controller = TurnController(self.session, self, launcher=self._launch)
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
            self._bridge = TextualObserver(self, self.app)
        return self._bridge

    # -- first frame, loading, start ------------------------------------------------------------

    def on_mount(self) -> None:
        status, app = self.status, self.tui_app
        status.refine = app.refine_at_start
        status.rounds = app.preview.rounds
        status.model = app.preview.model
        status.workdir = app.preview.workdir
        status.state = "loading"
        self._layout_for(self.size.width)
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        # `tui-assist` paused the collector for the first frame (see cli.main): everything created
        # so far (Textual, the screen) is long-lived, and its first collection would scan all of
        # it (and hold back the footer's keys), so it is frozen out of collections first.
        if not gc.isenabled():
            gc.freeze()
            gc.enable()
        if self._opening:
            # A conversation to redraw is what its user waits for: the store opens (and the
            # newest turns are drawn) at once, and their code is drawn plain until Pygments has
            # loaded (after they show, see `_open_stored`: loading it alongside took as long as
            # opening the store).
            defer_highlighting()
            self.call_next(self._after_drawn)
        else:
            self._load_when_drawn(FOOTER_WAIT)

    @property
    def _opening(self) -> bool:
        """Whether the command line asked to open a stored conversation (`--resume`, `--continue`)."""
        return bool(self.start.resume or self.start.continue_latest)

    def _load_when_drawn(self, wait: float) -> None:
        """Start loading once the whole screen is drawn, footer keys included (they are in the first
        frame unless the terminal lacks focus, see `KeysFooter`): loading (threads importing the
        SDK hold the GIL) would visibly delay them."""
        footers = self.query(Footer)
        if wait > 0 and footers and not any(key.region for key in footers.first().children):
            self.set_timer(0.01, lambda: self._load_when_drawn(wait - 0.01))
            return
        self.call_after_refresh(self._after_drawn)  # the frame with the keys is on screen

    async def _after_drawn(self) -> None:
        if self._opening:
            self.load_session()  # the redraw first
            # While its store opens in a thread (waiting on the disk more than the interpreter),
            # the redraw's Markdown parser loads here instead of after.
            await asyncio.sleep(0)
            load_markdown_parser()
        await self._equip_prompt()
        if not self._opening:
            self.load_session()

    async def _equip_prompt(self) -> None:
        """Give the prompt its history and its completion list (after the first frame, too)."""
        from tui_assist.session.prompt_history import HistoryBrowser
        from tui_assist.ui.mention_completion import MentionCompletion
        from tui_assist.ui.model_completion import ModelCompletion
        from tui_assist.ui.slash_commands import SlashCompletion
        from tui_assist.ui.widgets.completion import CompletionList

        prompt = self.prompt
        prompt.completions = CompletionList(id="completions")
        await self.query_one(PromptBox).mount(prompt.completions, before=0)
        prompt.prompt_history = HistoryBrowser(self.session.prompt_history)
        prompt.sources = [SlashCompletion(self.slash), ModelCompletion(self), MentionCompletion(self)]

    @work(group="load", exit_on_error=False)
    async def load_session(self) -> None:
        # A conversation asked for on the command line is redrawn as soon as the store is open,
        # before the SDK loads (its import would compete with the redraw for the interpreter).
        await self.session.load(after_store=self._open_stored if self._opening else None)
        # The Markdown parser and Pygments, so the first answer doesn't pay for loading them (for
        # a conversation to redraw, they load once it shows, and its code is highlighted then).
        await (self._markdown_loaded or asyncio.to_thread(warm_up_markdown))
        # And what the first turn imports, a module at a time so keys are handled in between. Not
        # in a thread: one importing a package while this thread imports one of its modules (the
        # prompt's first edit, a prompt sent now) can deadlock Python's import locks.
        from tui_assist.session.chat import TURN_MODULES

        for name in (*TURN_MODULES, "tui_assist.ui.widgets.agent_tree"):
            importlib.import_module(name)
            await asyncio.sleep(0)
        # Everything alive now (modules, the SDK, the app's widgets) lives for the whole session.
        # Freezing it keeps Python's full collections from scanning it again and again: with the
        # SDK loaded, each full collection otherwise stalls the event loop for several frames.
        gc.freeze()
        self._after_load()

    def _after_load(self) -> None:
        session = self.session
        settings = session.settings
        if settings.keymap:
            self.app.set_keymap(settings.keymap)
        self._show_session(settings.workdir)
        self.query_one(TasksStrip).follow(session.shells)
        self.status.sandboxed = session.sandbox_description.startswith("sandbox: workspace")
        if not self.running:
            self.status.state = "idle"
        if (notice := provider_notice(session)) is not None:
            self.conversation.add_notice(notice, classes="-setup")
        self._show_notes()
        from tui_assist.ui.status_line import start_status_line

        self.status_line = start_status_line(self)
        self.open_at_start(self.start)

    def _show_session(self, workdir: Path) -> None:
        status = self.status
        status.refine = self.session.refine
        status.rounds = self.session.rounds
        status.model = self.session.model
        status.workdir = workdir
        status.mode = self.session.approvals.mode
        status.cost_cap = self.session.max_budget_usd

    @work(group="start", exit_on_error=False)
    async def open_at_start(self, start: StartOptions) -> None:
        """Open the conversation the command line asked for, then send its prompt (if any)."""
        from tui_assist.ui.screens.trust import ask_project_trust

        await ask_project_trust(self.app, self.session)  # before anything of the project runs
        if start.resume == "":
            from tui_assist.ui.screens.resume import ResumeScreen

            history = self.session.history
            chosen = await self.app.push_screen_wait(ResumeScreen(history)) if history is not None else None
            if chosen:
                await self._redraw(chosen)
        if start.prompt:
            self.submit(start.prompt)

    async def _open_stored(self) -> None:
        """Redraw the conversation `--resume ID` or `--continue` asked for (`load` calls it)."""
        start = self.start
        from tui_assist.session.factory import SetupError
        from tui_assist.session.history import UnknownIdError

        try:
            found = await self.session.find_conversation(start.resume or None)
        except (SetupError, UnknownIdError) as exc:
            self.conversation.add_notice(f"**Cannot open the conversation:** {exc}", classes="-error")
            found = None
        else:
            if found is None:
                self.notify("No earlier conversation: this is a new one.", timeout=3)
        if found is not None:
            await self._redraw(found)
        self._markdown_loaded = asyncio.ensure_future(asyncio.to_thread(warm_up_markdown))
        self._markdown_loaded.add_done_callback(lambda _: highlight_deferred())  # not after the SDK

    # -- core events ----------------------------------------------------------------------------

    @on(CoreEvent)
    def _route(self, message: CoreEvent) -> None:
        self.apply_event(message.deliver())

    def apply_event(self, event: TurnEvent) -> None:
        """Push one core event, live or replayed from the store, down to the widgets."""
        record = self._apply_to_conversation(event)
        if not isinstance(event, TextDelta | ThinkingDelta):
            self._apply_to_panels(event, record)

    def _apply_to_conversation(self, event: TurnEvent) -> NodeRecord | None:
        """The node log and the conversation's part of `apply_event`; the event's node record."""
        record = self.log_model.apply(event)
        if isinstance(event, NodeStarted) and event.parent_id is None and self._running_kind() == "flow":
            self._flow_roots.add(event.node_id)
        if self.log_model.turn_id_of(event.node_id) not in self._flow_roots:
            self.conversation.apply(event)
        return record

    def _apply_to_panels(self, event: TurnEvent, record: NodeRecord | None) -> None:
        """The agent tree's, the flow panel's and the inspector's part of `apply_event`."""
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

    def _show_notes(self) -> None:
        """What the session wants the user to know, once, in the conversation pane."""
        while self.session.notes:
            self.conversation.add_notice(self.session.notes.pop(0), classes="-warning")

    # -- the controller's host ------------------------------------------------------------------

    def turn_started(self, prompt: str, strategy: str) -> None:
        self._view = self.conversation.begin_turn(prompt, strategy)
        self._shown_attachments = set()
        self.prompt.add_class("-running")
        # Each blink is a frame, which would hold back a frame of the streamed answer that
        # follows it (see `with_next_flush`).
        if self._blinked is None:
            self._blinked = self.prompt.cursor_blink
        self.prompt.cursor_blink = False
        self._tick = self.set_interval(0.5, self._on_tick)
        self.status.state = "running" if self.session.ready else "loading"
        self.tui_app.terminal_signals.turn_started()
        self.refresh_bindings()

    def prompt_attached(self, attachments: Attachments) -> None:
        self.status.state = "running"
        lines = attachments.notices()
        self._shown_attachments = set(lines)
        if self._view is not None:
            self._view.mount(Notice("\n".join(f"- `{line}`" for line in lines), classes="-attachments"))

    def turn_ended(self, ended: TurnEnded) -> None:
        view, self._view = self._view, None
        if self._tick is not None:
            self._tick.stop()
            self._tick = None
        self.prompt.remove_class("-running")
        if self._blinked is not None:
            self.prompt.cursor_blink, self._blinked = self._blinked, None
        self.status.state = "idle"
        self.tui_app.terminal_signals.turn_ended(ended)
        conversation_id = self.session.conversation_id
        if conversation_id is not None and not self.conversation.reads_pages:
            # The turns this session ran are stored: those the pane removes can be read again.
            self.conversation.offer_earlier(self._pages_of(conversation_id), None)
        if view is not None:
            self._show_turn_end(view, ended)
        self._show_notes()
        self.call_later(self.refresh_bindings)

    def _pages_of(self, conversation_id: str) -> EarlierTurns:
        """How the pane reads the stored turns of `conversation_id`, a page at a time."""
        session = self.session
        return lambda before: session.stored_page(conversation_id, before=before)

    def _show_turn_end(self, view: TurnView, ended: TurnEnded) -> None:
        outcome = ended.outcome
        if ended.unsent:
            problem = ended.problem or ""
            self.conversation.add_notice(
                "**This prompt was not sent:** no provider is available. "
                "See the note above on how to configure one.\n\n" + ("" if "\n" in problem else problem),
                classes="-error",
            )
            view.mark_unsent()
            return
        if outcome is None:
            if ended.problem == "cancelled":
                self.call_later(view.mark_cancelled)
            else:  # a bug: shown where it happened, and the prompt can be sent again
                self.call_later(view.mark_failed, ended.problem or "the turn failed")
                self._offer_retry(ended.prompt, view)
            return
        if ended.cancelled:
            self.call_later(view.mark_cancelled)
        elif ended.failed:
            # The turn's badge shows the error, once, where it happened.
            self._offer_retry(ended.prompt, view)
        for warning in outcome.warnings:
            if warning not in self._shown_attachments:
                self.conversation.add_notice(warning, classes="-warning")

    def queue_changed(self, queued: Sequence[str]) -> None:
        from tui_assist.ui.widgets.queued_prompt import sync_queued

        waiting = self.controller.waiting  # a prompt that joined the turn leaves from the middle
        self._queued_views = sync_queued(self._queued_views, waiting, self.conversation.mount)

    def queue_returned(self, texts: Sequence[str]) -> None:
        for view in self._queued_views:
            view.remove()
        self._queued_views.clear()
        self.prompt.restore("\n".join(texts))
        if self.controller.failed_prompt is not None:  # else cancelled: the user knows why
            # Follow-ups to a turn that failed are rarely still wanted as written.
            self.prompt.show_error("The turn failed: your queued prompts are back here to send again.")

    def meter_changed(self) -> None:
        self._show_meter()
        self.status.context = self.session.context_fill

    def run_command(self, call: SlashInput, text: str) -> None:
        self.slash.run(call, text)

    def command_refused(self, text: str, why: str) -> None:
        self.slash.refuse(text, why)

    def run_changed(self, run: Run) -> None:
        self.refresh_bindings()
        if run.done and run.error is not None and run.kind in ("flow", "resume", "rewind"):
            # Their work reports what it expects; anything else must not pass unseen.
            self.notify(f"The {run.kind} failed: {run.error}", severity="error")
        view = self._retry_view
        if view is not None and run.done and self.failed_prompt is not None and not self.running:
            # The retry key is enabled now (and the keymap may have moved it): name it.
            self._retry_view = None
            keys = [b.binding for b in self.active_bindings.values() if b.binding.action == "retry_turn"]
            view.offer_retry(self.app.get_key_display(keys[0]) if keys else "the retry key")

    # -- sending --------------------------------------------------------------------------------

    @on(Prompt.Submitted)
    def _submitted(self, event: Prompt.Submitted) -> None:
        self.submit(event.text, hold=event.hold)

    def submit(self, text: str, *, hold: bool = False) -> None:
        """Hand what the user sent to the controller (`hold`: for after the running turn)."""
        self._quit_armed = False
        self.session.prompt_history.add(text)
        self.controller.submit(text, hold=hold)

    def _on_tick(self) -> None:
        # While an answer streams, the elapsed times are drawn in its next frame (see
        # `with_next_flush`), and the prompt's cursor does not blink (`turn_started`).
        if not with_next_flush(self._tick_panels):
            self._tick_panels()

    def _tick_panels(self) -> None:
        if self._tree is not None:
            self._tree.tick()
        self.flow.tick()

    def _offer_retry(self, prompt: str, view: TurnView) -> None:
        """Put a failed prompt back in the input (unless the user typed since) and offer a retry."""
        editor = self.prompt
        if not editor.text.strip():
            editor.text = prompt
            editor.move_cursor(editor.document.end)
        self._retry_view = view  # told how to retry once the run is done

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

    # -- the meter ------------------------------------------------------------------------------

    def _show_meter(self) -> None:
        self.status.usage = self.session.meter.usage
        self.status.cost = self.session.meter.cost
        self.status.cost_cap = self.session.max_budget_usd

    # -- conversations: new, resume, rewind ------------------------------------------------------

    def _refuse_while_running(self) -> bool:
        if self.running:
            self.notify("Cancel the running turn first (escape).", severity="warning")
        return self.running

    def action_new_conversation(self) -> None:
        if self._refuse_while_running() or not self.controller.new_conversation():
            return
        self._show_empty_conversation()
        self.notify("New conversation.", timeout=1.5)

    def action_resume_conversation(self, query: str = "") -> None:
        history = self.session.history
        if history is None:
            self.notify("No stored conversations: the store is not available.", severity="warning")
            return
        if self._refuse_while_running():
            return
        from tui_assist.ui.screens.resume import ResumeScreen

        def chosen(conversation_id: str | None) -> None:
            if conversation_id:
                self.resume(conversation_id)

        self.app.push_screen(ResumeScreen(history, query=query), chosen)

    def resume(self, conversation_id: str) -> Run | None:
        """Open a stored conversation, as a run (escape cancels it)."""
        return self.controller.start("resume", conversation_id, lambda: self._redraw(conversation_id))

    def _show_empty_conversation(self) -> None:
        """Empty every view of the conversation, and show the session's meter and context fill."""
        self.status.context = self.session.context_fill
        self._show_meter()
        self.conversation.clear_all()
        for turn_id in list(self.log_model.turns):  # f4, the tree and the flow panel read this log
            self.log_model.forget(turn_id)
        if self._tree is not None:
            self._tree.clear_turns()
        self._show_fresh(True)
        self.flow.show_turn(None)
        self.query_one(NodeInspector).show(None)

    async def _redraw(self, conversation_id: str) -> bool:
        """Open a stored conversation and redraw its newest turns; False when it can't be.

        The newest turns are read and painted first; the whole history (what the next turn
        sends, the meter, the context fill) is read after, so the last answer shows as soon at
        any length.
        """
        session = self.session
        try:
            turns = await session.stored_page(conversation_id)
        except Exception as exc:
            self.notify(f"Cannot resume: {exc}", severity="error")
            return False
        self._show_empty_conversation()
        for_panels: list[tuple[TurnEvent, NodeRecord | None]] = []
        # One layout draws them all, at the end: none before every view is mounted.
        with self.app.batch_update():
            for turn in turns:
                if turn.events:
                    # Replay the stored event log through the same path live events take, so the
                    # turn is redrawn as it ran: streamed text, tool calls, rounds, tree and badges.
                    view = self.conversation.begin_turn(turn.prompt, turn.strategy, images=turn.images)
                    view.seq = turn.seq
                    for event in turn.events:
                        record = self._apply_to_conversation(event)
                        if not isinstance(event, TextDelta | ThinkingDelta):
                            for_panels.append((event, record))
                else:
                    self.conversation.show_stored(turn)
            self.conversation.anchor()
            await self.conversation.mounted()
        # Only the newest turns are read; earlier ones load as the user scrolls up.
        self.conversation.offer_earlier(self._pages_of(conversation_id), turns[0].seq if turns else None)
        # The last answer on screen first (bounded: a screen on top of this one draws instead);
        # the tree and the flow panel after it (the tree's first mount would hold the answer back).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.conversation.wait_for_refresh(), PAINT_WAIT)
        for event, record in for_panels:
            self._apply_to_panels(event, record)
        try:
            await session.load_history(conversation_id)
        except Exception as exc:
            self._show_empty_conversation()  # nothing shown that the next turn would not send
            self.notify(f"Cannot resume: {exc}", severity="error")
            return False
        self.status.context = session.context_fill
        self._show_meter()
        self.notify(f"Resumed {len(turns)} turn(s).", timeout=2)
        return True

    def action_idle_escape(self) -> None:
        """Escape twice on an empty prompt opens the rewind picker."""
        now = time.monotonic()
        if now - self._last_idle_escape < 1.0:
            self._last_idle_escape = 0.0
            self.open_rewind()
        else:
            self._last_idle_escape = now

    def open_rewind(self) -> None:
        """The rewind picker for this conversation (also: escape twice on an empty prompt)."""
        history, conversation_id = self.session.history, self.session.conversation_id
        if history is None or conversation_id is None:
            self.notify("Nothing to rewind yet: no turn of this conversation is stored.", timeout=3)
            return
        if self._refuse_while_running():
            return
        from tui_assist.ui.screens.rewind import RewindScreen

        self.app.push_screen(RewindScreen(history, conversation_id), self._rewind_chosen)

    def _rewind_chosen(self, choice: RewindChoice | None) -> None:
        if choice is not None:
            self.controller.start("rewind", choice.prompt, lambda: self._rewind(choice))

    async def _rewind(self, choice: RewindChoice) -> None:
        from tui_assist.session.rewind import RewindError

        history, conversation_id = self.session.history, self.session.conversation_id
        assert history is not None and conversation_id is not None
        try:
            done = await history.rewind(choice.plan)
        except RewindError as exc:
            self.conversation.add_notice(f"**Rewind failed:** {exc}", classes="-error")
            return
        kept = [k.path for k in done.kept if k.reason == "changed_by_user"]
        lines = [f"**Rewound:** {len(done.restored)} file(s) restored, {len(done.deleted)} deleted"]
        if kept:
            lines.append(f"kept as you left them: {', '.join(kept)}")
        if done.turns:
            await self._redraw(conversation_id)
            self.prompt.restore(choice.prompt)
            lines.append(f"{len(done.turns)} turn(s) taken out of the conversation; the prompt is back")
        self.conversation.add_notice("; ".join(lines) + ".")

    # -- flows, MCP, export ----------------------------------------------------------------------

    def action_ask_grounded(self) -> None:
        """Ask a question of a folder of documents (the grounded flow), with the flow panel drawing it."""
        if self.running:
            self.notify("Wait for the running turn, or cancel it (escape).", severity="warning")
            return
        from tui_assist.ui.screens.grounded_prompt import GroundedPromptScreen, GroundedRequest

        session = self.session

        def model_choice() -> tuple[str | None, str]:
            """What `model` leaves would use, or why there is nothing (one line)."""
            if session.provider is not None:
                return f"{session.provider.name} · {session.provider.model}", ""
            if not session.ready:
                return None, "The model provider is still loading"
            problem = (session.provider_problem or "").strip().splitlines()
            return None, problem[0].replace("**", "").strip() if problem else ""

        def chosen(request: GroundedRequest | None) -> None:
            if request is not None:
                self.run_grounded_flow(
                    request.corpus, request.question, leaves=request.leaves, data=request.data
                )

        workdir = session.settings.workdir
        model, problem = model_choice()
        form = GroundedPromptScreen(str(workdir), workdir=workdir, model=model, model_problem=problem)
        self.app.push_screen(form, chosen)
        if not session.ready:

            async def offer_when_ready() -> None:
                await session.wait_ready()
                if form.is_attached:
                    form.offer_model(*model_choice())

            self.run_worker(offer_when_ready(), group="grounded-form", exit_on_error=False)

    def run_grounded_flow(
        self, corpus: Path, question: str, *, leaves: str = "rules", data: Path | None = None
    ) -> Run | None:
        """Run the grounded flow with `rules` or `model` leaves (as `tui-assist flow grounded` does)."""
        return self.controller.start(
            "flow", question, lambda: self._grounded_flow(corpus, question, leaves=leaves, data=data)
        )

    async def _grounded_flow(self, corpus: Path, question: str, *, leaves: str, data: Path | None) -> None:
        from tui_assist.session.grounded import ask_grounded
        from tui_assist.ui.grounded_view import grounded_markdown

        using = f"corpus `{corpus}`" + (f", data `{data}`" if data is not None else "") + f", {leaves} leaves"
        self.conversation.add_notice(f"**grounded question** ({using}): {question}")
        self.status.state = "running"
        try:
            run = await ask_grounded(
                self.session,
                corpus,
                question,
                self.controller.observer,
                leaves="model" if leaves == "model" else "rules",
                data=data,
            )
        except ValueError as exc:
            self.conversation.add_notice(f"**Cannot ask:** {exc}.", classes="-error")
            return
        except Exception as exc:  # a bad corpus, glossary or database must not take the chat down
            self.conversation.add_notice(f"**The grounded flow failed:** `{exc}`", classes="-error")
            return
        finally:
            self.status.state = "idle"
        state = run.state
        if state.outcome == "awaiting_approval":
            self.held_run_id = state.run_id if self.session.store is not None else None
        self.conversation.add_notice(grounded_markdown(state, approvable=self.held_run_id is not None))
        self.call_later(self.refresh_bindings)

    def action_approve_flow(self) -> None:
        if self.held_run_id is None:
            self.notify("No grounded run is awaiting approval.", timeout=2)
            return
        run_id = self.held_run_id
        if self.controller.start("flow", run_id, lambda: self._approve_held_run(run_id)) is None:
            self.notify("Wait for the running turn, or cancel it (escape).", severity="warning")

    async def _approve_held_run(self, run_id: str) -> None:
        from tui_assist.flows.grounded import ApprovalError
        from tui_assist.session.grounded import approve_held
        from tui_assist.ui.grounded_view import grounded_markdown

        try:
            run = await approve_held(self.session, run_id, self.controller.observer)
        except (ApprovalError, ValueError) as exc:
            self.notify(f"Cannot approve: {exc}", severity="error")
            return
        self.held_run_id = None
        self.conversation.add_notice("**approved** · " + grounded_markdown(run.state, approvable=False))
        self.call_later(self.refresh_bindings)

    def action_list_mcp(self) -> None:
        """Show the MCP servers, their state and their tools in the conversation pane."""
        manager = self.session.mcp
        if manager is None:
            lines = ["no MCP servers configured"]
        else:
            from tui_assist.tools.mcp import format_status

            lines = format_status(manager.status())
        body = "\n".join(lines)
        self.conversation.add_notice(f"**MCP servers**\n\n```text\n{body}\n```")

    def action_restart_mcp(self, name: str | None = None) -> None:
        """Restart one MCP server (`name`), or every configured one."""
        manager = self.session.mcp
        if manager is None or not manager.names:
            self.notify("no MCP servers configured", timeout=3)
            return
        self.restart_mcp_servers([name] if name else list(manager.names))

    @work(group="mcp", exit_on_error=False)
    async def restart_mcp_servers(self, names: list[str]) -> None:
        manager = self.session.mcp
        if manager is None:
            return
        for name in names:
            try:
                status = await manager.restart(name)
            except Exception as exc:
                self.notify(f"MCP {name}: cannot restart: {exc}", severity="error")
                continue
            failed = status.state not in ("ready", "idle")
            self.notify(f"MCP {status.summary}", severity="error" if failed else "information", timeout=4)

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
