"""The resume picker: recent conversations from the store, searched in full, with a preview.

It opens with the newest conversation highlighted, so one `enter` resumes it; typing searches the
titles and every prompt and answer (the store's full-text index, as `history search` does), and
up / down move the highlight without leaving the search box. Each conversation shows its turn
count and when it was last used; the highlighted one's latest turns show below the list. `f2`
renames the highlighted conversation.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_assist.core.text import clip, plural
from tui_assist.session.chat import TITLE_LIMIT

if TYPE_CHECKING:
    from textual.worker import Worker

    from tui_assist.session.history import Found, History

_MATCH = re.compile(r"\[([^\[\]]*)\]")
PREVIEW_TURNS = 2


class RenameScreen(ModalScreen[str | None]):
    """Ask for a conversation's new title; dismisses with it (or None)."""

    DEFAULT_CSS = """
    RenameScreen {
        align: center middle;
        background: $background 60%;
    }
    RenameScreen > #rename {
        width: 70%;
        max-width: 80;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS = [Binding("escape", "cancel_rename", "Cancel", id="cancel-rename")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.current = title

    def compose(self) -> ComposeResult:
        with Vertical(id="rename"):
            yield Static(Content.styled("Rename the conversation", "$primary bold"))
            yield Input(self.current, placeholder="a title", id="new-title")

    @on(Input.Submitted, "#new-title")
    def _submitted(self, event: Input.Submitted) -> None:
        title = " ".join(event.value.split())
        self.dismiss(title or None)

    def action_cancel_rename(self) -> None:
        self.dismiss(None)


class ResumeScreen(ModalScreen[str | None]):
    """Pick a stored conversation; dismisses with its id (or None)."""

    DEFAULT_CSS = """
    ResumeScreen {
        align: center middle;
        background: $background 60%;
    }
    ResumeScreen > #picker {
        width: 90%;
        max-width: 110;
        height: 90%;
        max-height: 40;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    ResumeScreen #picker-title {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ResumeScreen OptionList {
        height: 1fr;
        min-height: 3;
        border: none;
        padding: 0;
    }
    ResumeScreen #preview {
        height: auto;
        max-height: 7;
        border-top: hkey $panel;
        color: $foreground 80%;
    }
    ResumeScreen #preview.-empty {
        display: none;
    }
    """
    BINDINGS = [
        Binding("escape", "close_picker", "Close", id="close-picker"),
        Binding("up", "move_highlight(-1)", "Previous", id="picker-previous", show=False),
        Binding("down", "move_highlight(1)", "Next", id="picker-next", show=False),
        Binding("f2", "rename_conversation", "Rename", id="rename-conversation"),
    ]

    def __init__(self, history: History, *, query: str = "") -> None:
        super().__init__()
        self.history = history
        self.initial_query = query
        """What the search starts from (`/resume QUERY`)."""
        self.found: list[Found] = []
        """What the list shows, in order."""
        self._wanted = query
        """The query the list should show the results of (the latest typed)."""
        self._searching: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(
                Content.assemble(
                    ("Resume a conversation", "$primary bold"),
                    ("  enter · ↑↓ · f2 rename · esc", "$foreground 55%"),
                ),
                id="picker-title",
            )
            yield Input(placeholder="search titles, prompts and answers…", id="query")
            yield OptionList(id="results")
            yield Static("", id="preview", classes="-empty")

    def on_mount(self) -> None:
        self.query_one("#query", Input).value = self.initial_query
        self.search(self.initial_query)

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    @on(Input.Submitted, "#query")
    def _query_submitted(self) -> None:
        chosen = self.highlighted
        if chosen is not None:
            self.dismiss(chosen.row.id)

    @property
    def highlighted(self) -> Found | None:
        index = self.query_one(OptionList).highlighted
        return self.found[index] if index is not None and 0 <= index < len(self.found) else None

    def search(self, query: str) -> None:
        """Show what `query` finds: one search runs at a time, then the newest query typed.

        A cancelled search still holds the store's connection until its query ends, so searches
        started per keystroke would queue there and the last match show late: instead the running
        one finishes, and its result is dropped if the query changed meanwhile.
        """
        self._wanted = query
        if self._searching is None or self._searching.is_finished:
            self._searching = self._run_searches()

    @work(group="resume-search")
    async def _run_searches(self) -> None:
        results = self.query_one(OptionList)
        while True:
            query = self._wanted
            try:
                found = await self.history.find(query)
            except Exception as exc:
                if query != self._wanted:
                    continue
                self.found = []
                results.clear_options()
                results.add_option(Option(Content(f"cannot list conversations: {exc}"), disabled=True))
                return
            if query == self._wanted:
                break
        self.found = found
        results.clear_options()
        results.add_options(_option(item) for item in found)
        if found:
            results.highlighted = 0  # the newest (or best match): one enter resumes it
        else:
            results.add_option(Option("no conversations found", disabled=True))
            self._show_preview(None)

    @on(OptionList.OptionHighlighted, "#results")
    def _highlighted(self) -> None:
        self._show_preview(self.highlighted)

    def _show_preview(self, found: Found | None) -> None:
        preview = self.query_one("#preview", Static)
        preview.set_class(found is None, "-empty")
        if found is not None:
            self.load_preview(found.row.id)

    @work(exclusive=True, group="resume-preview")
    async def load_preview(self, conversation_id: str) -> None:
        turns = await self.history.turns(conversation_id, PREVIEW_TURNS)
        lines: list[Content | tuple[str, str] | str] = []
        for turn in turns:
            if lines:
                lines.append("\n")
            lines += [("› ", "$accent bold"), clip(turn.prompt, 300)]
            answer = turn.answer or f"({turn.outcome})"
            lines += ["\n", ("  ", ""), (clip(answer, 300), "$foreground 70%")]
        preview = self.query_one("#preview", Static)
        preview.update(Content.assemble(*lines) if lines else Content.styled("(no turns)", "$foreground 55%"))

    def action_move_highlight(self, step: int) -> None:
        results = self.query_one(OptionList)
        if not self.found:
            return
        current = results.highlighted if results.highlighted is not None else -step
        results.highlighted = max(0, min(len(self.found) - 1, current + step))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_rename_conversation(self) -> None:
        chosen = self.highlighted
        if chosen is None:
            return

        def renamed(title: str | None) -> None:
            if title:
                self.rename(chosen.row.id, title)

        self.app.push_screen(RenameScreen(chosen.row.title), renamed)

    @work(group="resume-rename")
    async def rename(self, conversation_id: str, title: str) -> None:
        await self.history.rename(conversation_id, clip(title, TITLE_LIMIT))
        self.notify(f"Renamed to “{clip(title, TITLE_LIMIT)}”.", timeout=2)
        self.search(self.query_one("#query", Input).value)

    def action_close_picker(self) -> None:
        self.dismiss(None)


def _marked(snippet: str) -> Content:
    """A search snippet with its matches (in `[...]`, as the store marks them) highlighted."""
    parts: list[tuple[str, str] | str] = []
    for i, piece in enumerate(_MATCH.split(snippet)):
        if piece:
            parts.append((piece, "$accent bold") if i % 2 else (piece, "$foreground 70% italic"))
    return Content.assemble(*parts)


def _option(found: Found) -> Option:
    row = found.row
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.updated_at or row.created_at))
    parts: list[Content | tuple[str, str] | str] = [
        (clip(row.title or "(untitled)", TITLE_LIMIT), "bold"),
        ("  ·  ", "$foreground 40%"),
        (plural(row.turn_count, "turn"), "$accent"),
        ("  ·  ", "$foreground 40%"),
        (when, "$foreground 55%"),
    ]
    if found.snippet:
        parts += ["\n  ", _marked(clip(found.snippet, 200))]
    return Option(Content.assemble(*parts), id=row.id)
