"""Ask a grounded question: the documents, an optional database, who answers, and the question.

The form offers what `tui-assist flow grounded` does (`--corpus`, `--data`, `--leaves`, the
question) and checks it the way that command does, but in place: a problem is shown under its
field, the field is marked, and the form stays open with everything typed kept, instead of the
run starting only to fail in the conversation pane. Relative paths are read from the session's
workdir, which is the "here" of a chat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.validation import ValidationResult, Validator
from textual.widgets import Input, RadioButton, RadioSet, Static

from tui_assist.core.text import one_line
from tui_assist.flows.grounded import MAX_QUESTION_CHARS, Leaves, load_glossary

_SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True)
class GroundedRequest:
    """A checked grounded question, ready to run."""

    corpus: Path
    """The folder of Markdown / text documents (absolute)."""
    question: str
    leaves: Leaves
    """`rules` (deterministic, no model calls) or `model` (the session's provider)."""
    data: Path | None = None
    """An SQLite file for data questions (absolute), opened read-only; None for documents only."""


def resolve_path(text: str, workdir: Path) -> Path:
    """A typed path made absolute: `~` expanded, relative ones read from `workdir`, `..` resolved."""
    return (workdir / Path(text).expanduser()).resolve()


def corpus_problem(path: Path) -> str | None:
    """Why `path` can't be a corpus (not a folder, or an invalid `glossary.json`), or None."""
    if not path.exists():
        return f"No folder at {path}."
    if not path.is_dir():
        return f"{path} is a file; the corpus is a folder of documents."
    try:
        load_glossary(path)
    except (OSError, ValueError) as exc:
        return one_line(f"Its glossary.json is invalid: {exc}")
    return None


def data_problem(path: Path) -> str | None:
    """Why `path` can't be the data file (missing, a folder, not SQLite), or None."""
    if not path.exists():
        return f"No file at {path}."
    if not path.is_file():
        return f"{path} is a folder; give an SQLite file."
    try:
        with path.open("rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except OSError as exc:
        return one_line(f"Cannot read {path}: {exc.strerror or exc}")
    if head and head != _SQLITE_HEADER:  # an empty file is an empty database to SQLite
        return f"{path.name} is not an SQLite database."
    return None


def question_problem(question: str) -> str | None:
    """Why `question` can't be asked (empty, too long), or None."""
    if not question:
        return "Type a question."
    if len(question) > MAX_QUESTION_CHARS:
        return f"The question is {len(question)} characters long; the limit is {MAX_QUESTION_CHARS}."
    return None


class _Check(Validator):
    """A field's check, run on submit only: a path is not half-wrong while it is being typed."""

    def __init__(self, problem: Callable[[str], str | None]) -> None:
        super().__init__()
        self._problem = problem

    def validate(self, value: str) -> ValidationResult:
        problem = self._problem(value.strip())
        return self.failure(problem) if problem else self.success()


class GroundedPromptScreen(ModalScreen[GroundedRequest | None]):
    """Returns a checked `GroundedRequest`, or None when cancelled."""

    DEFAULT_CSS = """
    GroundedPromptScreen {
        align: center middle;
    }
    GroundedPromptScreen > Vertical {
        width: 80%;
        max-width: 100;
        height: auto;
        max-height: 100%;
        padding: 1 2;
        background: $panel;
        border: thick $primary 60%;
        overflow-y: auto;
    }
    GroundedPromptScreen .grounded-prompt--label {
        color: $foreground 70%;
        margin: 1 0 0 0;
    }
    GroundedPromptScreen .grounded-prompt--error {
        color: $text-error;
        padding: 0 1;
    }
    GroundedPromptScreen .grounded-prompt--note {
        color: $foreground 55%;
        padding: 0 1;
    }
    GroundedPromptScreen RadioSet {
        width: 100%;
    }
    """
    AUTO_FOCUS = "#grounded-question"
    BINDINGS = [Binding("escape", "cancel_question", "Cancel", id="cancel-question")]

    def __init__(self, corpus: str, *, workdir: Path, model: str | None, model_problem: str = "") -> None:
        """Build the form.

        Args:
            corpus: The folder filled in to start with.
            workdir: Where relative paths are read from.
            model: The provider and model that `model` leaves would use; None when there is none.
            model_problem: Why there is no model (one line), shown beside the disabled choice.
        """
        super().__init__()
        self.corpus = corpus
        self.workdir = workdir
        self.model = model
        self.model_problem = model_problem

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("[b]Grounded question[/b]: answered from your documents, with citations")
            yield Static(
                "corpus folder (Markdown and text files; a glossary.json in it is read too)",
                classes="grounded-prompt--label",
            )
            yield Input(
                self.corpus,
                id="grounded-corpus",
                validators=[_Check(self._corpus_problem)],
                validate_on=["submitted"],
            )
            yield Static(id="grounded-corpus-error", classes="grounded-prompt--error -hidden")
            yield Static("SQLite database for data questions (optional)", classes="grounded-prompt--label")
            yield Input(
                placeholder="none: answer from the documents only",
                id="grounded-data",
                validators=[_Check(self._data_problem)],
                validate_on=["submitted"],
                valid_empty=True,
            )
            yield Static(id="grounded-data-error", classes="grounded-prompt--error -hidden")
            yield Static("answered by", classes="grounded-prompt--label")
            with RadioSet(id="grounded-leaves"):
                yield RadioButton("rules: deterministic, offline, no model calls", id="leaves-rules")
                yield RadioButton("model", id="leaves-model")
            yield Static(id="grounded-leaves-note", classes="grounded-prompt--note")
            yield Static("question (enter asks, escape cancels)", classes="grounded-prompt--label")
            yield Input(
                placeholder="How much can I spend on a hotel per night?",
                id="grounded-question",
                validators=[_Check(question_problem)],
                validate_on=["submitted"],
            )
            yield Static(id="grounded-question-error", classes="grounded-prompt--error -hidden")

    def on_mount(self) -> None:
        self.offer_model(self.model, self.model_problem)
        # A model, when there is one, answers (as a chat turn would); rules otherwise. Pressed
        # after mounting, so the set's keyboard highlight starts on the chosen button too.
        self.query_one("#leaves-model" if self.model else "#leaves-rules", RadioButton).value = True

    def offer_model(self, model: str | None, problem: str = "") -> None:
        """Offer `model` leaves when there is a model, else disable them and say why.

        Called again once a provider still loading when the form opened is ready: the choice is
        enabled then, but the selection the user sees is never changed under them.
        """
        self.model, self.model_problem = model, problem
        button = self.query_one("#leaves-model", RadioButton)
        button.label = Content(f"model: {model}" if model else "model: unavailable")
        button.disabled = model is None
        note = self.query_one("#grounded-leaves-note", Static)
        if model is None:
            reason = (problem or "No model provider is configured").rstrip(".")
            note.update(Content(f"{reason}. Rules answer from the documents alone."))
            if button.value:
                self.query_one("#leaves-rules", RadioButton).value = True
        else:
            note.update("The model classifies, rephrases and drafts; its citations are checked all the same.")

    @property
    def leaves(self) -> Leaves:
        """The leaves chosen (the `model` choice counts only while a model is offered)."""
        button = self.query_one("#leaves-model", RadioButton)
        return "model" if button.value and not button.disabled else "rules"

    # -- checking --------------------------------------------------------------------------------

    def _corpus_problem(self, value: str) -> str | None:
        if not value:
            return "Type the folder of documents to answer from."
        return corpus_problem(resolve_path(value, self.workdir))

    def _data_problem(self, value: str) -> str | None:
        return data_problem(resolve_path(value, self.workdir)) if value else None

    def _show_problem(self, field: str, problem: str | None) -> None:
        error = self.query_one(f"#grounded-{field}-error", Static)
        error.update(Content(problem or ""))
        error.set_class(problem is None, "-hidden")

    def _check(self, field: str) -> str | None:
        """Validate one field (Input marks itself `-invalid`) and show its problem under it."""
        box = self.query_one(f"#grounded-{field}", Input)
        result = box.validate(box.value)
        problem = result.failure_descriptions[0] if result is not None and not result.is_valid else None
        self._show_problem(field, problem)
        return problem

    def request(self) -> GroundedRequest | None:
        """Check every field; the request when all are fine, else None (the problems shown)."""
        problems = {field: self._check(field) for field in ("corpus", "data", "question")}
        first = next((field for field, problem in problems.items() if problem is not None), None)
        if first is not None:
            self.query_one(f"#grounded-{first}", Input).focus()
            return None
        data = self.query_one("#grounded-data", Input).value.strip()
        return GroundedRequest(
            corpus=resolve_path(self.query_one("#grounded-corpus", Input).value.strip(), self.workdir),
            question=self.query_one("#grounded-question", Input).value.strip(),
            leaves=self.leaves,
            data=resolve_path(data, self.workdir) if data else None,
        )

    # -- events ----------------------------------------------------------------------------------

    @on(Input.Changed)
    def _edited(self, event: Input.Changed) -> None:
        """Editing a field clears its problem: the next check is on submit."""
        if event.input.has_class("-invalid"):
            event.input.remove_class("-invalid")
            self._show_problem((event.input.id or "").removeprefix("grounded-"), None)

    @on(Input.Submitted, "#grounded-corpus, #grounded-data")
    def _path_submitted(self, event: Input.Submitted) -> None:
        """Enter on a path checks it at once, and moves on when it is fine."""
        field = (event.input.id or "").removeprefix("grounded-")
        if self._check(field) is None:
            self.query_one("#grounded-question", Input).focus()

    @on(Input.Submitted, "#grounded-question")
    def _question_submitted(self) -> None:
        request = self.request()
        if request is not None:
            self.dismiss(request)

    def action_cancel_question(self) -> None:
        self.dismiss(None)
