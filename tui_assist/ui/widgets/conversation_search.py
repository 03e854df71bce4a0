"""Find in the conversation (`ctrl+f`): a search bar above the prompt that jumps between hits.

Every message the copy key can copy is searched (prompts, answer texts, tool calls with their
output, verdicts, notices), case-insensitively, compacted turns included: they keep their texts,
and a hit in one expands it (see `compaction`). `enter` or `down` goes to the next hit,
`shift+enter` or `up` to the previous one, `escape` closes the bar. The hit is highlighted and
scrolled into view; a hit in a folded refine draft unfolds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from tui_assist.ui.widgets.conversation import Conversation, TurnView
from tui_assist.ui.widgets.turn_parts import Notice, RoundView


@dataclass(frozen=True, slots=True)
class Hit:
    """One message that holds the query: a notice, or the `index`-th addressable widget of a turn."""

    owner: Widget
    index: int = 0


def find(conversation: Conversation, query: str) -> list[Hit]:
    """The messages of `conversation` that contain `query` (case-insensitive), top to bottom."""
    needle = query.casefold()
    if not needle:
        return []
    hits: list[Hit] = []
    for child in conversation.children:
        if isinstance(child, TurnView):
            hits += [Hit(child, index) for index, text in child.texts() if needle in text.casefold()]
        elif isinstance(child, Notice) and needle in child.copy_text().casefold():
            hits.append(Hit(child))
    return hits


class ConversationSearch(Horizontal):
    """The search bar: a query, the hit count, and keys to step through the hits."""

    DEFAULT_CSS = """
    ConversationSearch {
        height: auto;
        background: $boost;
        padding: 0 1;
    }
    ConversationSearch.-hidden {
        display: none;
    }
    ConversationSearch > Input {
        width: 1fr;
        border: none;
        height: 1;
        padding: 0 1;
    }
    ConversationSearch > #search-count {
        width: auto;
        min-width: 12;
        height: 1;
        padding: 0 1;
        color: $foreground 70%;
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close search", id="close-search"),
        Binding("down,enter", "step(1)", "Next", id="next-hit", show=False),
        Binding("up,shift+enter", "step(-1)", "Previous", id="previous-hit", show=False),
    ]

    def __init__(self, conversation: Conversation, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-hidden")
        self.conversation = conversation
        self.hits: list[Hit] = []
        self.current = -1
        """Index in `hits` of the hit shown, or -1."""
        self._marked: Widget | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in the conversation…", id="search-query")
        yield Static("", id="search-count")

    @property
    def input(self) -> Input:
        return self.query_one("#search-query", Input)

    def open(self) -> None:
        """Show the bar and put the cursor in it (the last query stays, selected)."""
        self.remove_class("-hidden")
        self.input.focus()
        self.input.select_all()
        if self.input.value:
            self._search(self.input.value, keep_place=True)

    def action_close(self) -> None:
        self.add_class("-hidden")
        self._mark(None)
        self.post_message(self.Closed())

    class Closed(Message):
        """The bar was closed (the screen puts the focus back in the prompt)."""

    @on(Input.Changed, "#search-query")
    def _changed(self, event: Input.Changed) -> None:
        self._search(event.value)

    @on(Input.Submitted, "#search-query")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_step(1)

    def _search(self, query: str, *, keep_place: bool = False) -> None:
        previous = self.hits[self.current] if keep_place and 0 <= self.current < len(self.hits) else None
        self.hits = find(self.conversation, query)
        if previous in self.hits:
            self.current = self.hits.index(previous)
        else:
            self.current = len(self.hits) - 1 if self.hits else -1  # the newest first
        self._show()

    def action_step(self, step: int) -> None:
        if not self.hits:
            return
        self.current = (self.current + step) % len(self.hits)
        self._show()

    def _show(self) -> None:
        count = self.query_one("#search-count", Static)
        if not self.input.value:
            count.update("")
        elif not self.hits:
            count.update(Content.styled("no match", "$warning"))
        else:
            count.update(f"{self.current + 1}/{len(self.hits)}")
        if not self.hits:
            self._mark(None)
            return
        hit = self.hits[self.current]
        owner = hit.owner
        target = owner.expand_to(hit.index) if isinstance(owner, TurnView) else owner
        if target is None or not target.is_attached:
            return
        for ancestor in target.ancestors:
            if isinstance(ancestor, RoundView) and ancestor.has_class("-folded"):
                ancestor.fold(False)
        self._mark(target)
        # A turn just expanded is laid out on the next refresh: scroll to the hit after it.
        self.call_after_refresh(self._scroll_to_hit, target)

    def _scroll_to_hit(self, target: Widget) -> None:
        if target.is_attached:
            self.conversation.scroll_to_center(target, animate=False, immediate=True)

    def _mark(self, widget: Widget | None) -> None:
        if self._marked is not None and self._marked is not widget:
            self._marked.remove_class("-found")
        self._marked = widget
        if widget is not None:
            widget.add_class("-found")
