"""Compacted turns: a finished turn that draws itself from captured lines, with its children hidden.

A layout arranges every displayed widget of the screen, and a streaming answer that grows taller
asks for one several times a second: with a hundred turns of eight or so widgets each in the pane,
arranging them cost more than streaming the answer. So a finished turn a few turns back is
*compacted*: it draws itself from lines captured from its children (the look is the same) and its
children are hidden, so a layout arranges one widget for it instead of a dozen. The children stay
mounted, with everything the cursor and the copy key need; selecting one of them, the mouse
entering the turn, or a theme or width change expands the turn again (it is compacted again when
the next turn starts).

`CompactableTurn` is the machinery; the conversation pane decides which turns to compact, and
`TurnView` turns a click on a compacted turn into a click on what was drawn there.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

COMPACT_MAX_LINES = 300
"""Taller turns are not compacted: their captured lines would cost more memory (and garbage
collection time) than the few widgets they save cost in layout."""


class CompactableTurn(Vertical):
    """A turn's container that can be compacted once finished, and expanded again."""

    DEFAULT_CSS = """
    CompactableTurn.-compact > * {
        display: none;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._lines: list[list[Segment]] | None = None
        """While compacted: the turn as its children drew it."""
        self._placements: dict[Widget, Region] = {}
        """While compacted: where each shown descendant was, relative to the turn."""
        self._compacted_as: tuple[int, str] = (0, "")
        """The width and theme the lines were captured at."""

    @property
    def running(self) -> bool:
        """Whether the turn may still change (a running turn is never compacted)."""
        return False

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
