"""The round review: one refine round's transcript, in order, built from its events.

It shows what the generator saw, every tool call and result (the evidence the critic judged),
the text the generator streamed, its answer, then the critic's verdict and feedback. Left/right
(or p/n) step between the rounds of the same turn.
"""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui_assist.core.events import ToolCallFinished, ToolCallStarted, VerdictReached
from tui_assist.core.text import duration
from tui_assist.core.tree import NodeLog, NodeRecord, TextSegment
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown

_OUTPUT_LIMIT = 8_000


def _clip(text: str) -> str:
    if len(text) <= _OUTPUT_LIMIT:
        return text
    return text[:_OUTPUT_LIMIT] + f"\n[… {len(text) - _OUTPUT_LIMIT} more characters]"


class ReviewSection(Vertical):
    """A titled part of the transcript."""

    DEFAULT_CSS = """
    ReviewSection {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: tall $primary 50%;
    }
    ReviewSection.-tool { border-left: tall $secondary 60%; }
    ReviewSection.-tool-error { border-left: tall $error; }
    ReviewSection.-pass { border-left: tall $success; }
    ReviewSection.-revise { border-left: tall $warning; }
    ReviewSection > .review-section--title {
        text-style: bold;
        color: $primary;
    }
    ReviewSection > .review-section--body {
        color: $foreground;
    }
    """


def _section(title: str | Content, *body: Static | StreamingMarkdown, classes: str = "") -> ReviewSection:
    return ReviewSection(Static(title, classes="review-section--title"), *body, classes=classes)


class RoundReviewScreen(Screen[None]):
    """Why a round passed or was sent back."""

    DEFAULT_CSS = """
    RoundReviewScreen > #review-header {
        height: 1;
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    RoundReviewScreen > #review-body {
        padding: 0 1;
    }
    """
    BINDINGS = [
        Binding("left,p,[", "step_round(-1)", "Previous round", id="previous-round"),
        Binding("right,n,]", "step_round(1)", "Next round", id="next-round"),
        Binding("escape,q", "close_review", "Close", id="close-review"),
    ]

    def __init__(self, log: NodeLog, round_id: str) -> None:
        super().__init__()
        self.node_log = log
        self.round_id = round_id

    @property
    def rounds(self) -> list[NodeRecord]:
        record = self.node_log.nodes.get(self.round_id)
        if record is None or record.parent_id is None:
            return []
        return self.node_log.rounds(record.parent_id)

    def compose(self) -> ComposeResult:
        yield Static(id="review-header")
        yield VerticalScroll(id="review-body")
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
                "  ·  ",
                (verdict, "$success bold" if record.verdict == "pass" else "$warning bold"),
                ("   ←/→ step rounds · esc closes", "$foreground 55%"),
            )
        )
        body = self.query_one("#review-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(self._sections(record))
        body.scroll_home(animate=False)

    def _sections(self, round_record: NodeRecord) -> list[ReviewSection]:
        log = self.node_log
        sections: list[ReviewSection] = []
        generator = next((c for c in round_record.children if c.kind == "generate"), None)
        seen_input = generator.detail if generator is not None else round_record.detail
        sections.append(
            _section(
                "What the generator saw", StreamingMarkdown(seen_input or "(nothing recorded)", finished=True)
            )
        )
        answer_segment = None
        if generator is not None:
            answer_segment = next((seg for seg in reversed(generator.segments) if seg.text.strip()), None)
        pending: dict[str, ToolCallStarted] = {}
        verdicts: list[ReviewSection] = []
        for item in log.subtree_timeline(round_record.node_id):
            record = log.nodes.get(item.node_id)
            if record is None:
                continue
            depth = log.depth(item.node_id) - log.depth(round_record.node_id) - 2
            match item:
                case TextSegment(text=text) if text.strip() and record.kind in ("generate", "agent"):
                    if item is answer_segment:
                        title = "answer"
                    elif record.kind == "generate":
                        title = "generator wrote"
                    else:
                        title = f"sub-agent “{record.label}” wrote"
                    sections.append(_section(title, StreamingMarkdown(text, finished=True)))
                case ToolCallStarted():
                    pending[item.node_id] = item
                case ToolCallFinished():
                    started = pending.pop(item.node_id, None)
                    sections.append(self._tool_section(item, started, depth))
                case VerdictReached():
                    label = item.verdict.upper()
                    verdicts.append(
                        _section(
                            Content.assemble(
                                "critic verdict: ",
                                (label, "$success bold" if item.verdict == "pass" else "$warning bold"),
                            ),
                            StreamingMarkdown(item.feedback or "(no feedback)", finished=True),
                            classes=f"-{item.verdict}",
                        )
                    )
                case _:
                    pass
        for started in pending.values():
            sections.append(
                _section(
                    f"tool {started.name} (no result: {log.nodes[started.node_id].status})",
                    Static(Content(json.dumps(started.input, indent=2, ensure_ascii=False))),
                    classes="-tool",
                )
            )
        if generator is not None and generator.output and answer_segment is None:
            sections.append(_section("answer", StreamingMarkdown(generator.output, finished=True)))
        sections.extend(verdicts)
        if round_record.status != "done" and not round_record.verdict:
            sections.append(_section(f"round {round_record.status}", Static(round_record.error or "")))
        return sections

    def _tool_section(
        self, finished: ToolCallFinished, started: ToolCallStarted | None, depth: int
    ) -> ReviewSection:
        tool_input = started.input if started is not None else {}
        title = Content.assemble(
            ("  " * max(0, depth)),
            (f"tool {finished.name}", "bold"),
            (f"  {duration(finished.duration)}", "$foreground 55%"),
            ("  error" if finished.is_error else "", "$error bold"),
        )
        body = Content.assemble(
            ("input ", "$foreground 55%"),
            json.dumps(tool_input, ensure_ascii=False),
            ("\nresult\n", "$foreground 55%"),
            _clip(finished.output) or "(empty)",
        )
        return _section(title, Static(body), classes="-tool-error" if finished.is_error else "-tool")

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
