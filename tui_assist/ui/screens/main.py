"""The main screen: conversation and prompt, the live agent tree and flow panel, the status bar.

Core events arrive as `CoreEvent` messages and are pushed down to the widgets; turns run in an
exclusive worker, so `escape` cancels exactly the running turn.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import time
from datetime import datetime
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from tui_assist.core.events import NodeStarted, TextDelta, TurnEvent, UsageRecorded
from tui_assist.paths import config_file, data_dir
from tui_assist.ui.bridge import CoreEvent, TextualObserver
from tui_assist.ui.node_log import NodeLog
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui_assist.ui.session import ChatSession

NARROW_WIDTH = 80
"""Below this many columns the side panels collapse."""


class MainScreen(Screen[None]):
    """The chat."""

    # Layout lives in main.tcss beside this module; the app loads it (see TuiAssistApp.CSS_PATH).
    AUTO_FOCUS = "#prompt"
    BINDINGS = [
        Binding("ctrl+r", "toggle_refine", "Refine", id="toggle-refine", priority=True),
        Binding("escape", "cancel_turn", "Cancel turn", id="cancel-turn", priority=True),
        Binding("ctrl+n", "new_conversation", "New", id="new-conversation"),
        Binding("ctrl+o", "resume_conversation", "Resume", id="resume-conversation"),
        Binding("f2", "toggle_tree", "Tree", id="toggle-tree"),
        Binding("f3", "toggle_flow", "Flow", id="toggle-flow"),
        Binding("f4", "review_round", "Review round", id="review-round"),
        Binding("f5", "copy_answer", "Copy answer", id="copy-answer"),
    ]

    def __init__(self, session: ChatSession) -> None:
        super().__init__()
        self.session = session
        self.log_model = NodeLog()
        self._tick: Timer | None = None
        self._turn_worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Conversation(id="conversation")
                yield Prompt(id="prompt")
            with Vertical(id="side"):
                yield Static("agent tree", id="tree-title")
                yield AgentTree(self.log_model, id="tree")
                yield Static("flow", id="flow-title")
                with VerticalScroll(id="flow-scroll"):
                    yield FlowPanel(self.log_model, id="flow")
        yield StatusBar(id="status")
        yield Footer()

    # -- widgets ---------------------------------------------------------------------------------

    @property
    def conversation(self) -> Conversation:
        return self.query_one(Conversation)

    @property
    def agent_tree(self) -> AgentTree:
        return self.query_one(AgentTree)

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
        session = self.session
        status = self.status
        status.refine = session.refine
        status.rounds = session.rounds
        status.model = session.model
        status.workdir = session.settings.workdir
        status.state = "loading"
        self._layout_for(self.size.width)
        # Heavy imports (the SDK, tools, the store) wait until the first frame is on screen.
        self.call_after_refresh(self._start_loading)

    def _start_loading(self) -> None:
        self.load_session()

    @work(group="load", exit_on_error=False)
    async def load_session(self) -> None:
        await self.session.load()
        # The Markdown parser, too, so the first answer doesn't pay for importing it.
        await asyncio.to_thread(importlib.import_module, "rich.markdown")
        # Everything alive now (modules, the SDK, the app's widgets) lives for the whole session.
        # Freezing it keeps Python's full collections from scanning it again and again: with the
        # SDK loaded, each full collection otherwise stalls the event loop for 50-100+ ms.
        gc.freeze()
        self._after_load()

    def _after_load(self) -> None:
        session = self.session
        status = self.status
        status.model = session.model
        if not self.running:
            status.state = "idle"
        if session.provider_problem:
            self.conversation.add_notice(
                session.provider_problem.format(config=config_file()), classes="-setup"
            )
        self._show_notes()

    def _show_notes(self) -> None:
        while self.session.notes:
            self.notify(self.session.notes.pop(0), severity="warning", timeout=6)

    def on_resize(self, event: Resize) -> None:
        self._layout_for(event.size.width)

    def _layout_for(self, width: int) -> None:
        self.set_class(0 < width < NARROW_WIDTH, "-narrow")

    # -- core events -----------------------------------------------------------------------------

    @on(CoreEvent)
    def _route(self, message: CoreEvent) -> None:
        self.apply_event(message.deliver())

    def apply_event(self, event: TurnEvent, *, replay: bool = False) -> None:
        """Push one core event down to the widgets (`replay`: from the store, not spent now)."""
        record = self.log_model.apply(event)
        self.conversation.apply(event)
        if isinstance(event, TextDelta):
            return
        self.agent_tree.apply(event, record)
        if isinstance(event, NodeStarted) and event.parent_id is None:
            self.flow.show_turn(event.node_id)
        else:
            self.flow.changed()
        if isinstance(event, UsageRecorded) and not replay:
            self.session.meter.add(event.usage, self.session.price(event.model or None))
            self.status.usage = self.session.meter.usage
            self.status.cost = self.session.meter.cost

    # -- turns -----------------------------------------------------------------------------------

    @on(Prompt.Submitted)
    def _send(self, event: Prompt.Submitted) -> None:
        if self.running:
            self.notify("A turn is running: wait for it, or press escape to cancel it.", severity="warning")
            event.prompt.insert(event.text)
            return
        self._turn_worker = self.run_turn(event.text)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str) -> None:
        session = self.session
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
            observer = TextualObserver(self, self.app)
            result = await session.run_turn(prompt, observer)
            if result.outcome == "error" and result.error:
                self.notify(result.error, title="turn failed", severity="error", timeout=8)
        except asyncio.CancelledError:
            self.call_later(view.mark_cancelled)
            raise
        except Exception as exc:  # a bug must not take the conversation down with it
            self.conversation.add_notice(f"**The turn failed:** `{exc}`", classes="-error")
            self.call_later(view.mark_cancelled)
        finally:
            if self._tick is not None:
                self._tick.stop()
                self._tick = None
            self.query_one(Prompt).remove_class("-running")
            status.state = "idle"
            self._show_notes()
            self.call_later(self.refresh_bindings)

    def _on_tick(self) -> None:
        self.agent_tree.tick()
        self.flow.changed()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._turn_worker:
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.running
        return True

    # -- actions ---------------------------------------------------------------------------------

    def action_cancel_turn(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "turn")
            self.notify("Turn cancelled.", timeout=2)

    def action_toggle_refine(self) -> None:
        session = self.session
        session.refine = not session.refine
        self.status.refine = session.refine
        self.notify(f"Refine {'ON' if session.refine else 'OFF'} (≤{session.rounds} rounds)", timeout=1.5)

    def set_rounds(self, rounds: int) -> None:
        self.session.rounds = rounds
        self.status.rounds = rounds
        self.notify(f"Refine round budget: {rounds}", timeout=1.5)

    def action_toggle_tree(self) -> None:
        self._toggle_panel("-tree-hidden")

    def action_toggle_flow(self) -> None:
        self._toggle_panel("-flow-hidden")

    def _toggle_panel(self, hidden_class: str) -> None:
        if self.has_class("-narrow"):
            opening = not self.has_class("-side-open")
            self.set_class(opening, "-side-open")
            if opening:
                self.remove_class(hidden_class)
            return
        self.toggle_class(hidden_class)

    def action_copy_answer(self) -> None:
        answer = self.conversation.last_answer
        if not answer:
            self.notify("No answer to copy yet.", timeout=2)
            return
        self.app.copy_to_clipboard(answer)
        self.notify(f"Copied the last answer ({len(answer)} characters).", timeout=2)

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

    @on(AgentTree.RoundChosen)
    @on(FlowPanel.RoundChosen)
    def _round_chosen(self, event: AgentTree.RoundChosen | FlowPanel.RoundChosen) -> None:
        self.open_round(event.round_id)

    def action_new_conversation(self) -> None:
        if self.running:
            self.notify("Cancel the running turn first (escape).", severity="warning")
            return
        self.session.new_conversation()
        self.conversation.clear_all()
        self.agent_tree.clear_turns()
        self.flow.show_turn(None)
        self.notify("New conversation.", timeout=1.5)

    def action_resume_conversation(self) -> None:
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

        self.app.push_screen(ResumeScreen(self.session.store), chosen)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def resume(self, conversation_id: str) -> None:
        try:
            turns = await self.session.resume(conversation_id)
        except Exception as exc:
            self.notify(f"Cannot resume: {exc}", severity="error")
            return
        self.conversation.clear_all()
        self.agent_tree.clear_turns()
        self.flow.show_turn(None)
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

    def action_export_markdown(self) -> None:
        text = self.session.export_markdown()
        folder = data_dir(self.session.settings.data_dir) / "exports"
        stamp = datetime.fromtimestamp(time.time()).strftime("%Y%m%d-%H%M%S")
        path = folder / f"conversation-{stamp}.md"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Cannot export: {exc}", severity="error")
            return
        self.notify(f"Exported to {path}", timeout=4)
