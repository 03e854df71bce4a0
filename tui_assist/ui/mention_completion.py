"""`@` completion in the prompt: the workdir's files, fuzzy-matched as you type.

The listing (git, or a bounded walk) is made in a worker thread the first time an `@` is typed,
and again when a new mention starts and the listing is older than `RELIST_AFTER`; until it is
ready the list stays closed, then opens by itself. Matching runs per keystroke on the cached
listing (`tui_assist.session.mentions.MentionCompleter`), imported at the first `@` so that it
costs the first frame nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.core.text import CompletionSpan
from tui_assist.ui.widgets.completion import CompletionItem

if TYPE_CHECKING:
    from tui_assist.session.mentions import MentionCompleter
    from tui_assist.ui.screens.main import MainScreen

RELIST_AFTER = 30.0
"""Seconds after which a new mention lists the workdir again (files come and go)."""

SHOWN = 20
"""Completions offered at once."""


class MentionCompletion:
    """Completes `@path` anywhere in the prompt."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self._completer: MentionCompleter | None = None
        self._workdir: Path | None = None
        self._loading = False
        self._span_start: int | None = None

    def _current(self) -> MentionCompleter:
        from tui_assist.session.mentions import MentionCompleter

        session = self.screen.session
        workdir = session.settings.workdir if session.ready else session.preview.workdir
        if self._completer is None or self._workdir != workdir:
            self._completer = MentionCompleter(workdir)
            self._workdir = workdir
        return self._completer

    def span_at(self, text: str, cursor: int) -> CompletionSpan | None:
        if "@" not in text:  # the usual case, answered without loading the mentions module
            self._span_start = None
            return None
        from tui_assist.session.mentions import mention_at

        query = mention_at(text, cursor)
        if query is None:
            self._span_start = None
            return None
        completer = self._current()
        new_mention = query.start != self._span_start
        self._span_start = query.start
        age = completer.age
        if age is None or (new_mention and age > RELIST_AFTER):
            self._load(completer, refresh=age is not None)
        return query

    def items(self, span: CompletionSpan) -> list[CompletionItem]:
        completer = self._current()
        return [
            CompletionItem(
                # A directory is usually a step on the way to a file: no space after it.
                completion.mention + ("" if completion.is_dir else " "),
                completion.path,
                highlights=completion.positions,
            )
            for completion in completer.complete(span.query, SHOWN)
        ]

    def _load(self, completer: MentionCompleter, *, refresh: bool) -> None:
        if self._loading:
            return
        self._loading = True

        async def load() -> None:
            try:
                await completer.load(refresh=refresh)
            finally:
                self._loading = False
            self.screen.prompt.refresh_completion()

        self.screen.run_worker(load(), group="mention-listing", exit_on_error=False)
