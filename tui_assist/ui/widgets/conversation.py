"""The conversation pane: prompts, streamed answers, compact tool calls and turn badges.

Only the main generator's output is shown here (the turn's agent, or each refine round's
generator); sub-agents and critics live in the agent tree, with one verdict line per round.
Finished text is static (`StreamingMarkdown` commits it), and old turns are unmounted beyond a
cap, so neither a long answer nor a long session makes frames slower.

A layout arranges every displayed widget of the screen, and a streaming answer that grows taller
asks for one several times a second: with a hundred turns of eight or so widgets each in the pane,
arranging them cost more than streaming the answer. So a finished turn a few turns back is
*compacted*: it draws itself from lines captured from its children (the look is the same) and its
children are hidden, so a layout arranges one widget for it instead of a dozen. The children stay
mounted, with everything the cursor and the copy key need; selecting one of them, the mouse
entering the turn, or a theme or width change expands the turn again (it is compacted again when
the next turn starts).

The pane has a message cursor, as a list has: with the focus in the pane (click a message, or tab
to it), up / down / home / end select a `ConversationEntry` (a prompt, an answer, a tool call, a
verdict, a notice). The selection is highlighted, and offered to the copy key, only while the pane
has the focus: back in the prompt, the copy key copies the last answer again. Selecting text with
the mouse (Textual's own; ctrl+c copies it) works too: every entry implements `get_selection`.
"""

from __future__ import annotations

import json
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    StreamRetried,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    VerdictReached,
)
from tui_assist.core.text import clip, duration
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown

MAX_TURN_VIEWS = 100
"""Turns kept mounted; older ones are removed (they stay in the store and the export)."""
LIVE_TURNS = 3
"""The newest turns that are never compacted (they are the ones that change)."""
COMPACT_MAX_LINES = 300
"""Taller turns are not compacted: their captured lines would cost more memory (and garbage
collection time) than the few widgets they save cost in layout."""
_BODY_LIMIT = 6_000
_STATE_ICONS = {"running": "…", "done": "✓", "failed": "✗", "cancelled": "⊘"}


def key_argument(name: str, tool_input: dict[str, Any]) -> str:
    """The one argument that says what a tool call does (a command, a path, a description)."""
    for key in ("command", "path", "description", "prompt", "query"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            if key == "command" and name != "bash" and isinstance(tool_input.get("path"), str):
                return f"{value} {tool_input['path']}"
            return value
    for value in tool_input.values():
        if isinstance(value, str):
            return value
    return ""


class ConversationEntry:
    """A message in the pane that the cursor can select and the copy key can copy (a mixin)."""

    @property
    def copy_label(self) -> str:
        """What the entry is, for the notification ("Copied the answer (120 characters).")."""
        return "the message"

    def copy_text(self) -> str:
        """The text the copy key puts on the clipboard."""
        return ""


class UserMessage(ConversationEntry, Static):
    """What the user sent."""

    DEFAULT_CSS = """
    UserMessage {
        padding: 0 1;
        margin: 1 0 0 0;
        background: $boost;
        color: $foreground;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Content(text))
        self.text = text

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
        self._header = Static(self._header_content(), classes="tool-call--header")
        self._body = Static("", classes="tool-call--body")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._body

    def _header_content(self) -> Content:
        style = {"running": "$warning", "done": "$success", "failed": "$error", "cancelled": "$error"}[
            self.state
        ]
        parts: list[Content | tuple[str, str] | str] = [
            (_STATE_ICONS[self.state], style),
            " ",
            (self.tool_name, "bold"),
        ]
        argument = key_argument(self.tool_name, self.tool_input)
        if argument:
            parts += ["  ", (clip(argument, 70), "italic")]
        if self.duration is not None:
            parts += ["  ", (duration(self.duration), "dim")]
        elif self.state == "cancelled":
            parts += ["  ", ("cancelled", "dim")]
        return Content.assemble(*parts)

    def finish(self, output: str, is_error: bool, duration: float) -> None:
        self.state = "failed" if is_error else "done"
        self.output = output
        self.duration = duration
        self._update()

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
        output = (
            self.output if len(self.output) <= _BODY_LIMIT else self.output[:_BODY_LIMIT] + "\n[… truncated]"
        )
        return Content.assemble(("input\n", "bold"), shown, ("\noutput\n", "bold"), output or "(none yet)")

    def action_toggle_details(self) -> None:
        expanded = not self.has_class("-expanded")
        self.set_class(expanded, "-expanded")
        if expanded:
            self._body.update(self._body_content())
        self.post_message(self.Toggled(self))

    def on_click(self) -> None:
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


class RoundView(Vertical):
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


class TurnView(Vertical):
    """One exchange: the prompt, then everything the turn showed."""

    DEFAULT_CSS = """
    TurnView {
        height: auto;
    }
    TurnView.-compact > * {
        display: none;
    }
    """

    def __init__(self, prompt: str, strategy: str, *, answer: str | None = None) -> None:
        super().__init__()
        self.prompt = prompt
        self.strategy = strategy
        self.turn_id: str | None = None
        self.answer = answer or ""
        self.outcome: str | None = None if answer is None else "answered"
        self._containers: dict[str, Vertical] = {}
        """Generator node id -> where its text and tool calls go."""
        self._last_text: dict[str, AnswerText] = {}
        self._tools: dict[str, ToolCallView] = {}
        self._rounds: dict[str, RoundView] = {}
        self._lines: list[list[Segment]] | None = None
        """While compacted: the turn as its children drew it."""
        self._placements: dict[Widget, Region] = {}
        """While compacted: where each shown descendant was, relative to the turn."""
        self._compacted_as: tuple[int, str] = (0, "")
        """The width and theme the lines were captured at."""

    @property
    def running(self) -> bool:
        return self.turn_id is not None and self.outcome is None

    # -- compaction ------------------------------------------------------------------------------

    @property
    def compacted(self) -> bool:
        return self._lines is not None

    def compact(self) -> bool:
        """Draw the finished turn from captured lines and hide its children; False if it can't now."""
        if self._lines is not None or self.running or not self.children:
            return False
        origin = self.region
        width, height = self.size
        if not origin or not width or height > COMPACT_MAX_LINES:
            return False
        if any(node.has_focus or node.has_class("-selected") for node in self.walk_children(Widget)):
            return False
        # Gaps (margins) show the turn's own background, as the compositor draws them.
        blank = Strip.blank(width, Style(bgcolor=self.visual_style.rich_style.bgcolor))
        lines = [blank] * height
        placements: dict[Widget, Region] = {}
        # Parents come before their children, so a child is drawn over its container (a tool
        # call's border, a round's background), as the compositor does.
        for node in self.walk_children(Widget, with_self=False):
            region = node.region
            if not region:
                continue  # not shown (a folded draft, a collapsed body)
            placed = region.translate(-origin.offset)
            placements[node] = placed
            right = min(placed.right, width)
            for row, strip in enumerate(node.render_lines(Region(0, 0, *region.size)), placed.y):
                if 0 <= row < height and placed.x < right:
                    line = lines[row]
                    piece = strip.crop(0, right - placed.x)
                    lines[row] = Strip.join([line.crop(0, placed.x), piece, line.crop(right, width)])
        # Kept as plain segments: a `Strip` carries seven caches, and every object kept alive here
        # is one more that each of Python's full collections scans.
        self._lines = [list(Segment.simplify(line)) for line in lines]
        self._placements = placements
        self._compacted_as = (width, self.app.theme)
        self.add_class("-compact")
        self.refresh(layout=True)
        return True

    def uncompact(self) -> None:
        """Show the children again (they draw the same lines)."""
        if self._lines is None:
            return
        self._lines = None
        self._placements = {}
        self.remove_class("-compact")
        self.refresh(layout=True)

    def placement(self, widget: Widget) -> Region | None:
        """Where `widget` is drawn in the compacted turn, relative to the turn."""
        return self._placements.get(widget)

    def widget_at(self, y: int) -> Widget | None:
        """The innermost descendant drawn at line `y` of the compacted turn."""
        found: Widget | None = None
        for widget, region in self._placements.items():
            if region.y <= y < region.bottom:
                found = widget  # later placements are deeper or lower: the last match is innermost
        return found

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._lines is not None:
            return len(self._lines)
        return super().get_content_height(container, viewport, width)

    def render_line(self, y: int) -> Strip:
        lines = self._lines
        if lines is None:
            return super().render_line(y)
        if 0 <= y < len(lines):
            return Strip(lines[y], self.size.width)
        return Strip.blank(self.size.width, self.visual_style.rich_style)

    def on_resize(self, event: events.Resize) -> None:
        if self._lines is not None and event.size.width != self._compacted_as[0]:
            self.uncompact()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self._lines is not None and self.app.theme != self._compacted_as[1]:
            self.uncompact()

    def on_enter(self) -> None:
        # The mouse is on the turn: expand it before a button goes down, so that text selection
        # (which starts on the widget under the pointer) and hover work as on any live turn.
        self.uncompact()

    def on_click(self, event: events.Click) -> None:
        """A click on a compacted turn expands it and acts as a click on what was drawn there."""
        if self._lines is None:
            return
        event.stop()
        target = self.widget_at(event.y)
        self.uncompact()
        node: Any = target
        entry: ConversationEntry | None = None
        while isinstance(node, Widget) and node is not self:
            if isinstance(node, ToolCallView):
                node.action_toggle_details()
            elif isinstance(node, RoundView) and node.foldable:
                node.fold(not node.has_class("-folded"))
            if entry is None and isinstance(node, ConversationEntry):
                entry = node
            node = node.parent
        conversation = self.parent
        if isinstance(conversation, Conversation) and entry is not None:
            conversation.select_message(entry, scroll=False)

    def apply(self, event: TurnEvent) -> None:
        """Show one event of this turn."""
        match event:
            case NodeStarted(parent_id=None):
                self.turn_id = event.node_id
            case NodeStarted(node_kind="round"):
                view = RoundView(event.node_id, len(self._rounds) + 1)
                self._rounds[event.node_id] = view
                self.mount(view)
                view.mount(RoundHeader(f"round {view.index}"))
            case NodeStarted(node_kind="agent" | "generate") if self._is_main(event.parent_id):
                where = self._rounds.get(event.parent_id or "")
                self._containers[event.node_id] = where if where is not None else self
            case TextDelta(node_id=node_id) if node_id in self._containers:
                text = self._last_text.get(node_id)
                if text is None or text.finished:
                    text = AnswerText(node_id)
                    self._last_text[node_id] = text
                    self._containers[node_id].mount(text)
                text.append(event.text)
            case StreamRetried(node_id=node_id) if node_id in self._last_text:
                text = self._last_text[node_id]
                if not text.finished:
                    text.reset()
            case ToolCallStarted(parent_id=parent) if parent in self._containers:
                self._finish_text(parent)
                view = ToolCallView(event.node_id, event.name, event.input)
                self._tools[event.node_id] = view
                self._containers[parent].mount(view)
            case ToolCallFinished(node_id=node_id) if node_id in self._tools:
                self._tools[node_id].finish(event.output, event.is_error, event.duration)
            case VerdictReached():
                round_view = self._round_of_critic(event)
                (round_view or self).mount(VerdictLine(event.verdict, event.feedback))
            case NodeFinished(node_id=node_id) if node_id in self._containers:
                self._finish_text(node_id)
            case NodeFinished(node_id=node_id) if node_id == self.turn_id:
                self._end(event)
            case _:
                pass

    def _is_main(self, parent_id: str | None) -> bool:
        return parent_id is not None and (parent_id == self.turn_id or parent_id in self._rounds)

    def _round_of_critic(self, event: VerdictReached) -> RoundView | None:
        for view in self._rounds.values():
            if view.index == event.round:
                return view
        return None

    def _finish_text(self, node_id: str | None) -> None:
        text = self._last_text.get(node_id or "")
        if text is not None and not text.finished:
            text.finish()

    def _end(self, event: NodeFinished) -> None:
        if self.outcome is not None:
            return
        for node_id in list(self._last_text):
            self._finish_text(node_id)
        for tool in self._tools.values():
            tool.cancel()
        self.outcome = event.outcome or ("cancelled" if event.status == "cancelled" else "error")
        self.answer = event.output
        rounds = list(self._rounds.values())
        for view in rounds[:-1]:
            view.fold()
        badge, state = self._badge(event, len(rounds))
        if badge:
            self.mount(TurnBadge(badge, classes=f"-{state}"))

    def _badge(self, event: NodeFinished, rounds: int) -> tuple[str, str]:
        if event.status == "cancelled":
            return "⊘ cancelled: anything already stored is kept", "cancelled"
        if event.status == "failed" or self.outcome == "error":
            return f"✗ error: {clip(event.error or 'the turn failed', 200)}", "error"
        if self.outcome == "budget_exhausted":
            return "⚠ budget exhausted: the answer may be incomplete", "budget_exhausted"
        if self.strategy == "refine":
            if self.outcome == "answered":
                return f"✓ passed in round {rounds}", "pass"
            return f"⚠ unverified: no PASS in {rounds} round{'s' if rounds != 1 else ''}", "unverified"
        return "", ""

    def mark_unsent(self) -> None:
        """The prompt never reached a model."""
        if self.outcome is None:
            self.outcome = "unsent"
            self.mount(TurnBadge("not sent", classes="-error"))

    def mark_cancelled(self) -> None:
        """The worker ended without the core reporting the turn's end (cancelled early)."""
        if self.outcome is None:
            self._end(NodeFinished(node_id=self.turn_id or "", status="cancelled", outcome="cancelled"))


class Conversation(VerticalScroll):
    """The scrolling conversation; stays anchored to the bottom while answers stream."""

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
    }
    Conversation .-selected {
        background: $primary 20%;
    }
    """
    # Up / down move the message cursor instead of scrolling by a line (page up / page down and
    # the mouse wheel still scroll); selecting a message scrolls it into view.
    BINDINGS = [
        Binding("up", "select_previous_message", "Previous message", id="select-previous-message"),
        Binding("down", "select_next_message", "Next message", id="select-next-message"),
        Binding("home", "select_first_message", "First message", id="select-first-message", show=False),
        Binding("end", "select_last_message", "Last message", id="select-last-message", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._by_turn: dict[str, TurnView] = {}
        self._current: TurnView | None = None
        self._selected: ConversationEntry | None = None
        """The message cursor; shown and offered to the copy key only while the pane has focus."""
        self._compaction_queued = False

    # Textual's `anchor()` keeps the bottom in view while content grows, without an extra frame,
    # but bottom-aligns content shorter than the viewport (a negative scroll offset), which leaves
    # a fresh conversation hanging at the bottom. So anchor only once the content overflows.
    def watch_virtual_size(self) -> None:
        overflow = self.virtual_size.height > self.scrollable_content_region.height
        if overflow and not self.is_anchored:
            self.anchor()
        elif not overflow and self.is_anchored:
            self.anchor(False)
            self.scroll_home(animate=False, immediate=True)

    def add_notice(self, markdown: str, *, classes: str | None = None) -> Notice:
        notice = Notice(markdown, classes=classes)
        self._mount_child(notice)
        return notice

    # -- the message cursor ------------------------------------------------------------------

    @property
    def selected_message(self) -> ConversationEntry | None:
        """The message the cursor is on, while the pane (or a tool call in it) has focus."""
        entry = self._selected
        if entry is None or not self.has_focus_within or not self._shown(entry):
            return None
        return entry

    def entries(self) -> list[ConversationEntry]:
        """The messages the cursor can select, top to bottom (folded drafts are skipped)."""
        return [node for node in self.query("*") if isinstance(node, ConversationEntry) and self._shown(node)]

    def select_message(self, entry: ConversationEntry | None, *, scroll: bool = True) -> None:
        """Put the cursor on `entry` (None clears it) and scroll it into view."""
        previous = self._selected
        self._selected = entry
        if isinstance(previous, Widget) and previous is not entry:
            previous.remove_class("-selected")
        if not isinstance(entry, Widget):
            return
        turn = self._compacted_turn_of(entry)
        if turn is not None:
            turn.uncompact()
            if scroll:
                # The turn is laid out again (to the same size) before the entry has a region.
                self.call_after_refresh(self._scroll_to_entry, entry)
                scroll = False
        if entry.can_focus:
            # A tool call takes the focus, so its own keys (enter: details) act on it.
            entry.focus(scroll_visible=False)
        elif self.screen.focused is not self and self.has_focus_within:
            self.focus(scroll_visible=False)
        if scroll:
            self.scroll_to_widget(entry, animate=False, immediate=True)
        self._show_selection()

    def _scroll_to_entry(self, entry: Widget) -> None:
        if entry.is_attached:
            self.scroll_to_widget(entry, animate=False, immediate=True)

    def _compacted_turn_of(self, entry: object) -> TurnView | None:
        node: Any = entry
        while isinstance(node, Widget) and node is not self:
            if isinstance(node, TurnView) and node.compacted:
                return node
            node = node.parent
        return None

    def action_select_previous_message(self) -> None:
        self._move(-1)

    def action_select_next_message(self) -> None:
        self._move(1)

    def action_select_first_message(self) -> None:
        entries = self.entries()
        if entries:
            self.select_message(entries[0])

    def action_select_last_message(self) -> None:
        entries = self.entries()
        if entries:
            self.select_message(entries[-1])

    def _move(self, step: int) -> None:
        entries = self.entries()
        if not entries:
            return
        current = self._selected
        if current is None or current not in entries:
            # The first press picks a message in view: the lowest one going up, the highest going down.
            in_view = [entry for entry in entries if self._in_view(entry)] or entries
            self.select_message(in_view[-1] if step < 0 else in_view[0])
            return
        index = entries.index(current) + step
        self.select_message(entries[max(0, min(index, len(entries) - 1))])

    def _shown(self, entry: ConversationEntry) -> bool:
        node: Any = entry
        while isinstance(node, Widget) and node is not self:
            if not node.is_attached:
                return False
            # A compacted turn hides its children only to draw them itself: they count as shown.
            hidden_by_compaction = isinstance(node.parent, TurnView) and node.parent.compacted
            if not node.display and not hidden_by_compaction:
                return False
            node = node.parent
        return node is self

    def _in_view(self, entry: ConversationEntry) -> bool:
        if not isinstance(entry, Widget):
            return False
        turn = self._compacted_turn_of(entry)
        placed = turn.placement(entry) if turn is not None else None
        region = placed.translate(turn.region.offset) if turn is not None and placed else entry.region
        return region.overlaps(self.scrollable_content_region)

    def _show_selection(self) -> None:
        entry = self._selected
        if isinstance(entry, Widget):
            entry.set_class(self.has_focus_within and entry.is_attached, "-selected")

    def on_click(self, event: events.Click) -> None:
        node: Any = event.widget
        while isinstance(node, Widget) and node is not self:
            if isinstance(node, ConversationEntry):
                if node is not self._selected:
                    self.select_message(node, scroll=False)
                return
            node = node.parent

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, ConversationEntry) and event.widget is not self._selected:
            self.select_message(event.widget, scroll=False)
        self.call_later(self._show_selection)

    def on_descendant_blur(self) -> None:
        self.call_later(self._show_selection)

    def on_focus(self) -> None:
        self.call_later(self._show_selection)

    def on_blur(self) -> None:
        self.call_later(self._show_selection)

    def begin_turn(self, prompt: str, strategy: str) -> TurnView:
        """Show the user's prompt; the turn's events will follow."""
        view = TurnView(prompt, strategy)
        self._current = view
        self._mount_child(view)
        # Mounted explicitly (not composed) so it comes before anything the turn mounts.
        view.mount(UserMessage(prompt))
        return view

    def apply(self, event: TurnEvent) -> None:
        """Route an event to its turn."""
        view = self._current
        if isinstance(event, NodeStarted) and event.parent_id is None:
            if view is None or view.turn_id is not None:
                return
            view.apply(event)
            self._by_turn[event.node_id] = view
            return
        if view is not None and view.turn_id is not None:
            view.apply(event)

    def _mount_child(self, widget: Any) -> None:
        self.mount(widget)
        turns = [c for c in self.children if isinstance(c, TurnView | Notice)]
        excess = len(turns) - MAX_TURN_VIEWS
        if excess > 0:
            for old in turns[:excess]:
                if isinstance(old, TurnView) and old.turn_id:
                    self._by_turn.pop(old.turn_id, None)
                old.remove()
        if not self._compaction_queued:
            self._compaction_queued = True
            self.call_after_refresh(self._compact_old_turns)

    def _compact_old_turns(self) -> None:
        """Compact finished turns older than the newest `LIVE_TURNS` (see the module docstring)."""
        self._compaction_queued = False
        # The cursor's turn stays live, so the selection shows when the pane has the focus again.
        selected = self._selected.parent if isinstance(self._selected, Widget) else None
        while isinstance(selected, Widget) and not isinstance(selected, TurnView):
            selected = selected.parent
        turns = [child for child in self.children if isinstance(child, TurnView)]
        for turn in turns[:-LIVE_TURNS]:
            if not turn.compacted and turn is not selected:
                turn.compact()

    @property
    def last_answer(self) -> str:
        for view in reversed(list(self.query(TurnView))):
            if view.answer:
                return view.answer
        return ""

    @property
    def current(self) -> TurnView | None:
        return self._current

    def clear_all(self) -> None:
        self._by_turn.clear()
        self._current = None
        self._selected = None
        self.remove_children()

    def show_history(self, pairs: list[tuple[str, str]]) -> None:
        """Redraw a resumed conversation: (prompt, answer) pairs, rendered once."""
        for prompt, answer in pairs:
            view = TurnView(prompt, "agent", answer=answer)
            self._mount_child(view)
            view.mount(UserMessage(prompt))
            if answer:
                view.mount(AnswerText("", answer, finished=True))
