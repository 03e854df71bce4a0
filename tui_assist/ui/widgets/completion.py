"""The prompt's completion list: one generic dropdown, fed by a source per trigger.

A `CompletionSource` says whether the text at the cursor is something it completes (`span_at`:
`/` at the start of the prompt for commands, `@` for files) and offers items for it. The prompt
asks its sources on every edit and cursor move, shows the first source's items here, moves the
highlight with up / down, and puts the chosen item's text in place of the span on tab (or enter).
The list never takes the focus: typing goes on in the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_assist.core.text import CompletionSpan

MAX_ITEMS = 50
"""Items shown at most (the best ones)."""


@dataclass(frozen=True, slots=True)
class CompletionItem:
    """One choice."""

    replacement: str
    """What replaces the span (a trailing space included when more usually follows)."""
    label: str
    description: str = ""
    submit_on_enter: bool = False
    """Enter picks it and sends the prompt (a command that needs no argument); else enter only picks."""
    highlights: tuple[int, ...] = ()
    """Indices of the label's characters the query matched (shown in the accent colour)."""


class CompletionSource(Protocol):
    """Completes one kind of thing in the prompt."""

    def span_at(self, text: str, cursor: int) -> CompletionSpan | None:
        """What this source would complete at `cursor` in `text`, or None."""
        ...

    def items(self, span: CompletionSpan) -> list[CompletionItem]:
        """The choices for `span`, best first (may be empty)."""
        ...


class CompletionList(OptionList, can_focus=False):
    """The dropdown above the prompt; hidden while it has nothing to offer."""

    DEFAULT_CSS = """
    CompletionList {
        display: none;
        height: auto;
        max-height: 10;
        border: tall $primary 50%;
        background: $surface;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    CompletionList.-open {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[CompletionItem] = []
        self.span: CompletionSpan | None = None

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def show(self, span: CompletionSpan, items: list[CompletionItem]) -> None:
        """Offer `items` for `span` (keeping the highlighted item when it is still offered)."""
        items = items[:MAX_ITEMS]
        if not items:
            self.close()
            return
        kept = self.highlighted_item
        same = [item.replacement for item in items] == [item.replacement for item in self.items]
        self.span = span
        if not same:
            self.items = items
            self.clear_options()
            width = max(len(item.label) for item in items)
            self.add_options(Option(self._label(item, width)) for item in items)
            labels = [item.replacement for item in items]
            self.highlighted = labels.index(kept.replacement) if kept and kept.replacement in labels else 0
        self.add_class("-open")

    def close(self) -> None:
        self.remove_class("-open")
        self.items = []
        self.span = None
        self.clear_options()

    @property
    def highlighted_item(self) -> CompletionItem | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]

    def move(self, step: int) -> None:
        """Move the highlight, wrapping around at either end."""
        if self.items:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.items)

    @staticmethod
    def _label(item: CompletionItem, width: int) -> Content:
        label = Content(item.label)
        for index in item.highlights:
            label = label.stylize("bold $accent", index, index + 1)
        if not item.description:
            return label
        padded = label.stylize("bold").pad_right(width - len(item.label))
        return Content.assemble(padded, "  ", (item.description, "$text-muted"))
