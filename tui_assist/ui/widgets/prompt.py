"""The prompt: a multi-line editor where enter sends and shift+enter / ctrl+j add a line.

It also browses the prompt history (`up` on the first line, `down` on the last, the half-typed
prompt kept for the way back) and drives the completion list above it (`/` commands, `@` files).
`PromptBox` holds the parts: the completion list, a one-line error, the chips of the images the
prompt attaches, and the editor. A pasted path of an image file (what a terminal pastes when a
file is dropped on it) becomes an `@` mention, so it attaches.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, TextArea
from textual.widgets.text_area import Document

from tui_assist.core.text import file_size
from tui_assist.ui.textual_private import keymapped_bindings

if TYPE_CHECKING:
    from tui_assist.session.prompt_history import HistoryBrowser
    from tui_assist.ui.widgets.completion import CompletionItem, CompletionList, CompletionSource


class PromptError(Static):
    """One line under the completion list saying why the prompt was not sent (hidden when empty)."""

    DEFAULT_CSS = """
    PromptError {
        display: none;
        height: auto;
        padding: 0 1;
        color: $text-error;
    }
    PromptError.-shown {
        display: block;
    }
    """


class PromptChips(Static):
    """One chip per image the prompt attaches: its name and size (hidden when there is none)."""

    DEFAULT_CSS = """
    PromptChips {
        display: none;
        height: auto;
        padding: 0 1;
    }
    PromptChips.-shown {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._chips: list[tuple[str, int]] = []

    def show(self, chips: list[tuple[str, int]]) -> None:
        # Called on every edit of the prompt: an update lays out the screen, so only on a change.
        if chips == self._chips:
            return
        self._chips = chips
        self.set_class(bool(chips), "-shown")
        self.update(image_chips_content(chips))


def image_chips_content(chips: list[tuple[str, int]]) -> Content:
    """Image chips on one line: `▣ shot.png 14 KB` on the accent colour, for the prompt and the pane.

    An image too big to send as it is says `resized` (the turn resizes it to fit the API's limits).
    """
    from tui_assist.session.mentions.image_fit import fits  # (not before the first frame)

    parts: list[Content] = []
    for name, size in chips:
        resized = "" if fits(size) else " · resized"
        parts.append(
            Content.styled(f" ▣ {name} · {file_size(size)}{resized} ", "$text-accent on $accent 25%")
        )
    return Content(" ").join(parts)


def pasted_image(text: str) -> Path | None:
    """The image file a pasted text names (a dropped file's path, maybe quoted), else None."""
    candidate = text.strip()
    if len(candidate) >= 2 and candidate[0] == candidate[-1] and candidate[0] in "'\"":
        candidate = candidate[1:-1]
    candidate = candidate.replace("\\ ", " ")
    if "\n" in candidate or not candidate:
        return None
    if candidate.startswith("file://"):
        candidate = candidate.removeprefix("file://")
    path = Path(candidate).expanduser()
    from tui_assist.session.mentions import IMAGE_SUFFIXES  # (not before the first frame)

    if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_absolute():
        return None
    return path if path.is_file() else None


class Prompt(TextArea):
    """Where the user types. Posts `Prompt.Submitted` on enter."""

    DEFAULT_CSS = """
    Prompt {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: tall $border-blurred;
        background: $surface;
    }
    Prompt:focus {
        border: tall $primary;
    }
    Prompt.-running {
        border: tall $warning 60%;
    }
    """
    # Two bindings on a key: the first raises SkipAction when it doesn't apply (not on the first
    # line, no completion open), and the editor's own action runs instead.
    BINDINGS = [
        Binding("enter", "submit", "Send", id="send"),
        Binding("shift+enter,ctrl+j,alt+enter", "newline", "Newline", id="insert-newline", show=False),
        Binding("up", "history_previous", "Previous prompt", id="history-previous", show=False),
        Binding("up", "cursor_up", show=False),
        Binding("down", "history_next", "Next prompt", id="history-next", show=False),
        Binding("down", "cursor_down", show=False),
        Binding("tab", "complete", "Complete", id="complete", show=False),
        Binding("tab", "hold", "Send after the turn", id="send-after-turn", show=False),
        Binding("escape", "close_completion", "Close completion", id="close-completion", show=False),
    ]
    _OWN_ACTIONS = ("submit", "newline")

    class Submitted(Message):
        """The user sent a prompt."""

        def __init__(self, prompt: Prompt, text: str, *, hold: bool = False) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text
            self.hold = hold
            """Sent with `tab` while a turn runs: it waits for the turn's end instead of joining it."""

        @property
        def control(self) -> Prompt:
            return self.prompt

    def __init__(
        self,
        *,
        id: str | None = None,
        completions: CompletionList | None = None,
        error_line: PromptError | None = None,
        chips: PromptChips | None = None,
    ) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.placeholder = "Ask something…  (enter sends · shift+enter or ctrl+j: new line)"
        self.completions = completions
        self.error_line = error_line
        self.chips = chips
        self.sources: list[CompletionSource] = []
        """Asked in order; the first with a span at the cursor fills the completion list."""
        self.prompt_history: HistoryBrowser | None = None
        """Browses the prompts sent before (`up` / `down`); named apart from the editor's undo `history`."""
        self._recalled: str | None = None
        """The history entry just put in the prompt: it opens no completion list until edited."""
        self._error_for: str | None = None
        """The text the shown error is about; an edit clears the error."""
        self.workdir: Path | None = None
        """Where `@path` mentions and pasted images are relative to (the screen sets it; None: the
        current directory)."""

    async def on_key(self, event: events.Key) -> None:
        # TextArea inserts a newline for enter before bindings are consulted, and a priority
        # binding would run ahead of characters still queued here (typing fast and pressing
        # enter sent half the prompt). So our two bindings are resolved here, in key order,
        # with the user's keymap applied. (Textual calls this before TextArea's own handler.)
        for binding in keymapped_bindings(self).key_to_bindings.get(event.key, ()):
            if binding.action in self._OWN_ACTIONS:
                event.stop()
                event.prevent_default()
                await self.run_action(binding.action)
                return

    # -- sending -----------------------------------------------------------------------------------

    def action_submit(self) -> None:
        completions = self._refresh_completion()
        if completions is not None and (item := completions.highlighted_item) is not None:
            span = completions.span
            typed = self.text[span.start : span.end] if span is not None else ""
            if item.replacement.strip() != typed.strip():  # else it is typed out already: send
                self._accept(item)
                if not item.submit_on_enter:
                    return
        self._send(self.text.strip())

    def action_hold(self) -> None:
        """`tab` while a turn runs (no completion open): send the prompt for after the turn."""
        text = self.text.strip()
        if not text or not self.has_class("-running"):
            raise SkipAction()  # tab moves the focus on, as usual
        self._send(text, hold=True)

    def _send(self, text: str, *, hold: bool = False) -> None:
        if not text:
            return
        self.clear()
        self._close_completion()
        if self.prompt_history is not None:
            self.prompt_history.reset()
        self.post_message(self.Submitted(self, text, hold=hold))

    def action_newline(self) -> None:
        self.insert("\n")

    def restore(self, text: str) -> None:
        """Put `text` back in front of whatever the prompt holds now (a prompt that was not sent)."""
        current = self.text
        self.load_text(f"{text}\n{current}" if current.strip() else text)
        self.move_cursor(self.document.end)
        self._recalled = self.text

    def show_error(self, message: str) -> None:
        """Say in one line, above the prompt, why the prompt was not sent; cleared by the next edit."""
        if self.error_line is None:
            self.notify(message, severity="error")
            return
        self._error_for = self.text
        self.error_line.update(message)
        self.error_line.add_class("-shown")

    def _clear_error(self) -> None:
        if self.error_line is not None and self._error_for is not None:
            self._error_for = None
            self.error_line.remove_class("-shown")
            self.error_line.update("")

    # -- history -----------------------------------------------------------------------------------

    def action_history_previous(self) -> None:
        if (completions := self._refresh_completion()) is not None:
            completions.move(-1)
            return
        if self.prompt_history is None or not self.navigator.is_first_wrapped_line(self.cursor_location):
            raise SkipAction()
        entry = self.prompt_history.previous(self.text)
        if entry is not None:
            self._show_recalled(entry, at_start=True)

    def action_history_next(self) -> None:
        if (completions := self._refresh_completion()) is not None:
            completions.move(1)
            return
        if self.prompt_history is None or not self.prompt_history.browsing:
            raise SkipAction()
        if not self.navigator.is_last_wrapped_line(self.cursor_location):
            raise SkipAction()
        entry = self.prompt_history.next()
        if entry is not None:
            self._show_recalled(entry, at_start=False)

    def _show_recalled(self, text: str, *, at_start: bool) -> None:
        # Going back the cursor lands on the first line, going forward on the last, so holding
        # the key keeps walking through multi-line prompts.
        self._recalled = text
        self.load_text(text)
        self.move_cursor((0, 0) if at_start else self.document.end)

    # -- completion --------------------------------------------------------------------------------

    def action_complete(self) -> None:
        completions = self._refresh_completion(force=True)
        if completions is None:
            raise SkipAction()  # tab moves the focus on, as usual
        item = completions.highlighted_item
        if item is not None:
            self._accept(item)

    def action_close_completion(self) -> None:
        if self.completions is None or not self.completions.is_open:
            raise SkipAction()
        self._close_completion()
        self._recalled = self.text  # stays closed until the next edit

    @on(TextArea.Changed)
    def _edited(self) -> None:
        if self._error_for is not None and self.text != self._error_for:
            self._clear_error()
        self._refresh_completion()
        self._show_chips()

    def _workdir(self) -> Path:
        return self.workdir if self.workdir is not None else Path.cwd()

    def _show_chips(self) -> None:
        if self.chips is None:
            return
        from tui_assist.session.mentions import IMAGE_SUFFIXES, image_chips

        text = self.text
        lowered = text.lower()
        maybe = "@" in text and any(suffix in lowered for suffix in IMAGE_SUFFIXES)
        self.chips.show(image_chips(text, self._workdir()) if maybe else [])

    async def on_paste(self, event: events.Paste) -> None:
        # Textual calls each class's handler in turn: TextArea's pastes unless this one prevents it.
        image = pasted_image(event.text)
        if image is None:
            return
        event.prevent_default()
        root = self._workdir().resolve()
        resolved = image.resolve()
        shown = str(resolved.relative_to(root)) if resolved.is_relative_to(root) else str(image)
        from tui_assist.session.mentions import format_mention

        if result := self.replace(format_mention(shown) + " ", *self.selection):
            self.move_cursor(result.end_location)
        self.focus()

    @on(TextArea.SelectionChanged)
    def _cursor_moved(self) -> None:
        if self.completions is not None and self.completions.is_open:
            self._refresh_completion()

    def _refresh_completion(self, *, force: bool = False) -> CompletionList | None:
        """Ask the sources about the text at the cursor; the open list, or None."""
        completions = self.completions
        if completions is None:
            return None
        text = self.text
        if (text == self._recalled and not force) or not self.sources or self.selected_text:
            self._close_completion()
            return None
        self._recalled = None
        cursor = self._document.get_index_from_location(self.cursor_location)
        for source in self.sources:
            span = source.span_at(text, cursor)
            if span is not None:
                completions.show(span, source.items(span))
                return completions if completions.is_open else None
        self._close_completion()
        return None

    def refresh_completion(self) -> None:
        """Ask the sources again (one has new items, say a file listing that finished)."""
        self._refresh_completion()

    def _close_completion(self) -> None:
        if self.completions is not None and self.completions.is_open:
            self.completions.close()

    @property
    def _document(self) -> Document:
        document = self.document
        assert isinstance(document, Document)  # a plain-text editor: no syntax-aware document
        return document

    def _accept(self, item: CompletionItem) -> None:
        assert self.completions is not None
        span = self.completions.span
        self._close_completion()
        if span is None:
            return
        document = self._document
        start = document.get_location_from_index(span.start)
        end = document.get_location_from_index(min(span.end, len(self.text)))
        result = self.replace(item.replacement, start, end)
        self.move_cursor(result.end_location)


class PromptBox(Vertical):
    """The completion list, the error line and the prompt, stacked at the foot of the chat.

    The completion list is mounted above them after the first frame (by the main screen), with
    the imports it needs.
    """

    DEFAULT_CSS = """
    PromptBox {
        height: auto;
    }
    """

    def compose(self) -> ComposeResult:
        error_line = PromptError(id="prompt-error")
        chips = PromptChips(id="prompt-chips")
        yield error_line
        yield chips
        yield Prompt(id="prompt", error_line=error_line, chips=chips)
