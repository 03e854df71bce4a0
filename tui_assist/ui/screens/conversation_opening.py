"""Opening conversations on the main screen: a new one, a stored one (resume), an earlier point (rewind).

Resume and rewind are runs of the session's controller (escape cancels them); this object does
their work on the screen: reading a page of stored turns, replaying their events into the same
views a live turn builds, then reading the whole history the next turn sends.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from tui_assist.core.events import TextDelta, ThinkingDelta, TurnEvent

if TYPE_CHECKING:
    from tui_assist.core.tree import NodeRecord
    from tui_assist.session.runs import Run
    from tui_assist.ui.screens.main import MainScreen
    from tui_assist.ui.screens.rewind import RewindChoice

PAINT_WAIT = 2.0
"""Seconds a resume waits at most for its newest turns to be drawn before reading the rest."""


class ConversationOpening:
    """Starts, resumes and rewinds the conversation `MainScreen` shows."""

    def __init__(self, screen: MainScreen) -> None:
        """Open conversations on `screen`."""
        self._screen = screen

    def refuse_while_running(self) -> bool:
        screen = self._screen
        if screen.running:
            screen.notify("Cancel the running turn first (escape).", severity="warning")
        return screen.running

    def new_conversation(self) -> None:
        screen = self._screen
        if self.refuse_while_running() or not screen.controller.new_conversation():
            return
        screen.show_empty_conversation()
        screen.notify("New conversation.", timeout=1.5)

    def choose_conversation(self, query: str = "") -> None:
        screen = self._screen
        history = screen.session.history
        if history is None:
            screen.notify("No stored conversations: the store is not available.", severity="warning")
            return
        if self.refuse_while_running():
            return
        from tui_assist.ui.screens.resume import ResumeScreen

        def chosen(conversation_id: str | None) -> None:
            if conversation_id:
                self.resume(conversation_id)

        screen.app.push_screen(ResumeScreen(history, query=query), chosen)

    def resume(self, conversation_id: str) -> Run | None:
        """Open a stored conversation, as a run (escape cancels it)."""
        return self._screen.controller.start("resume", conversation_id, lambda: self.redraw(conversation_id))

    async def redraw(self, conversation_id: str) -> bool:
        """Open a stored conversation and redraw its newest turns; False when it can't be.

        The newest turns are read and painted first; the whole history (what the next turn
        sends, the meter, the context fill) is read after, so the last answer shows as soon at
        any length.
        """
        screen = self._screen
        session = screen.session
        try:
            turns = await session.stored_page(conversation_id)
        except Exception as exc:
            screen.notify(f"Cannot resume: {exc}", severity="error")
            return False
        screen.show_empty_conversation()
        for_panels: list[tuple[TurnEvent, NodeRecord | None]] = []
        # One layout draws them all, at the end: none before every view is mounted.
        with screen.app.batch_update():
            for turn in turns:
                if turn.events:
                    # Replay the stored event log through the same path live events take, so the
                    # turn is redrawn as it ran: streamed text, tool calls, rounds, tree and badges.
                    view = screen.conversation.begin_turn(turn.prompt, turn.strategy, images=turn.images)
                    view.seq = turn.seq
                    for event in turn.events:
                        record = screen.apply_to_conversation(event)
                        if not isinstance(event, TextDelta | ThinkingDelta):
                            for_panels.append((event, record))
                else:
                    screen.conversation.show_stored(turn)
            screen.conversation.anchor()
            await screen.conversation.mounted()
        # Only the newest turns are read; earlier ones load as the user scrolls up.
        from tui_assist.ui.widgets.earlier_turns import pages_of

        screen.conversation.offer_earlier(pages_of(session, conversation_id), turns[0].seq if turns else None)
        # The last answer on screen first (bounded: a screen on top of this one draws instead);
        # the tree and the flow panel after it (the tree's first mount would hold the answer back).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(screen.conversation.wait_for_refresh(), PAINT_WAIT)
        for event, record in for_panels:
            screen.apply_to_panels(event, record)
        try:
            await session.load_history(conversation_id)
        except Exception as exc:
            screen.show_empty_conversation()  # nothing shown that the next turn would not send
            screen.notify(f"Cannot resume: {exc}", severity="error")
            return False
        screen.status.context = session.context_fill
        screen.status.model = session.model  # the last turn's, as the session now goes on with
        screen.host.show_meter()
        screen.notify(f"Resumed {len(turns)} turn(s).", timeout=2)
        return True

    def open_rewind(self) -> None:
        """The rewind picker for this conversation (also: escape twice on an empty prompt)."""
        screen = self._screen
        history, conversation_id = screen.session.history, screen.session.conversation_id
        if history is None or conversation_id is None:
            screen.notify("Nothing to rewind yet: no turn of this conversation is stored.", timeout=3)
            return
        if self.refuse_while_running():
            return
        from tui_assist.ui.screens.rewind import RewindScreen

        screen.app.push_screen(RewindScreen(history, conversation_id), self._rewind_chosen)

    def _rewind_chosen(self, choice: RewindChoice | None) -> None:
        if choice is not None:
            self._screen.controller.start("rewind", choice.prompt, lambda: self._rewind(choice))

    async def _rewind(self, choice: RewindChoice) -> None:
        screen = self._screen
        from tui_assist.session.rewind import RewindError

        history, conversation_id = screen.session.history, screen.session.conversation_id
        assert history is not None and conversation_id is not None
        try:
            done = await history.rewind(choice.plan)
        except RewindError as exc:
            screen.conversation.add_notice(f"**Rewind failed:** {exc}", classes="-error")
            return
        kept = [k.path for k in done.kept if k.reason == "changed_by_user"]
        lines = [f"**Rewound:** {len(done.restored)} file(s) restored, {len(done.deleted)} deleted"]
        if kept:
            lines.append(f"kept as you left them: {', '.join(kept)}")
        if done.turns:
            await self.redraw(conversation_id)
            screen.prompt.restore(choice.prompt)
            lines.append(f"{len(done.turns)} turn(s) taken out of the conversation; the prompt is back")
        screen.conversation.add_notice("; ".join(lines) + ".")
