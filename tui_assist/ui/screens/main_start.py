"""The main screen's start-up: the first frame, loading the session, and what the command line opens.

The first frame is kept light (see "First paint before heavy imports" in docs/architecture.md):
the session's parts and the Markdown parser load after it, and a conversation asked for on the
command line (`--resume`, `--continue`) is redrawn as soon as the store is open.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
from typing import TYPE_CHECKING

from textual.widgets import Footer

from tui_assist.ui.setup_help import provider_notice
from tui_assist.ui.widgets.prompt import PromptBox
from tui_assist.ui.widgets.tasks import TasksStrip

if TYPE_CHECKING:
    from pathlib import Path

    from tui_assist.ui.screens.main import MainScreen, StartOptions

FOOTER_WAIT = 0.5
"""Seconds loading waits at most for the footer's keys."""


class StartUp:
    """Brings `MainScreen` from its first frame to a loaded session and an open conversation."""

    def __init__(self, screen: MainScreen) -> None:
        """Start `screen` up (`after_first_frame` begins)."""
        self._screen = screen
        self._markdown_loaded: asyncio.Future[None] | None = None
        """The Markdown parser's and Pygments' loading, when it started while the session loads."""

    def after_first_frame(self) -> None:
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
            from tui_assist.ui.widgets.streaming_markdown import defer_highlighting

            defer_highlighting()
            self._screen.call_next(self._after_drawn)
        else:
            self._load_when_drawn(FOOTER_WAIT)

    @property
    def _opening(self) -> bool:
        """Whether the command line asked to open a stored conversation (`--resume`, `--continue`)."""
        return bool(self._screen.start.resume or self._screen.start.continue_latest)

    def _load_when_drawn(self, wait: float) -> None:
        """Start loading once the whole screen is drawn, footer keys included (they are in the first
        frame unless the terminal lacks focus, see `KeysFooter`): loading (threads importing the
        SDK hold the GIL) would visibly delay them."""
        screen = self._screen
        footers = screen.query(Footer)
        if wait > 0 and footers and not any(key.region for key in footers.first().children):
            screen.set_timer(0.01, lambda: self._load_when_drawn(wait - 0.01))
            return
        screen.call_after_refresh(self._after_drawn)  # the frame with the keys is on screen

    async def _after_drawn(self) -> None:
        if self._opening:
            self.load_session()  # the redraw first
            # While its store opens in a thread (waiting on the disk more than the interpreter),
            # the redraw's Markdown parser loads here instead of after.
            await asyncio.sleep(0)
            from tui_assist.ui.widgets.streaming_markdown import load_parser

            load_parser()
            return  # the prompt is equipped once the conversation shows (see `_open_stored`)
        await self._equip_prompt()
        self.load_session()

    async def _equip_prompt(self) -> None:
        """Give the prompt its history and its completion list (after the first frame, too)."""
        screen = self._screen
        from tui_assist.session.prompt_history import HistoryBrowser
        from tui_assist.ui.mention_completion import MentionCompletion
        from tui_assist.ui.model_completion import ModelCompletion
        from tui_assist.ui.slash_commands import SlashCompletion
        from tui_assist.ui.widgets.completion import CompletionList

        prompt = screen.prompt
        prompt.completions = CompletionList(id="completions")
        await screen.query_one(PromptBox).mount(prompt.completions, before=0)
        prompt.prompt_history = HistoryBrowser(screen.session.prompt_history)
        prompt.sources = [
            SlashCompletion(screen.slash),
            ModelCompletion(screen.session),
            MentionCompletion(self._screen),
        ]

    def load_session(self) -> None:
        """Load the session's parts in a worker, then what the first turn needs."""
        self._screen.run_worker(self._load_session(), group="load", exit_on_error=False)

    async def _load_session(self) -> None:
        # A conversation asked for on the command line is redrawn as soon as the store is open,
        # before the SDK loads (its import would compete with the redraw for the interpreter).
        await self._screen.session.load(after_store=self._open_stored if self._opening else None)
        # The Markdown parser and Pygments, so the first answer doesn't pay for loading them (for
        # a conversation to redraw, they load once it shows, and its code is highlighted then).
        from tui_assist.ui.widgets.streaming_markdown import warm_up

        await (self._markdown_loaded or asyncio.to_thread(warm_up))
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
        screen = self._screen
        session = screen.session
        settings = session.settings
        if settings.keymap:
            screen.app.set_keymap(settings.keymap)
        self._show_session(settings.workdir)
        screen.query_one(TasksStrip).follow(session.shells)
        screen.status.sandboxed = session.sandbox_description.startswith("sandbox: workspace")
        if not screen.running:
            screen.status.state = "idle"
        if (notice := provider_notice(session)) is not None:
            screen.conversation.add_notice(notice, classes="-setup")
        screen.show_notes()
        from tui_assist.ui.status_line import start_status_line

        screen.status_line = start_status_line(self._screen)
        self.open_at_start(screen.start)

    def _show_session(self, workdir: Path) -> None:
        screen = self._screen
        status = screen.status
        status.refine = screen.session.refine
        status.rounds = screen.session.rounds
        status.model = screen.session.model
        screen.show_workdir(workdir)
        status.mode = screen.session.approvals.mode
        screen.host.show_meter()  # the tokens and cost so far, and the cap

    def open_at_start(self, start: StartOptions) -> None:
        """Open what the command line asked for (in a worker: it may wait for a modal)."""
        self._screen.run_worker(self._open_at_start(start), group="start", exit_on_error=False)

    async def _open_at_start(self, start: StartOptions) -> None:
        """Open the conversation the command line asked for, then send its prompt (if any)."""
        screen = self._screen
        from tui_assist.ui.screens.trust import ask_project_trust

        await ask_project_trust(screen.app, screen.session)  # before anything of the project runs
        if start.resume == "":
            from tui_assist.ui.screens.resume import ResumeScreen

            history = screen.session.history
            chosen = await screen.app.push_screen_wait(ResumeScreen(history)) if history is not None else None
            if chosen:
                await screen.opening.redraw(chosen)
        if start.prompt:
            screen.submit(start.prompt)

    async def _open_stored(self) -> None:
        """Redraw the conversation `--resume ID` or `--continue` asked for (`load` calls it)."""
        try:
            await self._redraw_stored()
        finally:
            self._screen.conversation.drop_snapshot()  # (a conversation that could not be opened)

    async def _redraw_stored(self) -> None:
        screen = self._screen
        start = screen.start
        from tui_assist.session.factory import SetupError
        from tui_assist.session.history import UnknownIdError

        try:
            found = await screen.session.find_conversation(start.resume or None)
        except (SetupError, UnknownIdError) as exc:
            screen.conversation.add_notice(f"**Cannot open the conversation:** {exc}", classes="-error")
            found = None
        else:
            if found is None:
                screen.notify("No earlier conversation: this is a new one.", timeout=3)
        if found is not None and await screen.opening.redraw(found):
            screen.kept_pane.keep_soon()
        # Not before: the completion list's mount is a layout of the screen, and the modules it
        # imports, the conversation's first paint would wait for.
        await self._equip_prompt()
        from tui_assist.ui.widgets.streaming_markdown import highlight_deferred, warm_up

        self._markdown_loaded = asyncio.ensure_future(asyncio.to_thread(warm_up))
        self._markdown_loaded.add_done_callback(lambda _: highlight_deferred())  # not after the SDK
