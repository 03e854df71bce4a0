"""The round review: why one refine round passed or was sent back, readable at 80 columns.

Built from the round's events (a `NodeLog`), in reading order:

- what the generator saw, as headed Markdown: the request and, from round 2 on, the previous
  answer and the critic's feedback on it. It is put together from the turn and the previous
  round, not parsed out of the prompt text, so no template tags show;
- the generator's work in order: what it wrote, and each tool call as a collapsible with its
  input and full output, numbered as the critic saw the evidence (`[1]`, `[2]`, ...). A call the
  critic cites (by number, or by quoting its command) is marked, open, and shows the critic's
  sentences about it;
- the answer, and what changed since the previous round's answer (a diff);
- the critic's verdict and feedback, with its citations as links to the calls.

Left/right (or p/n) step between the rounds of the same turn. `c` switches to the changes view:
the turn's changes by hunk, from its checkpoints, each beside the shown round's critic remarks on
it (`ui.widgets.hunk_review`); `enter` there reverts the rejected hunks and closes the review with
their reasons, which the host offers as the next prompt.

What the round holds (its calls, the critic's citations, the answer's diff) is read in
`round_reading.py`; this module shows it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Collapsible, Footer, Static
from textual.widgets.collapsible import CollapsibleTitle
from textual.worker import get_current_worker

from tui_assist.core.events import ThinkingDelta, ToolCallFinished, ToolCallStarted, VerdictReached
from tui_assist.core.text import clip, duration
from tui_assist.core.tree import NodeLog, NodeRecord, TextSegment
from tui_assist.session.checkpoints import CheckpointError
from tui_assist.session.checkpoints.hunks import Hunk, TurnChanges, find_remarks, reasons_prompt
from tui_assist.ui.screens.round_reading import CITATION, ReviewedCall, answer_diff, cite
from tui_assist.ui.widgets.diff_view import DiffView
from tui_assist.ui.widgets.hunk_review import ChangesView, edit_remarks, edited_paths
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown

if TYPE_CHECKING:
    from tui_assist.session.history import History

# --------------------------------------------------------------------------- widgets


class ReviewSection(Vertical):
    """A titled part of the review."""

    DEFAULT_CSS = """
    ReviewSection {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 0 0 1;
        border-left: tall $primary 50%;
    }
    ReviewSection.-pass { border-left: tall $success; }
    ReviewSection.-revise { border-left: tall $warning; }
    ReviewSection.-diff { border-left: tall $secondary 60%; }
    ReviewSection > .review-section--title {
        text-style: bold;
        color: $primary;
    }
    ReviewSection > .review-section--wrote {
        color: $foreground 80%;
    }
    ReviewSection > .review-section--cites {
        margin: 1 0 0 0;
    }
    """


def _section(title: str | Content, *body: Widget, classes: str = "") -> ReviewSection:
    return ReviewSection(Static(title, classes="review-section--title"), *body, classes=classes)


class ToolCallReview(Collapsible):
    """One tool call: the title says what ran; opened, its input and full output."""

    DEFAULT_CSS = """
    ToolCallReview {
        background: $surface;
        border-top: none;
        padding: 0;
        margin: 0 0 0 0;
    }
    ToolCallReview > Contents {
        padding: 0 0 1 2;
    }
    ToolCallReview.-cited > CollapsibleTitle {
        color: $warning;
    }
    ToolCallReview.-error > CollapsibleTitle {
        color: $error;
    }
    ToolCallReview .tool-call--note {
        color: $warning;
        border-left: outer $warning;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    ToolCallReview .tool-call--label {
        color: $foreground 55%;
    }
    """

    def __init__(self, call: ReviewedCall, *, cited: bool, verdict_class: str) -> None:
        self.call = call
        number = f"[{call.number}]" if call.number is not None else "[-]"
        took = f" · {duration(call.seconds)}" if call.seconds is not None else ""
        status = " · error" if call.is_error else "" if call.status == "done" else f" · {call.status}"
        mark = " · cited" if cited else ""
        indent = "  " * call.depth
        verb, _, rest = call.summary.partition(" ")
        title = (
            f"{indent}{escape(number)} [b]{escape(verb)}[/b] {escape(clip(rest, 60))}"
            f"[dim]{escape(took)}{escape(status)}[/dim]{escape(mark)}"
        )
        body: list[Widget] = []
        if call.notes:
            body.append(Static(Content("\n").join(Content(n) for n in call.notes), classes="tool-call--note"))
        if call.diff is not None:  # an edit reads as what it changed, not as its JSON input
            body += [Static("diff", classes="tool-call--label"), DiffView(call.diff)]
        else:
            body += [Static("input", classes="tool-call--label"), Static(Content(_pretty_input(call.input)))]
        body += [
            Static("output", classes="tool-call--label"),
            Static(Content(call.output or "(no output)")),
        ]
        classes = " ".join(c for c in ("-cited" if cited else "", "-error" if call.is_error else "") if c)
        super().__init__(
            *body,
            title=title,
            collapsed=not (cited or call.is_error),
            id=f"call-{call.number}" if call.number is not None else None,
            classes=f"{classes} {verdict_class}".strip(),
        )


def _pretty_input(data: dict[str, Any]) -> str:
    """A tool input for reading: a shell command as is, anything else as indented JSON."""
    if set(data) <= {"command", "restart"} and isinstance(data.get("command"), str):
        return str(data["command"])
    return json.dumps(data, indent=2, ensure_ascii=False)


class RoundReviewScreen(Screen[str | None]):
    """Why a round passed or was sent back; dismissed with the next prompt after a revert."""

    DEFAULT_CSS = """
    RoundReviewScreen > #review-header {
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    RoundReviewScreen > #review-body {
        padding: 0 1;
    }
    RoundReviewScreen .review-thinking {
        color: $foreground 55%;
        text-style: italic;
    }
    """
    BINDINGS = [
        Binding("left,p,[", "step_round(-1)", "Previous round", id="previous-round"),
        Binding("right,n,]", "step_round(1)", "Next round", id="next-round"),
        Binding("e", "toggle_calls", "Open/close calls", id="toggle-calls"),
        Binding("c", "toggle_changes", "Changes", id="toggle-changes"),
        Binding("escape,q", "close_review", "Close", id="close-review"),
    ]

    def __init__(self, log: NodeLog, round_id: str, history: History | None = None) -> None:
        super().__init__()
        self.node_log = log
        self.round_id = round_id
        self.history = history
        """Where the turn's changes are read and reverted (None: no store, no changes view)."""
        self._changes: TurnChanges | None = None
        self._changes_problem: str | None = None
        self._changes_loaded = False

    @property
    def rounds(self) -> list[NodeRecord]:
        record = self.node_log.nodes.get(self.round_id)
        if record is None or record.parent_id is None:
            return []
        return self.node_log.rounds(record.parent_id)

    def compose(self) -> ComposeResult:
        yield Static(id="review-header")
        yield VerticalScroll(id="review-body")
        changes = ChangesView(id="review-changes")
        changes.display = False
        yield changes
        yield Footer()

    async def on_mount(self) -> None:
        await self._show()

    async def _show(self) -> None:
        rounds = self.rounds
        record = self.node_log.nodes.get(self.round_id)
        if record is None:
            return
        index = next((i for i, r in enumerate(rounds) if r.node_id == self.round_id), 0)
        verdict = record.verdict.upper() if record.verdict else record.status
        self.query_one("#review-header", Static).update(
            Content.assemble(
                (f"Round {index + 1} of {len(rounds)}", "$primary bold"),
                ("  ·  ", "$foreground 55%"),
                (verdict, "$success bold" if record.verdict == "pass" else "$warning bold"),
                ("   ←/→ rounds · e opens calls · c changes · esc closes", "$foreground 55%"),
            )
        )
        body = self.query_one("#review-body", VerticalScroll)
        await body.remove_children()
        previous = rounds[index - 1] if index > 0 else None
        await body.mount_all(self._sections(record, previous))
        body.scroll_home(animate=False)
        if self.query_one(ChangesView).display:
            self._redraw_changes()

    # -- building the sections -----------------------------------------------------------------

    def _sections(self, round_record: NodeRecord, previous: NodeRecord | None) -> list[Widget]:
        generator = self._generator(round_record)
        sections: list[Widget] = [
            _section(
                "What the generator saw", StreamingMarkdown(self._seen(round_record, previous), finished=True)
            )
        ]
        feedback, verdict = self._verdict(round_record)
        calls = self._calls(round_record)
        cited = cite(list(calls.values()), feedback)
        verdict_class = f"-{verdict}" if verdict else ""
        work = self._work(round_record, generator, calls, cited, verdict_class)
        if work:
            sections.append(_section("The generator's work", *work))
        answer = self._answer(generator)
        if answer:
            title = f"Answer (round {round_record.round_index})" if round_record.round_index else "Answer"
            sections.append(_section(title, StreamingMarkdown(answer, finished=True)))
        if previous is not None and answer:
            sections.append(self._diff_section(self._answer(self._generator(previous)), answer, previous))
        checks = self._checks(round_record)
        if checks:
            sections.append(_section("Checks the critic ran", *checks))
        if verdict is not None:
            sections.append(self._verdict_section(verdict, feedback, calls, cited))
        elif round_record.status != "done":
            sections.append(_section(f"Round {round_record.status}", Static(round_record.error or "")))
        return sections

    def _generator(self, round_record: NodeRecord) -> NodeRecord | None:
        return next((c for c in round_record.children if c.kind == "generate"), None)

    def _seen(self, round_record: NodeRecord, previous: NodeRecord | None) -> str:
        """What the generator was given, as headed Markdown."""
        turn = self.node_log.nodes.get(round_record.parent_id or "")
        generator = self._generator(round_record)
        prompt = turn.detail if turn is not None and turn.detail else None
        if prompt is None:  # a round outside a refine turn: what the node says it was given
            prompt = generator.detail if generator is not None else round_record.detail
        parts = ["### The request", "", prompt.strip() or "(empty)"]
        if previous is not None:
            number = previous.round_index or 1
            answer = self._answer(self._generator(previous)) or previous.output or "(no answer)"
            feedback = previous.feedback or "(no feedback)"
            cited = f"Its [n] are round {number}'s tool calls. " if CITATION.search(feedback) else ""
            parts += [
                "",
                f"### Its answer in round {number}",
                "",
                answer.strip(),
                "",
                f"### The critic's feedback on round {number}",
                "",
                feedback.strip(),
                "",
                f"*{cited}Asked to do the task again in a fresh shell and address the feedback.*",
            ]
        return "\n".join(parts)

    def _verdict(self, round_record: NodeRecord) -> tuple[str, str | None]:
        for item in self.node_log.subtree_timeline(round_record.node_id):
            if isinstance(item, VerdictReached):
                return item.feedback, item.verdict
        return round_record.feedback, round_record.verdict

    def _calls(self, round_record: NodeRecord) -> dict[str, ReviewedCall]:
        """The round's tool calls in start order, numbered in finishing order (as the evidence)."""
        log = self.node_log
        base = log.depth(round_record.node_id) + 2  # round -> generate -> tool
        calls: dict[str, ReviewedCall] = {}
        finished = 0
        for item in log.subtree_timeline(round_record.node_id):
            match item:
                case ToolCallStarted(node_id=node_id) if self._by_critic(node_id):
                    pass  # a goal's check: not the generator's evidence (`_checks` shows it)
                case ToolCallStarted(node_id=node_id, name=name, input=tool_input):
                    depth = max(0, (log.depth(node_id) - base) // 2)
                    calls[node_id] = ReviewedCall(node_id, name, dict(tool_input), depth)
                case ToolCallFinished(node_id=node_id):
                    call = calls.get(node_id)
                    if call is None:
                        continue
                    finished += 1
                    call.number, call.output, call.is_error = finished, item.output, item.is_error
                    call.seconds, call.status, call.diff = item.duration, "done", item.diff
                case _:
                    pass
        for call in calls.values():
            if call.number is None:
                record = log.nodes.get(call.node_id)
                call.status = record.status if record is not None else "unknown"
        return calls

    def _by_critic(self, node_id: str) -> bool:
        """Whether a call ran under a critic (a goal's check), not under the generator."""
        return any(a.kind == "critic" for a in self.node_log.ancestors(node_id))

    def _checks(self, round_record: NodeRecord) -> list[Widget]:
        """A goal's checks, as the critic ran them after the attempt."""
        widgets: list[Widget] = []
        for started, record in self.node_log.tool_calls(round_record.node_id):
            if self._by_critic(started.node_id):
                call = ReviewedCall(
                    started.node_id, started.name, dict(started.input), 0, output=record.output
                )
                call.status, call.is_error, call.seconds = (
                    record.status,
                    record.status == "failed",
                    record.duration,
                )
                widgets.append(ToolCallReview(call, cited=False, verdict_class=""))
        return widgets

    def _answer(self, generator: NodeRecord | None) -> str:
        if generator is None:
            return ""
        if generator.output:
            return generator.output
        segment = _last_text(generator)
        return segment.text if segment is not None else ""

    def _work(
        self,
        round_record: NodeRecord,
        generator: NodeRecord | None,
        calls: dict[str, ReviewedCall],
        cited: set[int],
        verdict_class: str,
    ) -> list[Widget]:
        """What the generator wrote and ran, in order (its final answer is shown apart)."""
        log = self.node_log
        answer_segment = _last_text(generator) if generator is not None else None
        widgets: list[Widget] = []
        thought: list[str] = []  # the thinking deltas of a run, shown as one folded block

        def flush_thinking() -> None:
            text = "".join(thought).strip()
            thought.clear()
            if text:
                words = len(text.split())
                body = Static(Content(text), classes="review-thinking")
                widgets.append(Collapsible(body, title=f"thinking ({words} words)", collapsed=True))

        for item in log.subtree_timeline(round_record.node_id):
            record = log.nodes.get(item.node_id)
            if record is None:
                continue
            if isinstance(item, ThinkingDelta):
                if record.kind in ("generate", "agent"):
                    thought.append(item.text)
                continue
            flush_thinking()
            match item:
                case TextSegment(text=text) if text.strip() and record.kind in ("generate", "agent"):
                    if item is answer_segment:
                        continue
                    who = "" if record.kind == "generate" else f"*sub-agent “{record.label}”:* "
                    widgets.append(StreamingMarkdown(who + text.strip(), finished=True))
                case ToolCallStarted(node_id=node_id) if node_id in calls:
                    call = calls[node_id]
                    is_cited = call.number is not None and call.number in cited
                    widgets.append(ToolCallReview(call, cited=is_cited, verdict_class=verdict_class))
                case _:
                    pass
        flush_thinking()
        if not any(isinstance(w, ToolCallReview) for w in widgets):
            widgets.append(Static("No tool calls in this round.", classes="review-section--wrote"))
        return widgets

    def _diff_section(self, old: str, new: str, previous: NodeRecord) -> ReviewSection:
        number = previous.round_index or 1
        if old.strip() == new.strip():
            return _section(
                f"Changes since round {number}", Static("The answer is the same."), classes="-diff"
            )
        diff, removed, added = answer_diff(old, new)
        title = Content.assemble(
            (f"Changes since round {number}", "bold $primary"),
            ("  ", ""),
            (f"−{removed}", "$text-error"),
            (" ", ""),
            (f"+{added}", "$text-success"),
            (" lines", "$foreground 55%"),
        )
        return _section(title, Static(diff), classes="-diff")

    def _verdict_section(
        self, verdict: str, feedback: str, calls: dict[str, ReviewedCall], cited: set[int]
    ) -> ReviewSection:
        title = Content.assemble(
            ("Critic: ", "bold $primary"),
            (verdict.upper(), "$success bold" if verdict == "pass" else "$warning bold"),
        )
        body: list[Widget] = [StreamingMarkdown(feedback or "(no feedback)", finished=True)]
        by_number = {c.number: c for c in calls.values() if c.number is not None}
        links = [
            f"[@click=screen.show_call({n})]{escape(f'[{n}]')} {escape(by_number[n].name)} "
            f"{escape(clip(by_number[n].summary, 40))}[/]"
            for n in sorted(cited)
            if n in by_number
        ]
        if links:
            body.append(Static("Cites: " + "  ·  ".join(links), classes="review-section--cites"))
        return _section(title, *body, classes=f"-{verdict}")

    # -- actions -------------------------------------------------------------------------------

    def action_show_call(self, number: int) -> None:
        """Open call `[number]` and scroll it to the top."""
        try:
            call = self.query_one(f"#call-{number}", ToolCallReview)
        except Exception:
            self.notify(f"no tool call [{number}] in this round", timeout=2)
            return
        call.collapsed = False
        body = self.query_one("#review-body", VerticalScroll)
        # After the opened call is laid out, or the scroll would aim at its closed height.
        self.call_after_refresh(body.scroll_to_widget, call, top=True, animate=False)
        call.query_one(CollapsibleTitle).focus(scroll_visible=False)

    def action_toggle_calls(self) -> None:
        calls = list(self.query(ToolCallReview))
        open_all = any(c.collapsed for c in calls)
        for call in calls:
            call.collapsed = not open_all

    async def action_step_round(self, step: int) -> None:
        rounds = self.rounds
        index = next((i for i, r in enumerate(rounds) if r.node_id == self.round_id), None)
        if index is None:
            return
        target = index + step
        if 0 <= target < len(rounds):
            self.round_id = rounds[target].node_id
            await self._show()
        else:
            self.notify("no more rounds that way", timeout=1.5)

    def action_close_review(self) -> None:
        self.dismiss(None)

    # -- the changes view ------------------------------------------------------------------------

    def action_toggle_changes(self) -> None:
        view, body = self.query_one(ChangesView), self.query_one("#review-body", VerticalScroll)
        view.display, body.display = not view.display, view.display
        if view.display:
            self._redraw_changes()
        else:
            body.focus()

    def _redraw_changes(self) -> None:
        """In a worker: reading a big turn's changes must not hold up the screen."""
        self.run_worker(self._show_changes(), exclusive=True, group="hunk-changes")

    async def _show_changes(self) -> None:
        view = self.query_one(ChangesView)
        if not self._changes_loaded:
            await view.show(None, [], "Reading the turn's changes from its checkpoints…")
            self._changes, self._changes_problem = await self._load_changes()
            self._changes_loaded = True
        record = self.node_log.nodes.get(self.round_id)
        feedback = self._verdict(record)[0] if record is not None else ""
        changes, turn_id = self._changes, self.node_log.turn_id_of(self.round_id)
        if changes is None or turn_id is None or record is None:
            await view.show(None, [], self._changes_problem)
            return
        calls = list(self._calls(record).values())
        cite(calls, feedback)  # a sentence citing an edit by number (`[2]`) is about what it wrote
        by_number = [([n for n in c.notes if f"[{c.number}]" in n], c.diff) for c in calls if c.diff]
        remarks = find_remarks(feedback, [f.path for f in changes.files]) + edit_remarks(by_number, changes)
        edited = edited_paths(self.node_log, turn_id, changes.workdir)
        await view.show(changes, remarks, self._changes_problem, edited)

    async def _load_changes(self) -> tuple[TurnChanges | None, str | None]:
        turn_id = self.node_log.turn_id_of(self.round_id)
        if self.history is None or turn_id is None:
            return None, "No store: the turn's changes are not recorded."
        try:
            return await self.history.turn_hunks(turn_id), None
        except CheckpointError as exc:
            return None, f"Cannot read the turn's changes: {exc}"

    def on_changes_view_revert_asked(self, event: ChangesView.RevertAsked) -> None:
        self.run_worker(self._revert(event.rejected), exclusive=True, group="hunk-revert")

    async def _revert(self, rejected: list[tuple[Hunk, str]]) -> None:
        if self.history is None or self._changes is None:
            return
        try:
            done = await self.history.revert_hunks(self._changes, {hunk.key for hunk, _ in rejected})
        except CheckpointError as exc:
            self.notify(f"Revert failed: {exc}", severity="error")
            return
        if get_current_worker().is_cancelled:
            return
        reverted = set(done.reverted)
        if done.conflicts:
            names = ", ".join(done.conflicts)
            self.notify(f"Left alone, changed since the turn: {names}", severity="warning", timeout=6)
        kept = [(hunk, reason) for hunk, reason in rejected if hunk.key in reverted]
        if not kept:
            return
        self.notify(f"Reverted {len(kept)} hunk(s).", timeout=3)
        self.dismiss(reasons_prompt(kept))


def _last_text(generator: NodeRecord) -> TextSegment | None:
    """The generator's last text that is not blank: its answer when the node has no output."""
    return next((s for s in reversed(generator.segments) if s.text.strip()), None)
