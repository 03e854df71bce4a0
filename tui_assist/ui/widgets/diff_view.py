"""A file write as a coloured unified diff with line numbers, folded past a screenful.

The diff comes from the editor tool's own before and after (`FileDiff`), never from reading
the file again, so it shows exactly what that call changed.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from textual.content import Content
from textual.widgets import Static

from tui_assist.core.events import FileDiff

FOLD_LINES = 20
"""A diff longer than this shows its first lines and a line to unfold the rest."""


class DiffRow(NamedTuple):
    """One line of a unified diff: `sign` is " ", "+", "-" or "@" (a hunk header)."""

    sign: str
    old: int | None
    new: int | None
    text: str


def diff_rows(diff: FileDiff, *, context: int = 3) -> list[DiffRow]:
    """The hunks of a write, line by line, with old and new line numbers."""
    before = (diff.old_text or "").splitlines()
    after = diff.new_text.splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    rows: list[DiffRow] = []
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        rows.append(
            DiffRow(
                "@",
                None,
                None,
                f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@",
            )
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [DiffRow(" ", i1 + k + 1, j1 + k + 1, before[i1 + k]) for k in range(i2 - i1)]
                continue
            rows += [DiffRow("-", i1 + k + 1, None, before[i1 + k]) for k in range(i2 - i1)]
            rows += [DiffRow("+", None, j1 + k + 1, after[j1 + k]) for k in range(j2 - j1)]
    return rows


_STYLES = {"+": "$text-success on $success 15%", "-": "$text-error on $error 15%", "@": "$secondary", " ": ""}


class DiffView(Static):
    """A write's diff; past `FOLD_LINES` lines it folds, and a click (or enter on its call) unfolds it."""

    DEFAULT_CSS = """
    DiffView {
        padding: 0 0 0 2;
        height: auto;
    }
    """

    def __init__(self, diff: FileDiff) -> None:
        super().__init__("")
        self.diff = diff
        self.rows = diff_rows(diff)
        self.folded = len(self.rows) > FOLD_LINES
        self._draw()

    def _draw(self) -> None:
        rows = self.rows[:FOLD_LINES] if self.folded else self.rows
        width = len(str(max((r.old or 0) for r in self.rows) if self.rows else 0))
        width = max(width, len(str(max(((r.new or 0) for r in self.rows), default=0))), 1)
        lines: list[Content] = []
        for row in rows:
            if row.sign == "@":
                lines.append(Content.styled(row.text, _STYLES["@"]))
                continue
            old = str(row.old) if row.old is not None else ""
            new = str(row.new) if row.new is not None else ""
            gutter = Content.styled(f"{old:>{width}} {new:>{width}} ", "dim")
            body = Content.styled(f"{row.sign} {row.text}", _STYLES[row.sign])
            lines.append(Content.assemble(gutter, body))
        if not self.rows:
            lines.append(Content.styled("(no change)", "dim"))
        if self.folded:
            hidden = len(self.rows) - FOLD_LINES
            lines.append(
                Content.styled(
                    f"▸ {hidden} more line{'s' if hidden != 1 else ''} (click to show)", "dim italic"
                )
            )
        self.update(Content("\n").join(lines))

    def toggle(self) -> None:
        """Fold or unfold a long diff."""
        if len(self.rows) > FOLD_LINES:
            self.folded = not self.folded
            self._draw()

    def on_click(self) -> None:
        self.toggle()
