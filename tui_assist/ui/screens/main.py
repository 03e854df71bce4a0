"""The main screen: conversation and prompt, the live agent tree and flow panel, the status bar.

Core events arrive as `CoreEvent` messages and are pushed down to the widgets; turns run in an
exclusive worker, so `escape` cancels exactly the running turn. A prompt sent while a turn runs
waits in a queue (shown at the foot of the conversation) and is sent when the turn ends; `escape`
puts the queue back in the prompt instead. A prompt starting with `/` is a command
(`tui_assist.ui.slash_commands`). The flow, MCP and export actions live in `main_flows`.
"""

from __future__ import annotations

import asyncio
import gc
import time
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
from textual.worker import Worker, WorkerState

from tui_assist.core.events import NodeStarted, TextDelta, TurnEvent, UsageRecorded
from tui_assist.core.tree import NodeLog
from tui_assist.paths import data_dir
from tui_assist.session.factory import SetupError
from tui_assist.ui.bridge import CoreEvent, StopRequested, TextualObserver
from tui_assist.ui.screens.main_flows import FlowActions
from tui_assist.ui.setup_help import provider_notice
from tui_assist.ui.widgets.conversation import Conversation, TurnView
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.node_inspector import NodeInspector
from tui_assist.ui.widgets.prompt import Prompt, PromptBox
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.streaming_markdown import warm_up as warm_up_markdown
from tui_assist.ui.widgets.turn_parts import Notice

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.rewind import RewindChoice
    from tui_assist.ui.slash_commands import SlashCommands
    from tui_assist.ui.widgets.agent_tree import AgentTree
    from tui_assist.ui.widgets.queued_prompt import QueuedPrompt

NARROW_WIDTH = 80
"""Below this many columns the side panels, when open, take the screen instead of the chat."""
MEDIUM_WIDTH = 100
"""Below this many columns the side panels start hidden and open narrow beside the chat (f2 / f3)."""
FOOTER_WAIT = 0.5
"""Seconds loading waits at most for the footer's keys."""
TREE_HINT = "agent tree · empty until the first turn"

QUIT_PRESS_SECONDS = 3.0
"""How long after the first idle ctrl+c a second one quits."""


@dataclass(frozen=True, slots=True)
class StartOptions:
    """Where the chat starts (`tui-assist "PROMPT"`, `--continue`, `--resume [ID]`)."""

    prompt: str | None = None
    """Sent as the first prompt, once the conversation is open."""
    continue_latest: bool = False
    """Open the most recent conversation."""
    resume: str | None = None
    """Open this conversation (an id or a prefix of one); "" opens the picker."""


class MainScreen(FlowActions):
    """The chat."""

    # Layout lives in main.tcss beside this module; the app loads it (see TuiAssistApp.CSS_PATH).
    AUTO_FOCUS = "#prompt"
    BINDINGS = [
        Binding("ctrl+r", "toggle_refine", "Refine", id="toggle-refine", priority=True),
        Binding("escape", "cancel_turn", "Cancel turn", id="cancel-turn", priority=True),
        Binding("escape", "idle_escape", "Rewind", id="rewind-escape", priority=True, show=False),
        Binding("shift+tab", "cycle_mode", "Mode", id="cycle-mode", priority=True, show=False),
        # Not in the footer (so that every key fits in 80 columns): the palette offers it too.
        Binding("ctrl+n", "new_conversation", "New", id="new-conversation", show=False),
        Binding("ctrl+o", "resume_conversation", "Resume", id="resume-conversation"),
        Binding("f2", "toggle_tree", "Tree", id="toggle-tree"),
        Binding("f3", "toggle_flow", "Flow", id="toggle-flow"),
        Binding("f4", "review_round", "Review", id="review-round", tooltip="Review the latest refine round"),
        Binding(
            "f5",
            "copy_answer",
            "Copy",
            id="copy-answer",
            tooltip="Copy the message selected in the conversation (up/down there), else the last answer",
        ),
        Binding("ctrl+f", "find", "Find", id="find", show=False),
        # Priority: the prompt (a TextArea) binds f6 itself; this one is enabled only after a failure.
        Binding(
            "f6",
            "retry_turn",
            "Retry",
            id="retry-turn",
            priority=True,
            tooltip="Send the prompt that failed again",
        ),
        Binding("f8", "approve_flow", "Approve held run", id="approve-flow"),
    ]

    def __init__(self, session: ChatSession, start: StartOptions | None = None) -> None:
        super().__init__(classes="-fresh")
        self.session = session
        self.start = start or StartOptions()
        self._slash: SlashCommands | None = None
        self._queued: list[QueuedPrompt] = []
        """Prompts sent while a turn ran, oldest first: each is the next turn in its time."""
        self._last_turn_failed = False
        self._quit_armed = False
        self._last_idle_escape = 0.0
        """When escape was last pressed on an empty, idle prompt (twice in a second: rewind)."""
        self.log_model = NodeLog()
        self._tick: Timer | None = None
        self._turn_worker: Worker[None] | None = None
        self._flow_running = False
        self._flow_roots: set[str] = set()
        """Roots of flow runs: their events go to the tree and flow panel, not the conversation."""
        self.held_run_id: str | None = None
        """A grounded run awaiting approval (f8 approves it)."""
        self.failed_prompt: str | None = None
        """The prompt of the last turn, when it failed (f6 sends it again)."""
        self._retry_view: TurnView | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Conversation(id="conversation")
                yield PromptBox(id="prompt-box")
            with Vertical(id="side"):
                # The agent tree itself is mounted with the first turn (see `agent_tree`).
                yield Static(TREE_HINT, id="tree-title")
                yield Static("flow", id="flow-title")
                with VerticalScroll(id="flow-scroll"):
                    yield FlowPanel(self.log_model, id="flow")
                yield NodeInspector(id="inspector")
        yield StatusBar(id="status")
        yield Footer()

    def _after_first_frame(self) -> None:
        # `tui-assist` paused the collector for the first frame (see cli.main): everything created
        # so far (Textual, the screen) is long-lived, and its first collection would scan all of
        # it (~100 ms before the footer's keys show), so it is frozen out of collections first.
        if not gc.isenabled():
            gc.freeze()
            gc.enable()
        self._load_when_drawn(FOOTER_WAIT)

    def _load_when_drawn(self, wait: float) -> None:
        """Start loading once the whole screen is drawn: the footer fills in its keys a few frames
        after the first, and loading (threads importing the SDK hold the GIL) would delay that by
        a few hundred milliseconds."""
        footers = self.query(Footer)
        if wait > 0 and footers and not any(key.region for key in footers.first().children):
            self.set_timer(0.01, lambda: self._load_when_drawn(wait - 0.01))
            return
        self.call_after_refresh(self._after_drawn)  # the frame with the keys is on screen

    async def _after_drawn(self) -> None:
        await self._equip_prompt()
        self.load_session()

    async def _equip_prompt(self) -> None:
        """Give the prompt its history and its completion list (after the first frame, too)."""
        from tui_assist.session.prompt_history import HistoryBrowser
        from tui_assist.ui.mention_completion import MentionCompletion
        from tui_assist.ui.slash_commands import SlashCompletion
        from tui_assist.ui.widgets.completion import CompletionList

        prompt = self.prompt
        prompt.completions = CompletionList(id="completions")
        await self.query_one(PromptBox).mount(prompt.completions, before=0)
        prompt.prompt_history = HistoryBrowser(self.session.prompt_history)
        prompt.sources = [SlashCompletion(self.slash), MentionCompletion(self)]

    @property
    def slash(self) -> SlashCommands:
        """The slash commands: the built-ins and the custom ones on disk."""
        if self._slash is None:
            from tui_assist.ui.slash_commands import SlashCommands

            self._slash = SlashCommands(self)
        return self._slash

    # -- widgets ---------------------------------------------------------------------------------

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
        from tui_assist.ui.widgets.agent_tree import AgentTree

        trees = self.query(AgentTree)
        if trees:
            return trees.first()
        tree = AgentTree(self.log_model, id="tree")
        self.query_one("#side").mount(tree, after="#tree-title")
        return tree

    def _mounted_tree(self) -> AgentTree | None:
        from tui_assist.ui.widgets.agent_tree import AgentTree

        trees = self.query(AgentTree)
        return trees.first() if trees else None

    def _clear_tree(self) -> None:
        tree = self._mounted_tree()
        if tree is not None:
            tree.clear_turns()

    @property
    def flow(self) -> FlowPanel:
        return self.query_one(FlowPanel)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def running(self) -> bool:
        return self._turn_worker is not None and self._turn_worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    # -- lifecycle -------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._show_session(self.session.preview.workdir)
        self.status.state = "loading"
        self._layout_for(self.size.width)
        self.call_after_refresh(self._after_first_frame)

    @work(group="load", exit_on_error=False)
    async def load_session(self) -> None:
        await self.session.load()
        # The Markdown parser and Pygments, too, so the first answer doesn't pay for loading them.
        await asyncio.to_thread(warm_up_markdown)
        # Everything alive now (modules, the SDK, the app's widgets) lives for the whole session.
        # Freezing it keeps Python's full collections from scanning it again and again: with the
        # SDK loaded, each full collection otherwise stalls the event loop for 50-100+ ms.
        gc.freeze()
        self._after_load()

    def _after_load(self) -> None:
        session = self.session
        settings = session.settings
        if settings.keymap:
            self.app.set_keymap(settings.keymap)
        self._show_session(settings.workdir)
        self.status.sandboxed = self.session.sandbox_description.startswith("sandbox: workspace")
        if not self.running:
            self.status.state = "idle"
        if (notice := provider_notice(session)) is not None:
            self.conversation.add_notice(notice, classes="-setup")
        self._show_notes()
        self.open_at_start(self.start)

    def _show_session(self, workdir: Path) -> None:
        status = self.status
        status.refine = self.session.refine
        status.rounds = self.session.rounds
        status.model = self.session.model
        status.workdir = workdir
        status.mode = self.session.approvals.mode

    def _show_notes(self) -> None:
        """What the session wants the user to know, once, in the conversation pane."""
        while self.session.notes:
            self.conversation.add_notice(self.session.notes.pop(0), classes="-warning")

    def on_resize(self, event: Resize) -> None:
        self._layout_for(event.size.width)

    def _layout_for(self, width: int) -> None:
        self.set_class(0 < width < NARROW_WIDTH, "-narrow")
        self.set_class(NARROW_WIDTH <= width < MEDIUM_WIDTH, "-medium")
        for footer in self.query(Footer).results(Footer):
            footer.compact = 0 < width < MEDIUM_WIDTH  # every key fits in 80 columns

    def _show_fresh(self, fresh: bool) -> None:
        """Before the first turn, the tree's title says what will show there (the tree is hidden)."""
        if fresh == self.has_class("-fresh"):
            return
        self.set_class(fresh, "-fresh")
        for title in self.query("#tree-title").results(Static):
            title.update(TREE_HINT if fresh else "agent tree")

    # -- core events -----------------------------------------------------------------------------

    @on(StopRequested)
    def _stop_requested(self) -> None:
        """Escape in an approval dialog: the turn stops and is kept as interrupted."""
        self.action_cancel_turn()
        self.query_one(Prompt).focus()

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
        if isinstance(event, TextDelta):
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

    # -- turns -----------------------------------------------------------------------------------

    @on(Prompt.Submitted)
    def _submitted(self, event: Prompt.Submitted) -> None:
        self.submit(event.text)

    def submit(self, text: str) -> None:
        """Run what the user sent: a `/` command, else a prompt for the model."""
        self._quit_armed = False
        self.session.prompt_history.add(text)
        if text.lstrip().startswith("/"):  # a command (see `session.slash_commands.parse_slash`)
            self.slash.run(text)
        else:
            self.send_prompt(text)

    def send_prompt(self, text: str) -> None:
        """Send `text` to the model now, or as the next turn when one is running (or queued)."""
        if self.running or self._queued:
            from tui_assist.ui.widgets.queued_prompt import QueuedPrompt

            queued = QueuedPrompt(text)
            self._queued.append(queued)
            self.conversation.mount(queued)
            return
        self._turn_worker = self.run_turn(text)

    def _send_next_queued(self) -> None:
        if self._queued and not self.running:
            queued = self._queued.pop(0)
            queued.remove()
            self._turn_worker = self.run_turn(queued.text)

    def _unqueue(self) -> None:
        """Put the queued prompts back in the prompt, in order, for editing."""
        if not self._queued:
            return
        texts = [queued.text for queued in self._queued]
        for queued in self._queued:
            queued.remove()
        self._queued.clear()
        self.prompt.restore("\n".join(texts))

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str) -> None:
        session = self.session
        self._last_turn_failed = True  # until the turn comes back in one piece
        self.failed_prompt = None
        view = self.conversation.begin_turn(prompt, "refine" if session.refine else "agent")
        status = self.status
        self.query_one(Prompt).add_class("-running")
        self._tick = self.set_interval(0.5, self._on_tick)
        try:
            if not session.ready:
                status.state = "loading"
                await session.wait_ready()
            if session.provider is None:
                problem = session.provider_problem or "no provider is configured"
                self.conversation.add_notice(
                    "**This prompt was not sent:** no provider is available. "
                    "See the note above on how to configure one.\n\n" + ("" if "\n" in problem else problem),
                    classes="-error",
                )
                view.mark_unsent()
                return
            status.state = "running"
            attachments = await session.attach(prompt)
            shown: set[str] = set()
            if attachments is not None:
                lines = attachments.notices()
                shown = set(lines)
                view.mount(Notice("\n".join(f"- `{line}`" for line in lines), classes="-attachments"))
            observer = TextualObserver(self, self.app)
            outcome = await session.run_turn(prompt, observer, attachments=attachments)
            result = outcome.result
            self._last_turn_failed = result.outcome == "error"
            if result.outcome == "cancelled":
                self.call_later(view.mark_cancelled)
            elif result.outcome == "error":
                # The turn's badge shows the error, once, where it happened.
                self._offer_retry(prompt, view)
            for warning in outcome.warnings:
                if warning not in shown:
                    self.conversation.add_notice(warning, classes="-warning")
        except asyncio.CancelledError:
            self.call_later(view.mark_cancelled)
            raise
        except Exception as exc:  # a bug must not take the conversation down with it
            self.call_later(view.mark_failed, f"{type(exc).__name__}: {exc}")
            self._offer_retry(prompt, view)
        finally:
            if self._tick is not None:
                self._tick.stop()
                self._tick = None
            self.query_one(Prompt).remove_class("-running")
            status.state = "idle"
            self._show_notes()
            self.call_later(self.refresh_bindings)

    def _offer_retry(self, prompt: str, view: TurnView) -> None:
        """Put a failed prompt back in the input (unless the user typed since) and offer a retry."""
        self.failed_prompt = prompt
        if self._queued:  # what was queued after it is what the user typed since: it comes back
            self._unqueue()
            self.prompt.show_error("The turn failed: your queued prompts are back here to send again.")
        editor = self.query_one(Prompt)
        if not editor.text.strip():
            editor.text = prompt
            editor.move_cursor(editor.document.end)
        self._retry_view = view  # told how to retry once the turn's worker is done (see below)

    def action_retry_turn(self) -> None:
        prompt = self.failed_prompt
        if prompt is None or self.running:
            return
        editor = self.query_one(Prompt)
        if editor.text.strip() == prompt:
            editor.clear()
        self._turn_worker = self.run_turn(prompt)

    def _on_tick(self) -> None:
        tree = self._mounted_tree()
        if tree is not None:
            tree.tick()
        self.flow.changed()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._turn_worker:
            return
        self.refresh_bindings()
        view, self._retry_view = self._retry_view, None
        if view is not None and self.failed_prompt is not None and not self.running:
            # The retry key is enabled now (and the keymap may have moved it): name it.
            keys = [b.binding for b in self.active_bindings.values() if b.binding.action == "retry_turn"]
            view.offer_retry(self.app.get_key_display(keys[0]) if keys else "the retry key")
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED) and self._queued:
            if self._last_turn_failed:
                # Follow-ups to a turn that failed are rarely still wanted as written.
                self._unqueue()
                self.prompt.show_error("The turn failed: your queued prompts are back here to send again.")
            else:
                self._send_next_queued()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            # With the focus in the search bar, escape closes the bar first.
            searching = self.focused is not None and any(
                node.id == "search" for node in self.focused.ancestors_with_self
            )
            return self.running and not searching
        if action == "idle_escape":
            # Idle, escape on an empty prompt (no completion open) counts toward a rewind.
            completions = self.prompt.completions
            return not self.running and not self.prompt.text and not (completions and completions.is_open)
        if action == "approve_flow":
            return self.held_run_id is not None
        if action == "retry_turn":
            return self.failed_prompt is not None and not self.running
        return True

    # -- actions ---------------------------------------------------------------------------------

    def action_idle_escape(self) -> None:
        """Escape twice on an empty prompt opens the rewind picker."""
        now = time.monotonic()
        if now - self._last_idle_escape < 1.0:
            self._last_idle_escape = 0.0
            self.open_rewind()
        else:
            self._last_idle_escape = now

    def action_cancel_turn(self) -> None:
        if self.running:
            # The queue goes back to the prompt first, so the turn's end doesn't send it.
            self._unqueue()
            # A turn under way is stopped by the session, which stores it as cancelled; a turn
            # still waiting for the session to load has nothing to store.
            if not self.session.interrupt():
                self.workers.cancel_group(self, "turn")
            self.notify("Turn cancelled.", timeout=2)
        self.prompt.focus()  # so the user can steer at once

    def open_rewind(self) -> None:
        """The rewind picker for this conversation (also: escape twice on an empty prompt)."""
        session = self.session
        if session.store is None or session.conversation_id is None:
            self.notify("Nothing to rewind yet: no turn of this conversation is stored.", timeout=3)
            return
        if self.running:
            self.notify("Cancel the running turn first (escape).", severity="warning")
            return
        from tui_assist.ui.screens.rewind import RewindScreen

        folder = data_dir(session.settings.data_dir)
        self.app.push_screen(
            RewindScreen(session.store, folder, session.conversation_id), self._rewind_chosen
        )

    def _rewind_chosen(self, choice: RewindChoice | None) -> None:
        if choice is not None:
            self.rewind(choice)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def rewind(self, choice: RewindChoice) -> None:
        from tui_assist.session.rewind import RewindError, apply_rewind

        session = self.session
        assert session.store is not None and session.conversation_id is not None
        try:
            done = await apply_rewind(session.store, data_dir(session.settings.data_dir), choice.plan)
        except RewindError as exc:
            self.conversation.add_notice(f"**Rewind failed:** {exc}", classes="-error")
            return
        kept = [k.path for k in done.kept if k.reason == "changed_by_user"]
        lines = [f"**Rewound:** {len(done.restored)} file(s) restored, {len(done.deleted)} deleted"]
        if kept:
            lines.append(f"kept as you left them: {', '.join(kept)}")
        if done.turns:
            await self._redraw(session.conversation_id)
            self.prompt.restore(choice.prompt)
            lines.append(f"{len(done.turns)} turn(s) taken out of the conversation; the prompt is back")
        self.conversation.add_notice("; ".join(lines) + ".")

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
        key = self.tui_app.interrupt_key
        self.notify(f"press {key} again to quit", timeout=QUIT_PRESS_SECONDS)
        self.set_timer(QUIT_PRESS_SECONDS, self._disarm_quit)

    def _disarm_quit(self) -> None:
        self._quit_armed = False

    def action_cycle_mode(self) -> None:
        """Approvals: default (ask) -> accept-edits -> plan -> default."""
        mode = self.session.approvals.next_mode()
        self.status.mode = mode
        from tui_assist.core.approval import describe_mode

        self.notify(f"Mode {mode}: {describe_mode(mode)}", timeout=2)

    def action_toggle_refine(self) -> None:
        self.set_refine(not self.session.refine)

    def set_refine(self, on: bool) -> None:
        """Turn Refine mode on or off, show it, and remember it for the next start."""
        session = self.session
        session.refine = on
        self.status.refine = on
        self.notify(f"Refine {'ON' if on else 'OFF'} (≤{session.rounds} rounds)", timeout=1.5)
        cast("TuiAssistApp", self.app).save_preferences(refine=on)

    def set_rounds(self, rounds: int) -> None:
        self.session.rounds = rounds
        self.status.rounds = rounds
        self.notify(f"Refine round budget: {rounds}", timeout=1.5)

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

    def action_find(self) -> None:
        """Search the conversation pane (the bar opens above the prompt)."""
        from tui_assist.ui.widgets.conversation_search import ConversationSearch  # not for the first frame

        bars = self.query(ConversationSearch)
        if bars:
            bar = bars.first()
        else:
            bar = ConversationSearch(self.conversation, id="search")
            self.query_one("#chat").mount(bar, before=self.query_one(Prompt))
        self.call_after_refresh(bar.open)

    def on_conversation_search_closed(self) -> None:
        self.query_one(Prompt).focus()

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
        turns = list(self.log_model.turns)
        for turn_id in reversed(turns):
            rounds = self.log_model.rounds(turn_id)
            if rounds:
                self.open_round(rounds[-1].node_id)
                return
        self.notify("No refine rounds to review yet: turn Refine on with ctrl+r.", timeout=3)

    def open_round(self, round_id: str) -> None:
        from tui_assist.ui.screens.round_review import RoundReviewScreen

        self.app.push_screen(RoundReviewScreen(self.log_model, round_id))

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

    def action_new_conversation(self) -> None:
        if self.running:
            self.notify("Cancel the running turn first (escape).", severity="warning")
            return
        self.session.new_conversation()
        self.status.context = None
        self.failed_prompt = None
        self._show_meter()
        self.conversation.clear_all()
        self._clear_tree()
        self._show_fresh(True)
        self.flow.show_turn(None)
        self.query_one(NodeInspector).show(None)
        self.notify("New conversation.", timeout=1.5)

    def action_resume_conversation(self, query: str = "") -> None:
        if self.session.store is None:
            self.notify("No stored conversations: the store is not available.", severity="warning")
            return
        if self.running:
            self.notify("Cancel the running turn first (escape).", severity="warning")
            return

        from tui_assist.ui.screens.resume import ResumeScreen

        def chosen(conversation_id: str | None) -> None:
            if conversation_id:
                self.resume(conversation_id)

        self.app.push_screen(ResumeScreen(self.session.store, query=query), chosen)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def resume(self, conversation_id: str) -> None:
        await self._redraw(conversation_id)

    async def _redraw(self, conversation_id: str) -> bool:
        """Open a stored conversation and redraw its newest turns; False when it can't be."""
        try:
            turns = await self.session.resume(conversation_id)
        except Exception as exc:
            self.notify(f"Cannot resume: {exc}", severity="error")
            return False
        self.status.context = self.session.context_fill
        self.failed_prompt = None
        self._show_meter()
        self.conversation.clear_all()
        self._clear_tree()
        self._show_fresh(True)
        self.flow.show_turn(None)
        self.query_one(NodeInspector).show(None)
        for turn in turns:
            if turn.events:
                # Replay the stored event log through the same path live events take, so the
                # turn is redrawn as it ran: streamed text, tool calls, rounds, tree and badges.
                self.conversation.begin_turn(turn.prompt, turn.strategy)
                for event in turn.events:
                    self.apply_event(event, replay=True)
            else:
                self.conversation.show_history([(turn.prompt, turn.answer)])
            await asyncio.sleep(0)
        self.notify(f"Resumed {len(turns)} turn(s).", timeout=2)
        return True

    @work(group="start", exit_on_error=False)
    async def open_at_start(self, start: StartOptions) -> None:
        """Open the conversation the command line asked for, then send its prompt (if any)."""
        if start.resume == "":
            from tui_assist.ui.screens.resume import ResumeScreen

            store = self.session.store
            chosen = await self.app.push_screen_wait(ResumeScreen(store)) if store is not None else None
            if chosen:
                await self._redraw(chosen)
        elif start.continue_latest or start.resume:
            from tui_assist.store.base import UnknownIdError

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
        if start.prompt:
            self.submit(start.prompt)
