"""Ask a grounded question: which folder of documents, and what to ask it."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class GroundedPromptScreen(ModalScreen[tuple[str, str] | None]):
    """Returns (corpus folder, question), or None when cancelled."""

    DEFAULT_CSS = """
    GroundedPromptScreen {
        align: center middle;
    }
    GroundedPromptScreen > Vertical {
        width: 80%;
        max-width: 100;
        height: auto;
        padding: 1 2;
        background: $panel;
        border: thick $primary 60%;
    }
    GroundedPromptScreen .grounded-prompt--label {
        color: $foreground 70%;
        margin: 1 0 0 0;
    }
    """
    AUTO_FOCUS = "#grounded-question"
    BINDINGS = [Binding("escape", "cancel_question", "Cancel", id="cancel-question")]

    def __init__(self, corpus: str) -> None:
        super().__init__()
        self.corpus = corpus

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("[b]Grounded question[/b]: answered from your documents, with citations")
            yield Static("corpus folder (Markdown and text files)", classes="grounded-prompt--label")
            yield Input(self.corpus, id="grounded-corpus")
            yield Static("question (enter asks)", classes="grounded-prompt--label")
            yield Input(placeholder="How much can I spend on a hotel per night?", id="grounded-question")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        corpus = self.query_one("#grounded-corpus", Input).value.strip()
        question = self.query_one("#grounded-question", Input)
        if event.input.id == "grounded-corpus" or not question.value.strip():
            question.focus()
            return
        self.dismiss((corpus or self.corpus, question.value.strip()))

    def action_cancel_question(self) -> None:
        self.dismiss(None)
