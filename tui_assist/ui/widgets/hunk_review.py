"""The round review's changes view: the turn's changes by hunk, each beside the critic's remarks on it.

Every hunk starts accepted. `space` rejects it (or accepts it again), `r` types why (and rejects
it), `enter` asks the screen to revert every rejected hunk on disk (`ChangesView.RevertAsked`);
up and down step between hunks. The decisions outlive a redraw (another round's remarks).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Static

from tui_assist.core.events import FileDiff, ToolCallFinished
from tui_assist.core.tree import NodeLog
from tui_assist.session.checkpoints.hunks import (
    FileHunks,
    Hunk,
    HunkKey,
    Remark,
    TurnChanges,
    remarks_from_edit,
    remarks_on,
)

_STYLES = {"+": "$text-success on $success 15%", "-": "$text-error on $error 15%", " ": ""}


@dataclass(slots=True)
class Decision:
    """What the user said about one hunk."""

    rejected: bool = False
    reason: str = ""
    reverted: bool = False
    """Already reverted on disk (an earlier review): nothing left to decide."""


def _relative(path: str, workdir: str) -> str | None:
    full, root = Path(path).resolve(), Path(workdir)  # the workdir is resolved: so is the path
    return full.relative_to(root).as_posix() if full.is_relative_to(root) else None


def edited_paths(log: NodeLog, turn_id: str, workdir: str) -> set[str]:
    """The files the turn's editor calls wrote, relative to `workdir` (the rest came from commands)."""
    found = {
        _relative(item.diff.path, workdir)
        for item in log.subtree_timeline(turn_id)
        if isinstance(item, ToolCallFinished) and item.diff is not None
    }
    return {p for p in found if p is not None}


def edit_remarks(cited: list[tuple[list[str], FileDiff]], changes: TurnChanges) -> list[Remark]:
    """The critic's sentences citing editor calls (`[2]`), as remarks on the files they wrote."""
    files = {f.path: f for f in changes.files}
    found: list[Remark] = []
    for sentences, diff in cited:
        file = files.get(_relative(diff.path, changes.workdir) or "")
        if file is not None and sentences:
            found += remarks_from_edit(sentences, file, diff.old_text, diff.new_text)
    return found


def hunk_lines(hunk: Hunk) -> Content:
    """A hunk's lines, numbered in the old and the new text."""
    if not hunk.lines:
        return Content.styled("binary or too large to diff: reverts whole", "dim italic")
    old, new = hunk.old_start or 1, hunk.new_start or 1
    width = len(str(max(old + hunk.old_count, new + hunk.new_count)))
    rows: list[Content] = []
    for line in hunk.lines:
        sign, text = line[:1], line[1:]
        left = f"{old:>{width}}" if sign != "+" else " " * width
        right = f"{new:>{width}}" if sign != "-" else " " * width
        old += sign != "+"
        new += sign != "-"
        rows.append(Content.assemble((f"{left} {right} ", "dim"), (f"{sign} {text}", _STYLES.get(sign, ""))))
    return Content("\n").join(rows)


class HunkCard(Vertical, can_focus=True):
    """One hunk: its state and place, its lines, and beside them the critic's remarks on it."""

    DEFAULT_CSS = """
    HunkCard {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 0 0 1;
        border-left: tall $success 40%;
    }
    HunkCard.-rejected { border-left: tall $error; }
    HunkCard:focus { background: $boost; border-left: tall $accent; }
    HunkCard.-rejected:focus { border-left: tall $error; }
    HunkCard.-reverted { border-left: tall $foreground 30%; color: $foreground 50%; }
    HunkCard.-reverted > .hunk--title { color: $foreground 60%; }
    HunkCard > .hunk--title { color: $text-success; }
    HunkCard.-rejected > .hunk--title { color: $text-error; text-style: bold; }
    HunkCard > Horizontal { height: auto; }
    HunkCard .hunk--lines { width: 1fr; height: auto; }
    HunkCard .hunk--remark {
        width: 40%;
        height: auto;
        color: $warning;
        border-left: outer $warning;
        padding: 0 1;
        margin: 0 0 0 1;
    }
    HunkCard > .hunk--reason { color: $text-error; text-style: italic; }
    """
    BINDINGS = [
        Binding("space", "flip", "Accept/reject", id="hunk-toggle"),
        Binding("r", "reason", "Reason", id="hunk-reason"),
        Binding("down,j", "step(1)", "Next hunk", show=False),
        Binding("up,k", "step(-1)", "Previous hunk", show=False),
    ]

    def __init__(self, hunk: Hunk, remarks: list[str], decision: Decision) -> None:
        super().__init__()
        self.hunk = hunk
        self.remarks = remarks
        self.decision = decision

    def compose(self) -> ComposeResult:
        yield Static(classes="hunk--title")
        with Horizontal():
            yield Static(hunk_lines(self.hunk), classes="hunk--lines")
            if self.remarks:
                yield Static(Content("\n").join(Content(r) for r in self.remarks), classes="hunk--remark")
        yield Static(classes="hunk--reason")

    def on_mount(self) -> None:
        self.show_decision()

    def show_decision(self) -> None:
        """Draw the hunk's state and reason as `decision` holds them."""
        rejected, reason = self.decision.rejected, self.decision.reason
        self.set_class(rejected, "-rejected")
        self.set_class(self.decision.reverted, "-reverted")
        state = "↺ reverted" if self.decision.reverted else "✗ revert" if rejected else "✓ keep"
        where = self.hunk.header if self.hunk.lines else "whole file"
        self.query_one(".hunk--title", Static).update(f"{state}  {self.hunk.path}  {where}")
        line = self.query_one(".hunk--reason", Static)
        line.update(f"why: {reason}" if rejected and reason else "")
        line.display = bool(rejected and reason)

    def _settled(self) -> bool:
        if self.decision.reverted:
            self.notify("This hunk is already reverted on disk.", timeout=2)
        return self.decision.reverted

    def action_flip(self) -> None:
        if self._settled():
            return
        self.decision.rejected = not self.decision.rejected
        self.show_decision()

    def action_reason(self) -> None:
        if self._settled():
            return

        def typed(reason: str | None) -> None:
            if reason is not None:
                self.decision.reason = reason.strip()
                self.decision.rejected = True
                self.show_decision()

        self.app.push_screen(ReasonScreen(self.hunk, self.decision.reason), typed)

    def action_step(self, step: int) -> None:
        cards = list(self.screen.query(HunkCard))
        index = cards.index(self) + step
        if 0 <= index < len(cards):
            cards[index].focus()


class ReasonScreen(ModalScreen[str | None]):
    """One line: why the hunk is rejected (enter keeps it, escape drops it)."""

    DEFAULT_CSS = """
    ReasonScreen { align: center middle; }
    ReasonScreen > Vertical {
        width: 70;
        max-width: 90%;
        height: auto;
        border: round $error;
        background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, hunk: Hunk, reason: str) -> None:
        super().__init__()
        self.hunk = hunk
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Why revert {self.hunk.path}, {self.hunk.where}?")
            yield Input(self.reason, placeholder="the reason, for the next prompt", id="hunk-reason-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChangesView(VerticalScroll):
    """The turn's changed files, by hunk."""

    DEFAULT_CSS = """
    ChangesView { padding: 0 1; }
    ChangesView > .changes--summary { color: $foreground 70%; margin: 1 0; }
    ChangesView > .changes--file { text-style: bold; color: $primary; }
    ChangesView > .changes--file-remark {
        color: $warning;
        border-left: outer $warning;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    """
    BINDINGS = [Binding("enter", "revert", "Revert rejected", id="hunks-revert")]

    class RevertAsked(Message):
        """Enter: revert these hunks on disk (each with its reason)."""

        def __init__(self, rejected: list[tuple[Hunk, str]]) -> None:
            super().__init__()
            self.rejected = rejected

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.decisions: dict[HunkKey, Decision] = {}

    async def show(
        self,
        changes: TurnChanges | None,
        remarks: list[Remark],
        problem: str | None = None,
        edited: set[str] | None = None,
    ) -> None:
        """Draw the changes with these remarks (the decisions made so far are kept).

        Args:
            changes: The turn's changes; None when there are none to show.
            remarks: The critic's remarks on the changed files.
            problem: Why there are no changes to show, when that is known.
            edited: The files the editor wrote; None when unknown.
        """
        await self.remove_children()
        if changes is None or not changes.files:
            why = problem or "This turn changed no file (or its snapshots are not recorded)."
            await self.mount(Static(why, classes="changes--summary"))
            return
        files, hunks = len(changes.files), len(changes.hunks)
        summary = (
            f"{files} file{'s' * (files != 1)}, {hunks} hunk{'s' * (hunks != 1)}  ·  "
            "space keep/revert · r why · enter reverts the rejected"
        )
        if changes.more:
            summary += f"\n{changes.more} more changed file(s) not shown."
        widgets: list[Widget] = [Static(summary, classes="changes--summary")]
        for file in changes.files:
            widgets += self._file(file, remarks, edited, changes.reverted)
        await self.mount_all(widgets)
        first = next(iter(self.query(HunkCard)), None)
        if first is not None:
            first.focus()

    def _file(
        self, file: FileHunks, remarks: list[Remark], edited: set[str] | None, reverted: frozenset[HunkKey]
    ) -> list[Widget]:
        by = "" if edited is None else " by the editor" if file.path in edited else " by a command"
        widgets: list[Widget] = [Static(f"{file.path}  ({file.kind}{by})", classes="changes--file")]
        about = [r.sentence for r in remarks if r.path == file.path and r.lines is None]
        if about:
            widgets.append(
                Static(Content("\n").join(Content(s) for s in about), classes="changes--file-remark")
            )
        for hunk in file.hunks:
            decision = self.decisions.setdefault(hunk.key, Decision(reverted=hunk.key in reverted))
            widgets.append(HunkCard(hunk, remarks_on(hunk, remarks), decision))
        return widgets

    @property
    def rejected(self) -> list[tuple[Hunk, str]]:
        """The rejected hunks, in order, with their reasons."""
        return [(c.hunk, c.decision.reason) for c in self.query(HunkCard) if c.decision.rejected]

    def action_revert(self) -> None:
        rejected = self.rejected
        if not rejected:
            self.notify("Nothing rejected: space marks a hunk to revert.", timeout=2)
            return
        self.post_message(self.RevertAsked(rejected))
