"""Prompts sent while a turn runs: queued at the foot of the pane, or joined where the turn took them.

A queued prompt waits as a `QueuedPrompt` entry; one that joins the running turn (see
`core.steering`) leaves the foot and shows as a `JoinedPrompt` line inside the turn, where its
next model request went out. A held prompt (`tab`) says it waits for the turn's end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui_assist.ui.widgets.turn_parts import ConversationEntry

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui_assist.session.runs import Run


class QueuedPrompt(ConversationEntry, Static):
    """A prompt waiting for the running turn: to join its next request, or (held) for its end."""

    DEFAULT_CSS = """
    QueuedPrompt {
        padding: 0 1;
        margin: 1 0 0 0;
        background: $boost;
        color: $foreground 70%;
        border-left: outer $warning 60%;
    }
    """

    def __init__(self, text: str, *, held: bool = False, run: Run | None = None) -> None:
        label = "after the turn" if held else "queued"
        super().__init__(Content.assemble((label, "bold $warning"), " · ", text))
        self.text = text
        self.run = run

    @property
    def copy_label(self) -> str:
        return "the queued prompt"

    def copy_text(self) -> str:
        return self.text


class JoinedPrompt(ConversationEntry, Static):
    """A prompt sent during the turn, shown where it joined the turn's next model request."""

    DEFAULT_CSS = """
    JoinedPrompt {
        padding: 0 1;
        margin: 1 0 0 0;
        background: $boost;
        color: $foreground;
        border-left: outer $accent;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Content.assemble(("↳ joined", "bold $accent"), " · ", text))
        self.text = text

    @property
    def copy_label(self) -> str:
        return "the prompt"

    def copy_text(self) -> str:
        return self.text


def sync_queued(
    views: Sequence[QueuedPrompt], waiting: Sequence[Run], mount: Callable[[Widget], object]
) -> list[QueuedPrompt]:
    """The entries for the `waiting` runs: kept for those still queued, new ones `mount`ed at the foot.

    A prompt may leave from the middle of the queue (it joined the turn; a held one stays), so
    entries are matched to their runs, not by position.
    """
    kept = {id(view.run): view for view in views if view.run is not None}
    shown: list[QueuedPrompt] = []
    for run in waiting:
        view = kept.pop(id(run), None)
        if view is None:
            view = QueuedPrompt(run.label, held=run.held, run=run)
            mount(view)
        shown.append(view)
    for view in views:
        if view not in shown:
            view.remove()
    return shown
