"""The conversation pane: prompts, streamed answers, compact tool calls and turn badges.

Only the main generator's output is shown here (the turn's agent, or each refine round's
generator); sub-agents and critics live in the agent tree, with one verdict line per round.
Finished text is static (`StreamingMarkdown` commits it), and old turns are unmounted beyond a
cap, so neither a long answer nor a long session makes frames slower.

A finished turn a few turns back is *compacted* (see `compaction`): it draws itself from lines
captured from its children and drops them, so a layout arranges one widget for it instead of a
dozen and the garbage collector scans a handful of objects; the cursor steps over it as one item
and builds it again (from the events it keeps) when it lands on it, as do a search hit, a click or
the mouse hovering it; the pane compacts it again when the next turn starts.

A resumed conversation shows its newest turns first; earlier ones are read from the store a page
at a time (`earlier_turns`, `offer_earlier`). Each turn is a `TurnView` (`turn_view`), which reads
the screen's `NodeLog`: the pane folds no event itself unless it is used alone, with no log.

The pane has a message cursor, as a list has: with the focus in the pane (click a message, or tab
to it), up / down / home / end select a `ConversationEntry` (a prompt, an answer, a tool call, a
verdict, a notice). The selection is highlighted, and offered to the copy key, only while the pane
has the focus: back in the prompt, the copy key copies the last answer again. Selecting text with
the mouse (Textual's own; ctrl+c copies it) works too: every entry implements `get_selection`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.binding import Binding
from textual.widget import AwaitMount, Widget

from tui_assist.ui.textual_private import StripBarVerticalScroll
from tui_assist.ui.widgets import stream_room
from tui_assist.ui.widgets.laid_out_size import LaidOutSize

__all__ = ["LIVE_TURNS", "MAX_TURN_VIEWS", "Conversation", "EarlierTurns", "TurnKey", "TurnView"]

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.geometry import Region, Size
    from textual.strip import Strip

    from tui_assist.core.events import TurnEvent
    from tui_assist.core.tree import NodeLog
    from tui_assist.session.chat import StoredTurn
    from tui_assist.ui.widgets.earlier_turns import EarlierTurns, EarlierTurnsPager, TurnKey
    from tui_assist.ui.widgets.turn_parts import ConversationEntry, Notice
    from tui_assist.ui.widgets.turn_view import TurnView

# The turns' widgets and the core's events are imported with the first turn, not before the first
# frame (an empty pane draws none of them): `from conversation import TurnView` still works.
_LAZY = {
    "TurnView": "tui_assist.ui.widgets.turn_view",
    "EarlierTurns": "tui_assist.ui.widgets.earlier_turns",
    "TurnKey": "tui_assist.ui.widgets.earlier_turns",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MAX_TURN_VIEWS = 20
"""Turns kept mounted; older ones are removed, and read again from the store when the user scrolls
up to them. Every mounted turn is a widget each layout arranges (a streamed answer lays out many
times), so the cap is what keeps a turn's cost from growing with the session."""
MAX_UNSTORED_TURN_VIEWS = 100
"""The cap when the pane cannot read turns back (no store): removed turns would be gone, so more
stay, as many as before the cap above."""
LIVE_TURNS = 3
"""The newest turns that are never compacted (they are the ones that change)."""


class Conversation(LaidOutSize, StripBarVerticalScroll):
    """The scrolling conversation; stays anchored to the bottom while answers stream.

    Its scrollbar is drawn straight to strips and repainted with the layout (see
    `StripBarVerticalScroll`): a streamed answer moves its thumb at every growth.
    """

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
    }
    Conversation .-selected {
        background: $primary 20%;
    }
    Conversation .-found {
        background: $warning 25%;
    }
    """
    # Up / down move the message cursor instead of scrolling by a line (page up / page down and
    # the mouse wheel still scroll); selecting a message scrolls it into view.
    BINDINGS = [
        Binding("up", "select_previous_message", "Previous message", id="select-previous-message"),
        Binding("down", "select_next_message", "Next message", id="select-next-message"),
        Binding("home", "select_first_message", "First message", id="select-first-message", show=False),
        Binding("end", "select_last_message", "Last message", id="select-last-message", show=False),
    ]

    def __init__(self, log: Callable[[], NodeLog] | None = None, *, id: str | None = None) -> None:
        """Show the turns the screen's log folds, which `log` returns (asked with the first turn:
        the empty pane of the first frame imports no core events); with no log, the pane folds
        the events it is given into its own (a pane used alone, as in a test)."""
        super().__init__(id=id)
        self._log_of = log
        self._own_log: NodeLog | None = None
        self._folds = log is None
        self._pager_made: EarlierTurnsPager | None = None
        self._current: TurnView | None = None
        self._selected: ConversationEntry | None = None
        """The message cursor; shown and offered to the copy key only while the pane has focus."""
        self._compaction_queued = False
        self.workdir: Path | None = None
        """Where a prompt's `@path` images are (the screen sets it; None: no chips for a new prompt)."""
        self._snapshot: tuple[Size, list[Strip]] | None = None

    @property
    def _log(self) -> NodeLog:
        if self._log_of is not None:
            return self._log_of()
        if self._own_log is None:
            from tui_assist.core.tree import NodeLog

            self._own_log = NodeLog(max_turns=MAX_UNSTORED_TURN_VIEWS)
        return self._own_log

    @property
    def _pager(self) -> EarlierTurnsPager:
        if self._pager_made is None:
            from tui_assist.ui.widgets.earlier_turns import EarlierTurnsPager

            self._pager_made = EarlierTurnsPager(self)
        return self._pager_made

    # Textual's `anchor()` keeps the bottom in view while content grows, without an extra frame,
    # but bottom-aligns content shorter than the viewport (a negative scroll offset), which leaves
    # a fresh conversation hanging at the bottom. So anchor only once the content overflows.
    def watch_virtual_size(self) -> None:
        overflow = self.virtual_size.height > self.scrollable_content_region.height
        if overflow and not self.is_anchored:
            self.anchor()
        elif not overflow and self.is_anchored:
            self.anchor(False)
            self.scroll_home(animate=False, immediate=True)

    def on_resize(self) -> None:
        # Taller, the pane may show rows above a streaming answer's text: its gap goes.
        stream_room.drop_gaps(self, exposed=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and new_value < self.max_scroll_y and (gap := stream_room.drop_gaps(self)):
            # Away from the end, a streaming answer's gap above its text could come into view:
            # it is laid out without it, and the view scrolled by as much, so it stays still.
            self.scroll_to(y=self.scroll_target_y - gap, animate=False, immediate=True, release_anchor=False)
            return
        if new_value <= 0 < old_value:
            self.load_earlier()

    # -- a resumed conversation, a page at a time ---------------------------------------------

    def show_stored(self, turn: StoredTurn) -> TurnView:
        """Mount a stored turn that has no event log (its prompt and answer) at the bottom."""
        from tui_assist.ui.widgets.turn_view import TurnView

        view = TurnView(turn.prompt, turn.strategy, self._log, answer=turn.answer)
        view.seq = turn.seq
        self._mount_child(view)
        view.start()
        return view

    def show_snapshot(self, size: Size, lines: list[Strip]) -> None:
        """Draw `lines`, the pane as it was left at `size` (see `pane_snapshot`), until a turn or a
        notice is mounted (or the pane is emptied); at another size, nothing."""
        self._snapshot = (size, lines)
        self.refresh()

    def drop_snapshot(self) -> None:
        if self._snapshot is not None:
            self._snapshot = None
            self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._snapshot is not None and self._snapshot[0] == self.outer_size:
            return [line.crop(crop.x, crop.right) for line in self._snapshot[1][crop.y : crop.bottom]]
        return super().render_lines(crop)

    def offer_earlier(self, load: EarlierTurns | None, oldest: TurnKey | None) -> None:
        """Say how to read the shown conversation's stored turns (`load`), and which is the oldest
        shown when there are earlier ones (None: there are none, yet).

        While the turns shown don't fill the pane (nothing to scroll), earlier ones are loaded too.
        The turns removed past `MAX_TURN_VIEWS` are read again with `load`.
        """
        self._pager.offer(load, oldest)

    @property
    def has_earlier(self) -> bool:
        """Whether earlier stored turns can be loaded above the ones shown."""
        return self._pager.oldest is not None

    @property
    def reads_pages(self) -> bool:
        """Whether the pane knows how to read its conversation's stored turns (`offer_earlier`)."""
        return self._pager.load is not None

    def load_earlier(self) -> None:
        """Read the page of turns before the oldest shown and mount it above, keeping the view still."""
        self._pager.load_earlier()

    async def mounted(self) -> None:
        """Wait until every widget in the pane is mounted (a layout leaves out those that aren't)."""
        pending = [node for node in self.walk_children(Widget) if not node.is_mounted]
        if pending:
            await AwaitMount(self, pending)

    def add_notice(self, markdown: str, *, classes: str | None = None) -> Notice:
        from tui_assist.ui.widgets.turn_parts import Notice

        notice = Notice(markdown, classes=classes)
        self._mount_child(notice)
        return notice

    # -- the message cursor ------------------------------------------------------------------

    @property
    def selected_message(self) -> ConversationEntry | None:
        """The message the cursor is on, while the pane (or a tool call in it) has focus."""
        entry = self._selected
        if entry is None or not self.has_focus_within or not self._shown(entry):
            return None
        return entry

    def entries(self) -> list[ConversationEntry]:
        """The messages the cursor can select, top to bottom (folded drafts are skipped)."""
        from tui_assist.ui.widgets.turn_parts import ConversationEntry

        return [node for node in self.query("*") if isinstance(node, ConversationEntry) and self._shown(node)]

    def select_message(self, entry: ConversationEntry | None, *, scroll: bool = True) -> None:
        """Put the cursor on `entry` (None clears it) and scroll it into view."""
        previous = self._selected
        self._selected = entry
        if isinstance(previous, Widget) and previous is not entry:
            previous.remove_class("-selected")
        if not isinstance(entry, Widget):
            return
        if entry.can_focus:
            # A tool call takes the focus, so its own keys (enter: details) act on it.
            entry.focus(scroll_visible=False)
        elif self.screen.focused is not self and self.has_focus_within:
            self.focus(scroll_visible=False)
        if scroll:
            if entry.region:
                self.scroll_to_widget(entry, animate=False, immediate=True)
            else:  # just built (an expanded turn): it has a region after the next layout
                self.call_after_refresh(self._scroll_to_entry, entry)
        self._show_selection()

    def _scroll_to_entry(self, entry: Widget) -> None:
        if entry.is_attached:
            self.scroll_to_widget(entry, animate=False, immediate=True)

    def action_select_previous_message(self) -> None:
        self._move(-1)

    def action_select_next_message(self) -> None:
        self._move(1)

    def action_select_first_message(self) -> None:
        items = self._cursor_items()
        if items:
            self._select_item(items[0], last=False)

    def action_select_last_message(self) -> None:
        items = self._cursor_items()
        if items:
            self._select_item(items[-1], last=True)

    def _cursor_items(self) -> list[ConversationEntry | TurnView]:
        """What the cursor steps over: the entries shown, and each compacted turn as one step."""
        from tui_assist.ui.widgets.turn_parts import ConversationEntry
        from tui_assist.ui.widgets.turn_view import TurnView

        items: list[ConversationEntry | TurnView] = []
        for node in self.query("*"):
            if isinstance(node, TurnView) and node.compacted:
                items.append(node)
            elif isinstance(node, ConversationEntry) and self._shown(node):
                items.append(node)
        return items

    def _move(self, step: int) -> None:
        items = self._cursor_items()
        if not items:
            return
        current = self._selected
        if current is None or current not in items:
            # The first press picks a message in view: the lowest one going up, the highest going down.
            in_view = [item for item in items if self._in_view(item)] or items
            self._select_item(in_view[-1] if step < 0 else in_view[0], last=step < 0)
            return
        index = items.index(current) + step
        if index < 0 and self.has_earlier:
            self.load_earlier()  # up past the first message: the turns before it
        self._select_item(items[max(0, min(index, len(items) - 1))], last=step < 0)

    def _select_item(self, item: ConversationEntry | TurnView, *, last: bool) -> None:
        """Select an entry; for a compacted turn, expand it and select its first (or last) entry."""
        from tui_assist.ui.widgets.turn_view import TurnView

        if not isinstance(item, TurnView):
            self.select_message(item)
            return
        item.uncompact()

        def select_in_turn() -> None:  # once the rebuilt children are styled (folded drafts hidden)
            inside = [
                entry for entry in self.entries() if isinstance(entry, Widget) and item in entry.ancestors
            ]
            if inside:
                self.select_message(inside[-1] if last else inside[0])

        self.call_after_refresh(select_in_turn)

    def _shown(self, entry: ConversationEntry) -> bool:
        node: Any = entry
        while isinstance(node, Widget) and node is not self:
            if not node.is_attached or not node.display or node.has_class("-dropped"):
                return False
            node = node.parent
        return node is self

    def _in_view(self, item: ConversationEntry | TurnView) -> bool:
        return isinstance(item, Widget) and item.region.overlaps(self.scrollable_content_region)

    def _show_selection(self) -> None:
        entry = self._selected
        if isinstance(entry, Widget):
            entry.set_class(self.has_focus_within and entry.is_attached, "-selected")

    def on_click(self, event: events.Click) -> None:
        from tui_assist.ui.widgets.turn_parts import ConversationEntry

        node: Any = event.widget
        while isinstance(node, Widget) and node is not self:
            if isinstance(node, ConversationEntry):
                if node is not self._selected:
                    self.select_message(node, scroll=False)
                return
            node = node.parent

    def on_turn_view_entry_clicked(self, message: TurnView.EntryClicked) -> None:
        self.select_message(message.entry, scroll=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        from tui_assist.ui.widgets.turn_parts import ConversationEntry

        if isinstance(event.widget, ConversationEntry) and event.widget is not self._selected:
            self.select_message(event.widget, scroll=False)
        self.call_later(self._show_selection)

    def on_descendant_blur(self) -> None:
        self.call_later(self._show_selection)

    def on_focus(self) -> None:
        self.call_later(self._show_selection)

    def on_blur(self) -> None:
        self.call_later(self._show_selection)

    def begin_turn(
        self, prompt: str, strategy: str, *, images: list[tuple[str, int]] | None = None
    ) -> TurnView:
        """Show the user's prompt (with chips of its images); the turn's events will follow.

        `images` are `(name, bytes)` of a stored turn's images; None: the images the prompt
        mentions now.
        """
        from tui_assist.ui.widgets.turn_view import TurnView

        if images is None and "@" in prompt:
            from tui_assist.session.mentions import image_chips

            images = image_chips(prompt, self.workdir) if self.workdir is not None else None
        view = TurnView(prompt, strategy, self._log, images=images)
        self._current = view
        self._mount_child(view)
        # A prompt sent brings the view back to the end, following the answer again even after
        # the user (or /help) scrolled up and so released the anchor.
        self.scroll_end(animate=False)
        # Mounted explicitly (not composed) so it comes before anything the turn mounts.
        view.start()
        return view

    def apply(self, event: TurnEvent) -> None:
        """Route an event to its turn (folding it first when the pane has its own log)."""
        from tui_assist.core.events import NodeStarted

        if self._folds:
            self._log.apply(event)
        view = self._current
        if isinstance(event, NodeStarted) and event.parent_id is None:
            if view is None or view.turn_id is not None:
                return
            view.apply(event)
            return
        if view is not None and view.turn_id is not None:
            view.apply(event)

    def _mount_child(self, widget: Any) -> None:
        from tui_assist.ui.widgets.turn_parts import Notice
        from tui_assist.ui.widgets.turn_view import TurnView

        self.drop_snapshot()
        self.mount(widget)
        turns = [c for c in self.children if isinstance(c, TurnView | Notice)]
        excess = len(turns) - (MAX_TURN_VIEWS if self.reads_pages else MAX_UNSTORED_TURN_VIEWS)
        if excess > 0:
            for old in turns[:excess]:
                old.remove()
            kept = next((t for t in turns[excess:] if isinstance(t, TurnView) and (t.seq or t.turn_id)), None)
            if kept is not None and self.reads_pages:
                # The removed ones are read again from the store when the user scrolls up.
                self._pager.oldest = kept.seq or kept.turn_id
        if not self._compaction_queued:
            self._compaction_queued = True
            self.call_after_refresh(self.compact_old_turns)

    def compact_old_turns(self) -> None:
        """Compact finished turns older than the newest `LIVE_TURNS` (see the module docstring)."""
        from tui_assist.ui.widgets.turn_view import TurnView

        self._compaction_queued = False
        # The cursor's turn stays live, so the selection shows when the pane has the focus again.
        selected = self._selected.parent if isinstance(self._selected, Widget) else None
        while isinstance(selected, Widget) and not isinstance(selected, TurnView):
            selected = selected.parent
        turns = [child for child in self.children if isinstance(child, TurnView)]
        for turn in turns[:-LIVE_TURNS]:
            if not turn.compacted and turn is not selected:
                turn.compact()

    @property
    def last_answer(self) -> str:
        from tui_assist.ui.widgets.turn_view import TurnView

        for view in reversed(list(self.query(TurnView))):
            if view.answer:
                return view.answer
        return ""

    def clear_all(self) -> None:
        self.drop_snapshot()
        self._current = None
        self._selected = None
        self.offer_earlier(None, None)
        self.anchor(False)
        self.remove_children()
