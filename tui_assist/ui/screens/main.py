"""The main screen: conversation and prompt, the live agent tree and flow panel, the status bar.

This module holds the screen's keys and its life: the widgets it composes, the first frame and
the loading after it (kept light: see "First paint before heavy imports" in docs/architecture.md),
opening what the command line asked for, the layout for the terminal's width, what the prompt
sends (a text starting with `/` is a command of `tui_assist.ui.slash_commands`, anything else a
turn), and the actions that only change what is shown. The rest comes from base classes, one
concern each: `main_base` (the widgets, the state the parts share, core events pushed down to the
widgets), `main_turns` (the running turn, the queue behind it, retry, cancel), `main_conversations`
(new, resume, rewind) and `main_flows` (flows, MCP, the export).
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import Footer, Static

from tui_assist.core.tree import NodeLog
from tui_assist.session.factory import SetupError
from tui_assist.ui.screens.main_base import TREE_HINT
from tui_assist.ui.screens.main_conversations import ConversationActions
from tui_assist.ui.screens.main_flows import FlowActions
from tui_assist.ui.screens.main_turns import TurnActions
from tui_assist.ui.setup_help import provider_notice
from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.footer import KeysFooter
from tui_assist.ui.widgets.node_inspector import NodeInspector
from tui_assist.ui.widgets.prompt import Prompt, PromptBox
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.streaming_markdown import warm_up as warm_up_markdown

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.slash_commands import SlashCommands
    from tui_assist.ui.widgets.agent_tree import AgentTree

NARROW_WIDTH = 80
"""Below this many columns the side panels, when open, take the screen instead of the chat."""
MEDIUM_WIDTH = 100
"""Below this many columns the side panels start hidden and open narrow beside the chat (f2 / f3)."""
FOOTER_WAIT = 0.5
"""Seconds loading waits at most for the footer's keys."""


@dataclass(frozen=True, slots=True)
class StartOptions:
    """Where the chat starts (`tui-assist "PROMPT"`, `--continue`, `--resume [ID]`)."""

    prompt: str | None = None
    """Sent as the first prompt, once the conversation is open."""
    continue_latest: bool = False
    """Open the most recent conversation."""
    resume: str | None = None
    """Open this conversation (an id or a prefix of one); "" opens the picker."""


class MainScreen(TurnActions, ConversationActions, FlowActions):
    """The chat: its keys, its widgets, its start; the actions come from its parts."""

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
        # The state the parts share or own (declared, with what it means, on each part).
        self._slash: SlashCommands | None = None
        self._tree = None
        self._queued = []
        self._last_turn_failed = False
        self._quit_armed = False
        self._last_idle_escape = 0.0
        self.log_model = NodeLog()
        self._tick = None
        self._turn_worker = None
        self._flow_running = False
        self._flow_roots = set()
        self.held_run_id = None
        self.failed_prompt = None
        self._retry_view = None

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
        yield KeysFooter()

    # -- first frame, loading, start ------------------------------------------------------------

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

    def on_mount(self) -> None:
        self._show_session(self.session.preview.workdir)
        self.status.state = "loading"
        self._layout_for(self.size.width)
        self.call_after_refresh(self._after_first_frame)

    @work(group="load", exit_on_error=False)
    async def load_session(self) -> None:
        # A conversation asked for on the command line is redrawn as soon as the store is open,
        # before the SDK loads (its import would compete with the redraw for the interpreter).
        opening = bool(self.start.resume or self.start.continue_latest)
        await self.session.load(after_store=self._open_stored if opening else None)
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

    @work(group="start", exit_on_error=False)
    async def open_at_start(self, start: StartOptions) -> None:
        """Open the conversation the command line asked for, then send its prompt (if any)."""
        if start.resume == "":
            from tui_assist.ui.screens.resume import ResumeScreen

            store = self.session.store
            chosen = await self.app.push_screen_wait(ResumeScreen(store)) if store is not None else None
            if chosen:
                await self._redraw(chosen)
        if start.prompt:
            self.submit(start.prompt)

    async def _open_stored(self) -> None:
        """Redraw the conversation `--resume ID` or `--continue` asked for (`load` calls it)."""
        start = self.start
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

    # -- the prompt -----------------------------------------------------------------------------

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
            # Idle, escape on an empty prompt (no completion open) counts toward a rewind.
            completions = self.prompt.completions
            return not self.running and not self.prompt.text and not (completions and completions.is_open)
        if action == "approve_flow":
            return self.held_run_id is not None
        if action == "retry_turn":
            return self.failed_prompt is not None and not self.running
        return True

    # -- view actions ---------------------------------------------------------------------------

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
