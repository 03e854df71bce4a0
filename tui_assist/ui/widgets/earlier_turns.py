"""The earlier-turns pager: a resumed conversation's older turns, read a page at a time.

A resumed conversation shows its newest turns first; earlier ones are read from the store a page
at a time and mounted above when the user scrolls to the top (or moves the cursor up past the
first message), so opening a conversation costs the same at any length.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from tui_assist.core.tree import NodeLog
from tui_assist.ui.widgets.turn_parts import Notice
from tui_assist.ui.widgets.turn_view import TurnView

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession, StoredTurn
    from tui_assist.ui.widgets.conversation import Conversation

TurnKey = int | str
"""A stored turn: its position in the conversation (`seq`), or its id (a turn run in this session)."""
EarlierTurns = Callable[[TurnKey], Awaitable[Sequence["StoredTurn"]]]
"""Reads the page of stored turns before a turn (`ChatSession.stored_page`)."""


def pages_of(session: ChatSession, conversation_id: str) -> EarlierTurns:
    """How the conversation pane reads the stored turns of `conversation_id`, a page at a time."""
    return lambda before: session.stored_page(conversation_id, before=before)


class EarlierTurnsPager:
    """Mounts the page of stored turns before the oldest shown at the top of the pane."""

    def __init__(self, pane: Conversation) -> None:
        self._pane = pane
        self.load: EarlierTurns | None = None
        """How to read the shown conversation's stored turns, a page at a time."""
        self.oldest: TurnKey | None = None
        """The oldest turn shown, when there are earlier ones to read (None: there are none)."""
        self._loading = False

    def offer(self, load: EarlierTurns | None, oldest: TurnKey | None) -> None:
        """See `Conversation.offer_earlier`."""
        self.load = load
        self.oldest = oldest if load is not None and oldest is not None and oldest != 1 else None
        if self.oldest is not None:
            self._pane.call_after_refresh(self._fill_pane)

    def _fill_pane(self) -> None:
        pane = self._pane
        if pane.virtual_size.height <= pane.scrollable_content_region.height:
            self.load_earlier()

    def load_earlier(self) -> None:
        """Read the page of turns before the oldest shown and mount it above, keeping the view still."""
        if self.load is None or self.oldest is None or self._loading:
            return
        self._loading = True
        self._pane.run_worker(self._load_earlier(self.load, self.oldest), group="earlier-turns")

    async def _load_earlier(self, load: EarlierTurns, before: TurnKey) -> None:
        try:
            turns = await load(before)
        finally:
            self._loading = False
        if self.oldest != before or self.load is not load:  # the conversation changed meanwhile
            return
        self.offer(load, turns[0].seq if turns else None)
        if not turns:
            return
        pane = self._pane
        height, at_top = pane.virtual_size.height, pane.scroll_y <= 0
        first = next((c for c in pane.children if isinstance(c, TurnView | Notice)), None)
        views: list[TurnView] = []
        for turn in turns:
            # The screen never sees these events: the turn's own log is their one fold.
            log = NodeLog.of(turn.events)
            view = TurnView(turn.prompt, turn.strategy, log, answer=None if turn.events else turn.answer)
            view.seq = turn.seq
            views.append(view)
        if first is not None:
            await pane.mount_all(views, before=first)
        else:
            await pane.mount_all(views)
        for view, turn in zip(views, turns, strict=True):
            view.start()
            for event in turn.events:
                view.apply(event)

        def keep_in_place(tries: int = 5) -> None:
            # What was at the top stays there: the earlier turns are above it, scrolled past. On a
            # busy machine the layout that grows the pane may come a frame or two later; until
            # then the view would stay at the top (and ask for the page before at once).
            if not at_top:
                return
            grown = pane.virtual_size.height - height
            if grown <= 0 and tries:
                pane.call_after_refresh(keep_in_place, tries - 1)
                return
            pane.scroll_to(y=grown, animate=False, immediate=True)

        pane.call_after_refresh(keep_in_place)
        pane.call_after_refresh(pane.compact_old_turns)
