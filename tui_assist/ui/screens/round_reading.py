"""What a refine round holds, read for its review: its tool calls, the critic's citations of them,
and what changed in the answer since the previous round (`RoundReviewScreen` shows them).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from textual.content import Content

from tui_assist.core.events import FileDiff
from tui_assist.core.tool_labels import tool_title

CITATION = re.compile(r"\[(\d+)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\[(\"'])|\n+")
_DIFF_CONTEXT = 2
"""Unchanged lines shown around each change of the answer."""
_SIMILAR_LINES = 0.5
"""How alike (difflib's ratio) a removed and an added line must be for a word-level highlight."""
_MIN_QUOTED = 6
"""Shortest command or path that counts as a citation when the feedback quotes it."""


@dataclass
class ReviewedCall:
    """One tool call of the round, as the review shows it."""

    node_id: str
    name: str
    input: dict[str, Any]
    depth: int
    """Nesting below the generator (a sub-agent's calls are 1 deeper)."""
    number: int | None = None
    """Its place in the evidence the critic saw (finishing order), None if it never finished."""
    output: str = ""
    is_error: bool = False
    seconds: float | None = None
    status: str = "running"
    notes: list[str] = field(default_factory=lambda: list[str]())
    """The critic's sentences that cite this call."""
    diff: FileDiff | None = None
    """What the call wrote, for an editor write."""

    @property
    def summary(self) -> str:
        """The call as an action: `edit app.py (+1 −1)`, `bash: pytest -q`."""
        return tool_title(self.name, self.input, self.diff)

    @property
    def quotable(self) -> str:
        """Text the critic may quote to point at this call (a command or a path)."""
        return str(self.input.get("command") if self.name == "bash" else self.input.get("path") or "")


def feedback_sentences(feedback: str) -> list[str]:
    """The critic's feedback split into sentences (and lines)."""
    return [s.strip() for s in _SENTENCE_END.split(feedback) if s.strip()]


def cite(calls: list[ReviewedCall], feedback: str) -> set[int]:
    """Attach to each call the feedback's sentences that cite it; return the numbers cited.

    A sentence cites a call when it holds the call's number in brackets (`[2]`, as the critic's
    evidence was numbered) or quotes its command or path.
    """
    cited: set[int] = set()
    sentences = feedback_sentences(feedback)
    numbers = {int(n) for n in CITATION.findall(feedback)}
    for call in calls:
        if call.number is None:
            continue
        marker = f"[{call.number}]"
        quoted = call.quotable if len(call.quotable) >= _MIN_QUOTED else None
        call.notes = [s for s in sentences if marker in s or (quoted is not None and quoted in s)]
        if call.notes or call.number in numbers:
            cited.add(call.number)
    return cited


def answer_diff(old: str, new: str) -> tuple[Content, int, int]:
    """A line diff of two answers, changed words highlighted, with a little context.

    Returns:
        The diff, and how many lines were removed and added.
    """
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    parts: list[Content] = []
    removed = added = 0
    for group_index, group in enumerate(matcher.get_grouped_opcodes(_DIFF_CONTEXT)):
        if group_index:
            parts.append(Content.styled("  ⋯", "$foreground 50%"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                parts += [Content.assemble(("  ", ""), (line, "$foreground 70%")) for line in a[i1:i2]]
                continue
            old_lines, new_lines = a[i1:i2], b[j1:j2]
            removed += len(old_lines)
            added += len(new_lines)
            paired = min(len(old_lines), len(new_lines)) if tag == "replace" else 0
            for k, line in enumerate(old_lines):
                partner = new_lines[k] if k < paired else None
                parts.append(_diff_line("-", line, partner, "$text-error", "$error-muted"))
            for k, line in enumerate(new_lines):
                partner = old_lines[k] if k < paired else None
                parts.append(_diff_line("+", line, partner, "$text-success", "$success-muted"))
    return Content("\n").join(parts), removed, added


def _diff_line(sign: str, line: str, other: str | None, color: str, background: str) -> Content:
    """One removed or added line; against a similar counterpart, the words that differ stand out.

    Two lines that share little are shown whole: highlighting most of their words is noise.
    """
    if other is None:
        return Content.styled(f"{sign} {line}", color)
    mine, theirs = _words(line), _words(other)
    matcher = difflib.SequenceMatcher(None, theirs, mine, autojunk=False)
    if matcher.ratio() < _SIMILAR_LINES:
        return Content.styled(f"{sign} {line}", color)
    pieces: list[tuple[str, str]] = [(f"{sign} ", color)]
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        text = "".join(mine[j1:j2])
        if text:
            pieces.append((text, color if tag == "equal" else f"bold {color} on {background}"))
    return Content.assemble(*pieces)


def _words(line: str) -> list[str]:
    return re.findall(r"\s+|\w+|[^\w\s]", line)
