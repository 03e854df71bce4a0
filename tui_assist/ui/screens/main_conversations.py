"""The main screen's conversation choice: a new one, a stored one (resume), this one rewound.

Opening a stored conversation redraws its newest turns by replaying their stored events through
`apply_event`, the path live events take, so they look as they ran. Rewinding (escape twice on an
empty prompt, or `/rewind`) restores files and takes turns out of this conversation.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual import work

from tui_assist.paths import data_dir
from tui_assist.ui.screens.main_base import MainScreenBase
from tui_assist.ui.widgets.node_inspector import NodeInspector

if TYPE_CHECKING:
    from tui_assist.ui.screens.rewind import RewindChoice


class ConversationActions(MainScreenBase):
    """New, resume and rewind: which conversation the chat shows, and how far back."""

    _last_idle_escape: float
    """When escape was last pressed on an empty, idle prompt (twice in a second: rewind)."""

    def action_new_conversation(self) -> None:
        if self.running:
            self.notify("Cancel the running turn first (escape).", severity="warning")
            return
        self.session.new_conversation()
        self._show_empty_conversation()
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

    def _show_empty_conversation(self) -> None:
        """Empty every view of the conversation, and show the session's meter and context fill."""
        self.status.context = self.session.context_fill
        self.failed_prompt = None
        self._show_meter()
        self.conversation.clear_all()
        self._clear_tree()
        self._show_fresh(True)
        self.flow.show_turn(None)
        self.query_one(NodeInspector).show(None)

    async def _redraw(self, conversation_id: str) -> bool:
        """Open a stored conversation and redraw its newest turns; False when it can't be."""
        try:
            turns = await self.session.resume(conversation_id)
        except Exception as exc:
            self.notify(f"Cannot resume: {exc}", severity="error")
            return False
        self._show_empty_conversation()
        for turn in turns:
            if turn.events:
                # Replay the stored event log through the same path live events take, so the
                # turn is redrawn as it ran: streamed text, tool calls, rounds, tree and badges.
                self.conversation.begin_turn(turn.prompt, turn.strategy).seq = turn.seq
                for event in turn.events:
                    self.apply_event(event, replay=True)
            else:
                self.conversation.show_stored(turn)
            await asyncio.sleep(0)
        # Only the newest turns are read; earlier ones load as the user scrolls up.
        self.conversation.offer_earlier(self.session.earlier_turns, turns[0].seq if turns else None)
        self.notify(f"Resumed {len(turns)} turn(s).", timeout=2)
        return True

    # -- rewind ---------------------------------------------------------------------------------

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
