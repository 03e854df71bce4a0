"""The resume picker: recent conversations from the store, searchable."""

from __future__ import annotations

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

if TYPE_CHECKING:
    from tui_assist.store.db import Store

PAGE = 50


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
        height: 80%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    ResumeScreen #picker-title {
        text-style: bold;
        color: $primary;
    }
    ResumeScreen OptionList {
        height: 1fr;
    }
    """
    BINDINGS = [Binding("escape", "close_picker", "Close", id="close-picker")]

    def __init__(self, store: Store, *, query: str = "") -> None:
        super().__init__()
        self.store = store
        self.initial_query = query
        """What the search starts from (`/resume QUERY`)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Resume a conversation", id="picker-title")
            yield Input(placeholder="search titles…", id="query")
            yield OptionList(id="results")

    def on_mount(self) -> None:
        self.query_one("#query", Input).value = self.initial_query
        self.search(self.initial_query)

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    @on(Input.Submitted, "#query")
    def _query_submitted(self) -> None:
        results = self.query_one(OptionList)
        if results.option_count:
            results.highlighted = results.highlighted or 0
            results.focus()

    @work(exclusive=True, group="resume-search")
    async def search(self, query: str) -> None:
        results = self.query_one(OptionList)
        try:
            rows = await self.store.list_conversations(PAGE, 0, query=query or None)
        except Exception as exc:
            results.clear_options()
            results.add_option(Option(Content(f"cannot list conversations: {exc}"), disabled=True))
            return
        results.clear_options()
        for row in rows:
            title = row.title or "(untitled)"
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.updated_at or row.created_at))
            results.add_option(
                Option(Content.assemble((title, "bold"), "  ", (when, "$foreground 55%")), id=row.id)
            )
        if not rows:
            results.add_option(Option("no conversations found", disabled=True))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close_picker(self) -> None:
        self.dismiss(None)
