"""The widgets a turn is made of in the conversation pane.

The entries the message cursor selects and the copy key copies (`ConversationEntry`: the prompt,
an answer text, a tool call, a verdict, a notice), and the parts that group them: a refine round
(`RoundView` with its `RoundHeader`) and the badge that says how a turn ended.
"""

from __future__ import annotations

import json
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from tui_assist.core.events import FileDiff
from tui_assist.core.text import clip, duration
from tui_assist.core.tool_labels import key_argument, tool_title
from tui_assist.core.tooling import keep_diagnostic_lines
from tui_assist.ui.widgets.diff_view import DiffView
from tui_assist.ui.widgets.laid_out_size import LaidOutSize
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown

_BODY_LIMIT = 6_000
_STATE_ICONS = {"running": "…", "done": "✓", "failed": "✗", "cancelled": "⊘"}


class ConversationEntry:
    """A message in the pane that the cursor can select and the copy key can copy (a mixin)."""

    @property
    def copy_label(self) -> str:
        """What the entry is, for the notification ("Copied the answer (120 characters).")."""
        return "the message"

    def copy_text(self) -> str:
        """The text the copy key puts on the clipboard."""
        return ""


class UserMessage(ConversationEntry, LaidOutSize, Static):
    """What the user sent."""

    DEFAULT_CSS = """
    UserMessage {
        padding: 0 1;
        margin: 1 0 0 0;
        background: $boost;
        color: $foreground;
    }
    """

    def __init__(self, text: str, images: list[tuple[str, int]] | None = None) -> None:
        from tui_assist.ui.widgets.prompt import image_chips_content

        shown = Content(text)
        if images:  # the attached images, as the prompt showed them
            shown = Content("\n").join([shown, image_chips_content(images)])
        super().__init__(shown)
        self.text = text
        self.images = images or []

    @property
    def copy_label(self) -> str:
        return "the prompt"

    def copy_text(self) -> str:
        return self.text


class Notice(ConversationEntry, StreamingMarkdown):
    """An app message in the conversation (how to configure a provider, errors, hints)."""

    DEFAULT_CSS = """
    Notice {
        padding: 0 1;
        margin: 1 0 0 0;
        background: $surface;
    }
    """

    def __init__(self, markdown: str, *, classes: str | None = None) -> None:
        super().__init__(markdown, classes=classes, finished=True)

    @property
    def copy_label(self) -> str:
        return "the notice"

    def copy_text(self) -> str:
        return self.source


class AnswerText(ConversationEntry, StreamingMarkdown):
    """A run of text one generator node streamed."""

    DEFAULT_CSS = """
    AnswerText {
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, node_id: str, text: str = "", *, finished: bool = False) -> None:
        super().__init__(text, finished=finished)
        self.node_id = node_id

    @property
    def copy_label(self) -> str:
        parent = self.parent
        return f"the round {parent.index} draft" if isinstance(parent, RoundView) else "the answer"

    def copy_text(self) -> str:
        return self.source


class ThinkingView(ConversationEntry, Static, can_focus=True):
    """The model's extended thinking: one dimmed line, folded; enter or a click shows it all."""

    DEFAULT_CSS = """
    ThinkingView {
        padding: 0 1;
        margin: 1 0 0 0;
        color: $foreground 55%;
        text-style: italic;
    }
    ThinkingView:focus {
        background: $boost;
    }
    """
    BINDINGS = [Binding("enter,space", "toggle_details", "Details", id="toggle-thinking")]

    def __init__(self, node_id: str, text: str = "") -> None:
        super().__init__("")
        self.node_id = node_id
        self.text = text
        self.expanded = False
        self.finished = False
        self._render_text()

    def append(self, delta: str) -> None:
        self.text += delta
        self._render_text()

    def finish(self) -> None:
        self.finished = True
        self._render_text()

    def _render_text(self) -> None:
        words = len(self.text.split())
        verb = "thought" if self.finished else "thinking…"
        if self.expanded:
            self.update(Content.assemble((f"▾ {verb} ({words} words)\n", "bold"), self.text))
            return
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        self.update(
            Content.assemble((f"▸ {verb} ({words} words)", "bold"), f"  {clip(first, 80)}" if first else "")
        )

    def action_toggle_details(self) -> None:
        self.expanded = not self.expanded
        self._render_text()

    def on_click(self) -> None:
        self.action_toggle_details()

    @property
    def copy_label(self) -> str:
        return "the thinking"

    def copy_text(self) -> str:
        return self.text


class ToolCallView(ConversationEntry, Vertical, can_focus=True):
    """One tool call: name, key argument, status and duration; enter or a click shows it all."""

    DEFAULT_CSS = """
    ToolCallView {
        height: auto;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    ToolCallView:focus {
        background: $boost;
    }
    ToolCallView > .tool-call--body {
        display: none;
        color: $foreground 80%;
        padding: 0 0 0 2;
    }
    ToolCallView.-expanded > .tool-call--body {
        display: block;
    }
    """
    BINDINGS = [Binding("enter,space", "toggle_details", "Details", id="toggle-details")]

    class Toggled(Message):
        """The details were shown or hidden."""

        def __init__(self, view: ToolCallView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, node_id: str, name: str, tool_input: dict[str, Any]) -> None:
        super().__init__(classes="-running")
        self.node_id = node_id
        self.tool_name = name
        self.tool_input = tool_input
        self.state = "running"
        self.output = ""
        self.duration: float | None = None
        self.diff: FileDiff | None = None
        self._header = Static(self._header_content(), classes="tool-call--header")
        self._body = Static("", classes="tool-call--body")

    def compose(self) -> ComposeResult:
        yield self._header
        if self.diff is not None:
            yield DiffView(self.diff)
        yield self._body

    def _header_content(self) -> Content:
        style = {"running": "$warning", "done": "$success", "failed": "$error", "cancelled": "$error"}[
            self.state
        ]
        verb, _, rest = tool_title(self.tool_name, self.tool_input, self.diff).partition(" ")
        parts: list[Content | tuple[str, str] | str] = [
            (_STATE_ICONS[self.state], style),
            " ",
            (verb, "bold"),
        ]
        if rest:
            parts += [" ", (clip(rest, 70), "italic")]
        if self.duration is not None:
            parts += ["  ", (duration(self.duration), "dim")]
        elif self.state == "cancelled":
            parts += ["  ", ("cancelled", "dim")]
        return Content.assemble(*parts)

    def finish(self, output: str, is_error: bool, duration: float, diff: FileDiff | None = None) -> None:
        self.state = "failed" if is_error else "done"
        self.output = output
        self.duration = duration
        self.diff = diff
        self._update()
        if diff is not None and self._body.is_attached:  # else `compose` adds it
            self.mount(DiffView(diff), before=self._body)

    def cancel(self) -> None:
        if self.state == "running":
            self.state = "cancelled"
            self._update()

    def _update(self) -> None:
        self.set_class(self.state == "running", "-running")
        self.set_class(self.state == "failed", "-failed")
        self.set_class(self.state == "cancelled", "-cancelled")
        self._header.update(self._header_content())
        if self.has_class("-expanded"):
            self._body.update(self._body_content())

    def _body_content(self) -> Content:
        shown = json.dumps(self.tool_input, indent=2, ensure_ascii=False)
        output = self.output
        if len(output) > _BODY_LIMIT:
            # The language server's errors end an edit's result: they stay in sight when it is cut.
            output = keep_diagnostic_lines(output[:_BODY_LIMIT] + "\n[… truncated]", output)
        return Content.assemble(("input\n", "bold"), shown, ("\noutput\n", "bold"), output or "(none yet)")

    def show_details(self, expanded: bool) -> None:
        """Show the whole input and output below the header, or hide them."""
        self.set_class(expanded, "-expanded")
        if expanded:
            self._body.update(self._body_content())

    def action_toggle_details(self) -> None:
        diffs = list(self.query(DiffView).results(DiffView))
        if diffs and diffs[0].folded:  # a folded diff unfolds first; the raw call comes next
            diffs[0].toggle()
            return
        self.show_details(not self.has_class("-expanded"))
        self.post_message(self.Toggled(self))

    def on_click(self, event: events.Click) -> None:
        if isinstance(event.widget, DiffView):
            return  # the diff folds itself
        self.action_toggle_details()

    @property
    def copy_label(self) -> str:
        return f"the {self.tool_name} call"

    def copy_text(self) -> str:
        """The call as the details show it, with the whole output."""
        argument = key_argument(self.tool_name, self.tool_input)
        shown = json.dumps(self.tool_input, indent=2, ensure_ascii=False)
        output = self.output or ("(none yet)" if self.state == "running" else "(none)")
        head = f"{self.tool_name}: {argument}" if argument else self.tool_name
        return f"{head}\n\ninput\n{shown}\n\noutput\n{output}"


class VerdictLine(ConversationEntry, Static):
    """A critic's verdict on one round."""

    DEFAULT_CSS = """
    VerdictLine {
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, verdict: str, feedback: str) -> None:
        label = "PASS" if verdict == "pass" else "REVISE"
        clipped = clip(feedback, 120)
        super().__init__(
            Content.assemble(
                ("critic: ", "bold"),
                (label, "$success bold" if verdict == "pass" else "$warning bold"),
                (f" — {clipped}" if clipped else "", ""),
            ),
            classes=f"-{verdict}",
        )
        self.verdict = verdict
        self.feedback = feedback

    @property
    def copy_label(self) -> str:
        return "the critic's verdict"

    def copy_text(self) -> str:
        label = "PASS" if self.verdict == "pass" else "REVISE"
        return f"{label}\n\n{self.feedback}" if self.feedback else label


class RoundHeader(Static):
    """The heading of one refine round."""

    DEFAULT_CSS = """
    RoundHeader {
        margin: 1 0 0 0;
        padding: 0 1;
        color: $secondary;
        text-style: bold;
    }
    """


class TurnBadge(Static):
    """How a turn ended: passed in round k, unverified, cancelled, error..."""

    DEFAULT_CSS = """
    TurnBadge {
        padding: 0 1;
        margin: 1 0 0 0;
        text-style: bold;
    }
    """


class RoundView(LaidOutSize, Vertical):
    """One refine round's drafts; earlier rounds fold to their header once the turn ends."""

    DEFAULT_CSS = """
    RoundView {
        height: auto;
    }
    RoundView.-folded > * {
        display: none;
    }
    RoundView.-folded > RoundHeader, RoundView.-folded > VerdictLine {
        display: block;
    }
    """

    def __init__(self, node_id: str, index: int) -> None:
        super().__init__()
        self.node_id = node_id
        self.index = index
        self.foldable = False

    def fold(self, folded: bool = True) -> None:
        """Show only the header and verdict (the turn moved on), or everything again."""
        self.foldable = True
        self.set_class(folded, "-folded")
        marker = "▸" if folded else "▾"
        hint = "  (draft hidden: click to show)" if folded else ""
        for header in self.query(RoundHeader):
            header.update(f"{marker} round {self.index}{hint}")

    def on_click(self) -> None:
        if self.foldable:
            self.fold(not self.has_class("-folded"))
