"""One exchange in the conversation pane: the prompt, then everything its turn showed.

A turn view draws what the events say and folds nothing itself: it reads the `NodeLog` it is
given (the screen's, which the screen folds each event into before the view sees it), as the
agent tree and the flow panel do. Only the main generator's output is shown (the turn's agent,
or each refine round's generator); sub-agents and critics live in the agent tree, with one
verdict line per round.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget

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
from tui_assist.ui.widgets.compaction import CompactableTurn
from tui_assist.ui.widgets.plan import tool_call_view
from tui_assist.ui.widgets.queued_prompt import JoinedPrompt
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


class TurnView(CompactableTurn):
    """One exchange: the prompt, then everything the turn showed.

    Once compacted it drops its widgets and builds them again from the turn's events as the log
    keeps them (text deltas merged; see `compaction`). They are read off the log when the turn
    ends and when it is compacted, so the view can be rebuilt after the log forgets the turn.
    """

    class EntryClicked(Message):
        """A click on a compacted turn landed on this entry, now built again."""

        def __init__(self, entry: ConversationEntry) -> None:
            super().__init__()
            self.entry = entry

    DEFAULT_CSS = """
    TurnView {
        height: auto;
    }
    """

    def __init__(
        self,
        prompt: str,
        strategy: str,
        log: NodeLog,
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
        self._log = log
        """The fold of this turn's events, read, never written, here."""
        self._main_generators: set[str] = set()
        self._kept: list[TurnEvent] = []
        """The turn's events as the log last had them (deltas merged), to build the widgets again."""
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
        if entry is not None:
            self.post_message(self.EntryClicked(entry))

    # -- events -----------------------------------------------------------------------------

    def apply(self, event: TurnEvent) -> None:
        """Show one event of this turn, which the log has already folded."""
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
            case NodeStarted(node_kind="agent" | "generate") if self._is_main_generator(event.node_id):
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

    def _is_main_generator(self, node_id: str) -> bool:
        # Asked of the log while the turn runs, and remembered for a rebuild after it forgot it.
        if node_id not in self._main_generators and self._log.is_main_generator(node_id):
            self._main_generators.add(node_id)
        return node_id in self._main_generators

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
        if not again:
            self._keep_events()
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

    def _keep_events(self) -> None:
        if self.turn_id is not None and self.turn_id in self._log.turns:
            self._kept = self._log.streamed(self.turn_id)

    def drop_children(self) -> None:
        self._keep_events()
        self._containers.clear()
        self._last_text.clear()
        self._thinking.clear()
        self._tools.clear()
        self._rounds.clear()

    def build(self) -> None:
        self.start()
        for event in self._kept:
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
