"""The conversation pane: prompts, streamed answers, compact tool calls and turn badges.

Only the main generator's output is shown here (the turn's agent, or each refine round's
generator); sub-agents and critics live in the agent tree, with one verdict line per round.
Finished text is static (`StreamingMarkdown` commits it), and old turns are unmounted beyond a
cap, so neither a long answer nor a long session makes frames slower.

A finished turn a few turns back is *compacted* (see `compaction`): it draws itself from lines
captured from its children and drops them, so a layout arranges one widget for it instead of a
dozen and the garbage collector scans a handful of objects; the cursor steps over it as one item
and builds it again (from the events it keeps) when it lands on it, as do a search hit, a click or
the mouse hovering it; the pane compacts it again when the next turn starts.

A resumed conversation shows its newest turns first; earlier ones are read from the store a page
at a time and mounted above when the user scrolls to the top (or moves the cursor up past the
first message), so opening a conversation costs the same at any length (`offer_earlier`).

The pane has a message cursor, as a list has: with the focus in the pane (click a message, or tab
to it), up / down / home / end select a `ConversationEntry` (a prompt, an answer, a tool call, a
verdict, a notice). The selection is highlighted, and offered to the copy key, only while the pane
has the focus: back in the prompt, the copy key copies the last answer again. Selecting text with
the mouse (Textual's own; ctrl+c copies it) works too: every entry implements `get_selection`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.binding import Binding
from textual.containers import Vertical
from textual.widget import AwaitMount, Widget

from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    PromptJoined,
    StreamRetried,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    VerdictReached,
)
from tui_assist.core.text import clip
from tui_assist.core.tree import NodeLog
from tui_assist.ui.textual_private import StripBarVerticalScroll
from tui_assist.ui.widgets.compaction import CompactableTurn
from tui_assist.ui.widgets.plan import tool_call_view
from tui_assist.ui.widgets.queued_prompt import JoinedPrompt
from tui_assist.ui.widgets.streaming_markdown import LaidOutSize
from tui_assist.ui.widgets.turn_parts import (
    AnswerText,
    ConversationEntry,
    Notice,
    RoundHeader,
    RoundView,
    ThinkingView,
    ToolCallView,
    TurnBadge,
    UserMessage,
    VerdictLine,
)

if TYPE_CHECKING:
    from tui_assist.session.chat import StoredTurn

TurnKey = int | str
"""A stored turn: its position in the conversation (`seq`), or its id (a turn run in this session)."""
EarlierTurns = Callable[[TurnKey], Awaitable[Sequence["StoredTurn"]]]
"""Reads the page of stored turns before a turn (`ChatSession.stored_page`)."""

MAX_TURN_VIEWS = 20
"""Turns kept mounted; older ones are removed, and read again from the store when the user scrolls
up to them. Every mounted turn is a widget each layout arranges (a streamed answer lays out many
times), so the cap is what keeps a turn's cost from growing with the session."""
MAX_UNSTORED_TURN_VIEWS = 100
"""The cap when the pane cannot read turns back (no store): removed turns would be gone, so more
stay, as many as before the cap above."""
LIVE_TURNS = 3
"""The newest turns that are never compacted (they are the ones that change)."""


class TurnView(CompactableTurn):
    """One exchange: the prompt, then everything the turn showed.

    The turn keeps the events it showed (text deltas merged), so that once compacted it can drop
    its widgets and build them again from the events (see `compaction`).
    """

    DEFAULT_CSS = """
    TurnView {
        height: auto;
    }
    """

    def __init__(
        self,
        prompt: str,
        strategy: str,
        *,
        answer: str | None = None,
        images: list[tuple[str, int]] | None = None,
    ) -> None:
        super().__init__()
        self.prompt = prompt
        self.images = images
        self.strategy = strategy
        self.turn_id: str | None = None
        self.seq: int | None = None
        """The stored turn's position in its conversation (None for a turn run in this session)."""
        self.answer = answer or ""
        self.outcome: str | None = None if answer is None else "answered"
        self._stored_answer = answer
        """A turn redrawn from a stored prompt and answer only (no events)."""
        self._log = NodeLog(max_turns=1)
        """The turn's events (deltas merged), to build the widgets again after compaction."""
        self._ending: NodeFinished | None = None
        """How the turn ended when the host, not an event, ended it."""
        self._unsent = False
        self._containers: dict[str, Vertical] = {}
        """Generator node id -> where its text and tool calls go."""
        self._last_text: dict[str, AnswerText] = {}
        self._thinking: dict[str, ThinkingView] = {}
        """Generator node id -> its thinking block being streamed (until text or a tool call)."""
        self._tools: dict[str, ToolCallView] = {}
        self._rounds: dict[str, RoundView] = {}
        self._compactions: set[str] = set()

    @property
    def running(self) -> bool:
        return self.turn_id is not None and self.outcome is None

    def start(self) -> None:
        """Show the prompt (and a stored answer): the first children, before any event."""
        self.mount(UserMessage(self.prompt, self.images))
        if self._stored_answer:
            self.mount(AnswerText("", self._stored_answer, finished=True))

    def on_click(self, event: events.Click) -> None:
        """A click on a compacted turn expands it and acts as a click on what was drawn there."""
        if not self.compacted:
            return
        event.stop()
        index = self.spot_at(event.y)
        target = self.expand_to(index) if index is not None else None
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

    # -- events -----------------------------------------------------------------------------

    def apply(self, event: TurnEvent) -> None:
        """Show one event of this turn (and keep it, to build the turn again)."""
        self._log.apply(event)
        self._show(event)

    def _show(self, event: TurnEvent) -> None:
        match event:
            case NodeStarted(parent_id=None):
                self.turn_id = event.node_id
            case NodeStarted(node_kind="round"):
                view = RoundView(event.node_id, len(self._rounds) + 1)
                self._rounds[event.node_id] = view
                self.mount(view)
                view.mount(RoundHeader(f"round {view.index}"))
            case NodeStarted(node_kind="compact"):
                self._compactions.add(event.node_id)
            case NodeFinished(node_id=node_id, output=output) if node_id in self._compactions and output:
                # Said where it happened: the history this turn sends from here on is compacted.
                self.mount(Notice(f"⇣ {output}", classes="-compacted"))
            case NodeStarted(node_kind="agent" | "generate") if self._log.is_main_generator(event.node_id):
                where = self._rounds.get(event.parent_id or "")
                self._containers[event.node_id] = where if where is not None else self
            case ThinkingDelta(node_id=node_id) if node_id in self._containers:
                thinking = self._thinking.get(node_id)
                if thinking is None or thinking.finished:
                    self._finish_text(node_id)
                    thinking = ThinkingView(node_id)
                    self._thinking[node_id] = thinking
                    self._containers[node_id].mount(thinking)
                thinking.append(event.text)
            case TextDelta(node_id=node_id) if node_id in self._containers:
                self._finish_thinking(node_id)
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
                self._finish_thinking(parent)
                view = tool_call_view(event.node_id, event.name, event.input)  # a plan: its checklist
                self._tools[event.node_id] = view
                self._containers[parent].mount(view)
            case ToolCallFinished(node_id=node_id) if node_id in self._tools:
                self._tools[node_id].finish(event.output, event.is_error, event.duration, event.diff)
            case PromptJoined(node_id=node_id) if node_id in self._containers:
                self._finish_text(node_id)  # said after what the turn showed before its next request
                self._finish_thinking(node_id)
                self._containers[node_id].mount(JoinedPrompt(event.text))
            case VerdictReached():
                round_view = self._round_of_critic(event)
                (round_view or self).mount(VerdictLine(event.verdict, event.feedback))
            case NodeFinished(node_id=node_id) if node_id in self._containers:
                self._finish_text(node_id)
                self._finish_thinking(node_id)
            case NodeFinished(node_id=node_id) if node_id == self.turn_id:
                self._end(event)
            case _:
                pass

    def _round_of_critic(self, event: VerdictReached) -> RoundView | None:
        for view in self._rounds.values():
            if view.index == event.round:
                return view
        return None

    def _finish_thinking(self, node_id: str | None) -> None:
        thinking = self._thinking.get(node_id or "")
        if thinking is not None and not thinking.finished:
            thinking.finish()

    def _finish_text(self, node_id: str | None) -> None:
        text = self._last_text.get(node_id or "")
        if text is not None and not text.finished:
            text.finish()

    def _end(self, event: NodeFinished, *, again: bool = False) -> None:
        if self.outcome is not None and not again:
            return
        for node_id in list(self._last_text):
            self._finish_text(node_id)
        for node_id in list(self._thinking):
            self._finish_thinking(node_id)
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
            return f"✗ error: {clip(event.error or 'the turn failed', 300)}", "error"
        if self.outcome == "budget_exhausted":
            return "⚠ budget exhausted: the answer may be incomplete", "budget_exhausted"
        if self.outcome == "budget":
            return (
                "⚠ spend cap reached: no further request went out (/budget N raises it)",
                "budget_exhausted",
            )
        if self.strategy == "refine":
            if self.outcome == "answered":
                return f"✓ passed in round {rounds}", "pass"
            return f"⚠ unverified: no PASS in {rounds} round{'s' if rounds != 1 else ''}", "unverified"
        return "", ""

    def mark_unsent(self) -> None:
        """The prompt never reached a model."""
        if self.outcome is None:
            self.outcome = "unsent"
            self._unsent = True
            self.mount(TurnBadge("not sent", classes="-error"))

    def mark_cancelled(self) -> None:
        """The worker ended without the core reporting the turn's end (cancelled early)."""
        if self.outcome is None:
            self._ending = NodeFinished(node_id=self.turn_id or "", status="cancelled", outcome="cancelled")
            self._end(self._ending)

    def offer_retry(self, key: str) -> None:
        """Say, under the error, that the prompt is back in the input and `key` sends it again."""
        for badge in self.query(TurnBadge).results(TurnBadge):
            if badge.has_class("-error"):
                badge.update(f"{badge.content}\n  The prompt is back in the input; {key} sends it again.")

    def mark_failed(self, error: str) -> None:
        """The turn failed outside the core (the host's own error): show it as the turn's error."""
        if self.outcome is None:
            self._ending = NodeFinished(
                node_id=self.turn_id or "", status="failed", outcome="error", error=error
            )
            self._end(self._ending)

    # -- compaction ---------------------------------------------------------------------------

    def drop_children(self) -> None:
        self._containers.clear()
        self._last_text.clear()
        self._thinking.clear()
        self._tools.clear()
        self._rounds.clear()

    def build(self) -> None:
        self.start()
        for event in self._log.streamed(self.turn_id or ""):
            if isinstance(event, NodeFinished) and event.node_id == self.turn_id:
                self._end(event, again=True)
            else:
                self._show(event)
        if self._ending is not None:
            self._end(self._ending, again=True)
        if self._unsent:
            self.mount(TurnBadge("not sent", classes="-error"))

    def addressable(self) -> list[Widget]:
        return [
            node
            for child in self.children
            if not child.has_class("-dropped")
            for node in child.walk_children(Widget, with_self=True)
            if isinstance(node, ConversationEntry | RoundView)
        ]

    def searchable_text(self, widget: Widget) -> str | None:
        return widget.copy_text() if isinstance(widget, ConversationEntry) else None

    def save_state(self) -> tuple[set[str], dict[str, bool]]:
        expanded = {node_id for node_id, tool in self._tools.items() if tool.has_class("-expanded")}
        folded = {
            node_id: view.has_class("-folded") for node_id, view in self._rounds.items() if view.foldable
        }
        return expanded, folded

    def restore_state(self, state: Any) -> None:
        if state is None:
            return
        expanded, folded = state
        for node_id in expanded:
            if node_id in self._tools:
                self._tools[node_id].show_details(True)
        for node_id, is_folded in folded.items():
            if node_id in self._rounds:
                self._rounds[node_id].fold(is_folded)


class Conversation(LaidOutSize, StripBarVerticalScroll):
    """The scrolling conversation; stays anchored to the bottom while answers stream.

    Its scrollbar is drawn straight to strips and repainted with the layout (see
    `StripBarVerticalScroll`): a streamed answer moves its thumb at every growth.
    """

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
    }
    Conversation .-selected {
        background: $primary 20%;
    }
    Conversation .-found {
        background: $warning 25%;
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
        self._current: TurnView | None = None
        self._selected: ConversationEntry | None = None
        """The message cursor; shown and offered to the copy key only while the pane has focus."""
        self._compaction_queued = False
        self._pages: EarlierTurns | None = None
        """How to read the shown conversation's stored turns, a page at a time."""
        self._oldest: TurnKey | None = None
        """The oldest turn shown, when there are earlier ones to read (None: there are none)."""
        self._loading_earlier = False

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

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value:
            self.load_earlier()

    # -- a resumed conversation, a page at a time ---------------------------------------------

    def show_stored(self, turn: StoredTurn) -> TurnView:
        """Mount a stored turn that has no event log (its prompt and answer) at the bottom."""
        view = TurnView(turn.prompt, turn.strategy, answer=turn.answer)
        view.seq = turn.seq
        self._mount_child(view)
        view.start()
        return view

    def offer_earlier(self, load: EarlierTurns | None, oldest: TurnKey | None) -> None:
        """Say how to read the shown conversation's stored turns (`load`), and which is the oldest
        shown when there are earlier ones (None: there are none, yet).

        While the turns shown don't fill the pane (nothing to scroll), earlier ones are loaded too.
        The turns removed past `MAX_TURN_VIEWS` are read again with `load`.
        """
        self._pages = load
        self._oldest = oldest if load is not None and oldest is not None and oldest != 1 else None
        if self._oldest is not None:
            self.call_after_refresh(self._fill_pane)

    def _fill_pane(self) -> None:
        if self.virtual_size.height <= self.scrollable_content_region.height:
            self.load_earlier()

    @property
    def has_earlier(self) -> bool:
        """Whether earlier stored turns can be loaded above the ones shown."""
        return self._oldest is not None

    @property
    def reads_pages(self) -> bool:
        """Whether the pane knows how to read its conversation's stored turns (`offer_earlier`)."""
        return self._pages is not None

    def load_earlier(self) -> None:
        """Read the page of turns before the oldest shown and mount it above, keeping the view still."""
        if self._pages is None or self._oldest is None or self._loading_earlier:
            return
        self._loading_earlier = True
        self.run_worker(self._load_earlier(self._pages, self._oldest), group="earlier-turns")

    async def _load_earlier(self, load: EarlierTurns, before: TurnKey) -> None:
        try:
            turns = await load(before)
        finally:
            self._loading_earlier = False
        if self._oldest != before or self._pages is not load:  # the conversation changed meanwhile
            return
        self.offer_earlier(load, turns[0].seq if turns else None)
        if not turns:
            return
        height, at_top = self.virtual_size.height, self.scroll_y <= 0
        first = next((c for c in self.children if isinstance(c, TurnView | Notice)), None)
        views: list[TurnView] = []
        for turn in turns:
            view = TurnView(turn.prompt, turn.strategy, answer=None if turn.events else turn.answer)
            view.seq = turn.seq
            views.append(view)
        if first is not None:
            await self.mount_all(views, before=first)
        else:
            await self.mount_all(views)
        for view, turn in zip(views, turns, strict=True):
            view.start()
            for event in turn.events:
                view.apply(event)

        def keep_in_place(tries: int = 5) -> None:
            # What was at the top stays there: the earlier turns are above it, scrolled past. On a
            # busy machine the layout that grows the pane may come a frame or two later; until
            # then the view would stay at the top (and ask for the page before at once).
            if not at_top:
                return
            grown = self.virtual_size.height - height
            if grown <= 0 and tries:
                self.call_after_refresh(keep_in_place, tries - 1)
                return
            self.scroll_to(y=grown, animate=False, immediate=True)

        self.call_after_refresh(keep_in_place)
        self.call_after_refresh(self._compact_old_turns)

    async def mounted(self) -> None:
        """Wait until every widget in the pane is mounted (a layout leaves out those that aren't)."""
        pending = [node for node in self.walk_children(Widget) if not node.is_mounted]
        if pending:
            await AwaitMount(self, pending)

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
        if entry.can_focus:
            # A tool call takes the focus, so its own keys (enter: details) act on it.
            entry.focus(scroll_visible=False)
        elif self.screen.focused is not self and self.has_focus_within:
            self.focus(scroll_visible=False)
        if scroll:
            if entry.region:
                self.scroll_to_widget(entry, animate=False, immediate=True)
            else:  # just built (an expanded turn): it has a region after the next layout
                self.call_after_refresh(self._scroll_to_entry, entry)
        self._show_selection()

    def _scroll_to_entry(self, entry: Widget) -> None:
        if entry.is_attached:
            self.scroll_to_widget(entry, animate=False, immediate=True)

    def action_select_previous_message(self) -> None:
        self._move(-1)

    def action_select_next_message(self) -> None:
        self._move(1)

    def action_select_first_message(self) -> None:
        items = self._cursor_items()
        if items:
            self._select_item(items[0], last=False)

    def action_select_last_message(self) -> None:
        items = self._cursor_items()
        if items:
            self._select_item(items[-1], last=True)

    def _cursor_items(self) -> list[ConversationEntry | TurnView]:
        """What the cursor steps over: the entries shown, and each compacted turn as one step."""
        items: list[ConversationEntry | TurnView] = []
        for node in self.query("*"):
            if isinstance(node, TurnView) and node.compacted:
                items.append(node)
            elif isinstance(node, ConversationEntry) and self._shown(node):
                items.append(node)
        return items

    def _move(self, step: int) -> None:
        items = self._cursor_items()
        if not items:
            return
        current = self._selected
        if current is None or current not in items:
            # The first press picks a message in view: the lowest one going up, the highest going down.
            in_view = [item for item in items if self._in_view(item)] or items
            self._select_item(in_view[-1] if step < 0 else in_view[0], last=step < 0)
            return
        index = items.index(current) + step
        if index < 0 and self.has_earlier:
            self.load_earlier()  # up past the first message: the turns before it
        self._select_item(items[max(0, min(index, len(items) - 1))], last=step < 0)

    def _select_item(self, item: ConversationEntry | TurnView, *, last: bool) -> None:
        """Select an entry; for a compacted turn, expand it and select its first (or last) entry."""
        if not isinstance(item, TurnView):
            self.select_message(item)
            return
        item.uncompact()

        def select_in_turn() -> None:  # once the rebuilt children are styled (folded drafts hidden)
            inside = [
                entry for entry in self.entries() if isinstance(entry, Widget) and item in entry.ancestors
            ]
            if inside:
                self.select_message(inside[-1] if last else inside[0])

        self.call_after_refresh(select_in_turn)

    def _shown(self, entry: ConversationEntry) -> bool:
        node: Any = entry
        while isinstance(node, Widget) and node is not self:
            if not node.is_attached or not node.display or node.has_class("-dropped"):
                return False
            node = node.parent
        return node is self

    def _in_view(self, item: ConversationEntry | TurnView) -> bool:
        return isinstance(item, Widget) and item.region.overlaps(self.scrollable_content_region)

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

    def begin_turn(
        self, prompt: str, strategy: str, *, images: list[tuple[str, int]] | None = None
    ) -> TurnView:
        """Show the user's prompt (with chips of its images); the turn's events will follow.

        `images` are `(name, bytes)` of a stored turn's images; None: the images the prompt
        mentions now.
        """
        if images is None and "@" in prompt:
            from tui_assist.session.mentions import image_chips

            session = getattr(self.app, "session", None)
            workdir = getattr(getattr(session, "settings", None), "workdir", None)
            images = image_chips(prompt, workdir) if isinstance(workdir, Path) else None
        view = TurnView(prompt, strategy, images=images)
        self._current = view
        self._mount_child(view)
        # A prompt sent brings the view back to the end, following the answer again even after
        # the user (or /help) scrolled up and so released the anchor.
        self.scroll_end(animate=False)
        # Mounted explicitly (not composed) so it comes before anything the turn mounts.
        view.start()
        return view

    def apply(self, event: TurnEvent) -> None:
        """Route an event to its turn."""
        view = self._current
        if isinstance(event, NodeStarted) and event.parent_id is None:
            if view is None or view.turn_id is not None:
                return
            view.apply(event)
            return
        if view is not None and view.turn_id is not None:
            view.apply(event)

    def _mount_child(self, widget: Any) -> None:
        self.mount(widget)
        turns = [c for c in self.children if isinstance(c, TurnView | Notice)]
        excess = len(turns) - (MAX_TURN_VIEWS if self._pages is not None else MAX_UNSTORED_TURN_VIEWS)
        if excess > 0:
            for old in turns[:excess]:
                old.remove()
            kept = next((t for t in turns[excess:] if isinstance(t, TurnView) and (t.seq or t.turn_id)), None)
            if kept is not None and self._pages is not None:
                # The removed ones are read again from the store when the user scrolls up.
                self._oldest = kept.seq or kept.turn_id
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

    def clear_all(self) -> None:
        self._current = None
        self._selected = None
        self.offer_earlier(None, None)
        self.anchor(False)
        self.remove_children()
