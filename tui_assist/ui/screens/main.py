"""The main screen: conversation and prompt, the live agent tree and flow panel, the status bar.

Core events arrive as `CoreEvent` messages and are pushed down to the widgets; turns run in an
exclusive worker, so `escape` cancels exactly the running turn.
"""

from __future__ import annotations

import asyncio
import gc
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

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
from tui_assist.core.tree import NodeLog
from tui_assist.paths import data_dir
from tui_assist.ui.bridge import CoreEvent, TextualObserver
from tui_assist.ui.setup_help import provider_notice
from tui_assist.ui.widgets.conversation import Conversation, TurnView
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.node_inspector import NodeInspector
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.streaming_markdown import warm_up as warm_up_markdown

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.widgets.agent_tree import AgentTree

NARROW_WIDTH = 80
"""Below this many columns the side panels, when open, take the screen instead of the chat."""
MEDIUM_WIDTH = 100
"""Below this many columns the side panels start hidden and open narrow beside the chat (f2 / f3)."""
FOOTER_WAIT = 0.5
"""Seconds loading waits at most for the footer's keys."""
TREE_HINT = "agent tree · empty until the first turn"


class MainScreen(Screen[None]):
    """The chat."""

    # Layout lives in main.tcss beside this module; the app loads it (see TuiAssistApp.CSS_PATH).
    AUTO_FOCUS = "#prompt"
    BINDINGS = [
        Binding("ctrl+r", "toggle_refine", "Refine", id="toggle-refine", priority=True),
        Binding("escape", "cancel_turn", "Cancel turn", id="cancel-turn", priority=True),
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

    def __init__(self, session: ChatSession) -> None:
        super().__init__(classes="-fresh")
        self.session = session
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
                yield Prompt(id="prompt")
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
        self.call_after_refresh(self.load_session)  # the frame with the keys is on screen

    # -- widgets ---------------------------------------------------------------------------------

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
        if not self.running:
            self.status.state = "idle"
        if (notice := provider_notice(session)) is not None:
            self.conversation.add_notice(notice, classes="-setup")
        self._show_notes()

    def _show_session(self, workdir: Path) -> None:
        status = self.status
        status.refine = self.session.refine
        status.rounds = self.session.rounds
        status.model = self.session.model
        status.workdir = workdir

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
            self.session.meter.add(event.usage, self.session.price(event.model or None))
            self._show_meter()

    def _show_meter(self) -> None:
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
            observer = TextualObserver(self, self.app)
            outcome = await session.run_turn(prompt, observer)
            result = outcome.result
            if result.outcome == "cancelled":
                self.call_later(view.mark_cancelled)
            elif result.outcome == "error":
                # The turn's badge shows the error, once, where it happened.
                self._offer_retry(prompt, view)
            for warning in outcome.warnings:
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
        if event.worker is self._turn_worker:
            self.refresh_bindings()
            view, self._retry_view = self._retry_view, None
            if view is not None and self.failed_prompt is not None and not self.running:
                # The retry key is enabled now (and the keymap may have moved it): name it.
                keys = [b.binding for b in self.active_bindings.values() if b.binding.action == "retry_turn"]
                view.offer_retry(self.app.get_key_display(keys[0]) if keys else "the retry key")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            # With the focus in the search bar, escape closes the bar first.
            searching = self.focused is not None and any(
                node.id == "search" for node in self.focused.ancestors_with_self
            )
            return self.running and not searching
        if action == "approve_flow":
            return self.held_run_id is not None
        if action == "retry_turn":
            return self.failed_prompt is not None and not self.running
        return True

    # -- actions ---------------------------------------------------------------------------------

    def action_cancel_turn(self) -> None:
        if self.running:
            # A turn under way is stopped by the session, which stores it as cancelled; a turn
            # still waiting for the session to load has nothing to store.
            if not self.session.interrupt():
                self.workers.cancel_group(self, "turn")
            self.notify("Turn cancelled.", timeout=2)

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
        self.failed_prompt = None
        self._show_meter()
        self.conversation.clear_all()
        self._clear_tree()
        self._show_fresh(True)
        self.flow.show_turn(None)
        self.query_one(NodeInspector).show(None)
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

    # -- flows ---------------------------------------------------------------------------------------

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
                self._turn_worker = self.run_grounded_flow(
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

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_grounded_flow(
        self, corpus: Path, question: str, *, leaves: str = "rules", data: Path | None = None
    ) -> None:
        """Run the grounded flow with `rules` or `model` leaves (as `tui-assist flow grounded` does)."""
        from tui_assist.flows import grounded
        from tui_assist.flows.grounded import CorpusIndex, SqlSource, default_index_path

        session = self.session
        using = f"corpus `{corpus}`" + (f", data `{data}`" if data is not None else "") + f", {leaves} leaves"
        self.conversation.add_notice(f"**grounded question** ({using}): {question}")
        # The form checked these; the files may have moved since.
        if not corpus.is_dir():
            self.conversation.add_notice(f"**Cannot ask:** `{corpus}` is not a folder.", classes="-error")
            return
        if data is not None and not data.is_file():
            self.conversation.add_notice(f"**Cannot ask:** `{data}` is not a file.", classes="-error")
            return
        await session.wait_ready()
        if leaves == "model" and session.provider is None:
            self.conversation.add_notice("**Cannot ask:** model leaves need a provider.", classes="-error")
            return
        self.status.state = "running"
        self._flow_running = True
        sql: SqlSource | None = None
        try:
            glossary = grounded.load_glossary(corpus)
            if data is not None:
                sql = await SqlSource.open(data)
            index_path = default_index_path(data_dir(session.settings.data_dir), corpus)
            async with await CorpusIndex.open(corpus, index_path) as index:
                await index.refresh()
                run = await grounded.run_grounded(
                    question,
                    index=index,
                    sql=sql,
                    glossary=glossary,
                    leaves="model" if leaves == "model" else "rules",
                    provider=session.provider if leaves == "model" else None,
                    observer=TextualObserver(self, self.app),
                    store=session.store,
                    caller="tui",
                )
        except Exception as exc:  # a bad corpus, glossary or database must not take the chat down
            self.conversation.add_notice(f"**The grounded flow failed:** `{exc}`", classes="-error")
            return
        finally:
            self._flow_running = False
            self.status.state = "idle"
            if sql is not None:
                await sql.close()
        state = run.state
        if state.outcome == "awaiting_approval":
            self.held_run_id = state.run_id if session.store is not None else None
        self.conversation.add_notice(grounded_markdown(state, approvable=self.held_run_id is not None))
        self.call_later(self.refresh_bindings)

    def action_approve_flow(self) -> None:
        if self.held_run_id is None:
            self.notify("No grounded run is awaiting approval.", timeout=2)
            return
        self._turn_worker = self.approve_held_run(self.held_run_id)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def approve_held_run(self, run_id: str) -> None:
        from tui_assist.flows import grounded

        store = self.session.store
        if store is None:
            return
        self._flow_running = True
        try:
            run = await grounded.approve_run(run_id, store=store, observer=TextualObserver(self, self.app))
        except grounded.ApprovalError as exc:
            self.notify(f"Cannot approve: {exc}", severity="error")
            return
        finally:
            self._flow_running = False
        self.held_run_id = None
        self.conversation.add_notice("**approved** · " + grounded_markdown(run.state, approvable=False))
        self.call_later(self.refresh_bindings)

    # -- MCP -----------------------------------------------------------------------------------------

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


def grounded_markdown(state: Any, *, approvable: bool) -> str:
    """A grounded run for the conversation pane: the answer with its citations, or why it stopped."""
    from tui_assist.flows.grounded import Passage, format_run

    head = f"**grounded** · `{state.outcome}` · run `{state.run_id[:8]}`\n\n"
    sources = [
        f"- `[{s.chunk_id}]` {s.title}{' › ' + s.heading if s.heading else ''}"
        if isinstance(s, Passage)
        else f"- `[{s.id}]` `{s.query}`"
        for s in state.cited_sources()
    ]
    cited = "\n\n**Sources**\n\n" + "\n".join(sources) if sources else ""
    match state.outcome:
        case "answered" | "unverified":
            note = f"\n\n*unverified:* {state.note}" if state.outcome == "unverified" else ""
            return head + state.answer + cited + note
        case "awaiting_approval":
            how = (
                "Press **f8** (or *flow: approve held run* in the palette) to approve it."
                if approvable
                else f"Approve it with `tui-assist flow approve {state.run_id}`."
            )
            reasons = ", ".join(state.approval_reasons)
            return f"{head}**Held for approval** ({reasons}); nothing was sent. {how}\n\n{state.draft}{cited}"
        case _:
            return head + format_run(state)
