"""A prompt sent while a turn runs: shown at the foot of the conversation until its turn starts."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui_assist.ui.widgets.turn_parts import ConversationEntry


class QueuedPrompt(ConversationEntry, Static):
    """A prompt waiting for the running turn to end."""

    DEFAULT_CSS = """
    QueuedPrompt {
        padding: 0 1;
        margin: 1 0 0 0;
        background: $boost;
        color: $foreground 70%;
        border-left: outer $warning 60%;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Content.assemble(("queued", "bold $warning"), " · ", text))
        self.text = text

    @property
    def copy_label(self) -> str:
        return "the queued prompt"

    def copy_text(self) -> str:
        return self.text
