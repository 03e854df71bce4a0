"""Compacted turns: a finished turn that draws itself from captured lines, its children dropped.

A layout arranges every displayed widget of the screen, and a streaming answer that grows taller
asks for one several times a second; and each of Python's full garbage collections scans every
live object, which with a hundred turns of widgets (each with its styles, caches and rendered
strips) stalled the event loop, visibly, while an answer streamed. So a finished turn a few
turns back is *compacted*: it captures the lines its children drew (the look is the same), then
drops the children. What it keeps is small and mostly invisible to the collector: the lines as
tuples of `(text, style index)` (tuples of strings and ints are untracked), the few styles they
use, and what the turn needs to build its children again (`CompactableTurn.build`: the turn's
events, in `TurnView`).

Clicking, hovering, moving the message cursor or searching into a compacted turn, and a theme or
width change, *expand* it: its children are built again, in the same order and state (expanded
tool calls, unfolded rounds), so a spot on a compacted turn is found again by its position among
the turn's *addressable* widgets. The pane compacts it again when the next turn starts.

`CompactableTurn` is the machinery; the conversation pane decides which turns to compact.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from tui_assist.ui.widgets.laid_out_size import LaidOutSize
from tui_assist.ui.widgets.markdown_render import highlighting_deferred

COMPACT_MAX_LINES = 300
"""Taller turns are not compacted: their captured lines would cost more memory than the few
widgets they save cost in layout."""

Line = tuple[tuple[str, int], ...]
"""A captured line: runs of text, each with an index into the turn's styles."""


class CompactableTurn(LaidOutSize, Vertical):
    """A turn's container that can be compacted once finished, and expanded again."""

    DEFAULT_CSS = """
    CompactableTurn.-compact > *, CompactableTurn > .-dropped {
        display: none;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._lines: tuple[Line, ...] | None = None
        """While compacted: the turn as its children drew it."""
        self._styles: tuple[Style | None, ...] = ()
        """While compacted: the styles the lines use."""
        self._spots: tuple[tuple[int, int, int], ...] = ()
        """While compacted: (first line, end line, index among `addressable()`) of each shown one."""
        self._texts: tuple[tuple[int, str], ...] = ()
        """While compacted: (index among `addressable()`, text) of each searchable one."""
        self._state: Any = None
        """While compacted: what `save_state` returned, for `restore_state` after a rebuild."""
        self._compacted_as: tuple[int, str] = (0, "")
        """The width and theme the lines were captured at."""

    # -- what a turn supplies ---------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the turn may still change (a running turn is never compacted)."""
        return False

    def build(self) -> None:
        """Mount the turn's children again, as they were before compaction dropped them."""

    def addressable(self) -> list[Widget]:
        """The children a click, the cursor or a search can reach, in a stable order."""
        return []

    def searchable_text(self, widget: Widget) -> str | None:
        """The text a search looks in for `widget` (one of `addressable()`), or None."""
        return None

    def drop_children(self) -> None:
        """Forget every reference to the children: they are about to be removed."""

    def save_state(self) -> Any:
        """What the user changed in the children (expanded, folded), kept over compaction."""
        return None

    def restore_state(self, state: Any) -> None:
        """Apply what `save_state` returned to children just built again."""

    # -- compacting -------------------------------------------------------------------------

    @property
    def compacted(self) -> bool:
        return self._lines is not None

    def compact(self) -> bool:
        """Draw the finished turn from captured lines and drop its children; False if it can't now."""
        if self._lines is not None or self.running or not self.children or highlighting_deferred():
            return False  # (lines captured with plain code would stay plain)
        origin = self.region
        width, height = self.size
        if not origin or not width or height > COMPACT_MAX_LINES:
            return False
        if any(node.has_focus or node.has_class("-selected") for node in self.walk_children(Widget)):
            return False
        # Gaps (margins) show the turn's own background, as the compositor draws them.
        blank = Strip.blank(width, Style(bgcolor=self.visual_style.rich_style.bgcolor))
        lines = [blank] * height
        # Parents come before their children, so a child is drawn over its container (a tool
        # call's border, a round's background), as the compositor does.
        for node in self.walk_children(Widget, with_self=False):
            region = node.region
            if not region:
                continue  # not shown (a folded draft, a collapsed body)
            placed = region.translate(-origin.offset)
            right = min(placed.right, width)
            for row, strip in enumerate(node.render_lines(Region(0, 0, *region.size)), placed.y):
                if 0 <= row < height and placed.x < right:
                    line = lines[row]
                    piece = strip.crop(0, right - placed.x)
                    lines[row] = Strip.join([line.crop(0, placed.x), piece, line.crop(right, width)])
        spots: list[tuple[int, int, int]] = []
        texts: list[tuple[int, str]] = []
        for index, widget in enumerate(self.addressable()):
            region = widget.region
            if region:
                top = region.y - origin.y
                spots.append((top, top + region.height, index))
            text = self.searchable_text(widget)
            if text:
                texts.append((index, text))
        self._lines, self._styles = _pack(lines)
        self._spots = tuple(spots)
        self._texts = tuple(texts)
        self._state = self.save_state()
        self._compacted_as = (width, self.app.theme)
        self.add_class("-compact")
        for child in self.children:
            child.add_class("-dropped")
        for node in self.walk_children(Widget):
            # A refresh clears the widget's cache of rendered lines. Textual keeps recent style
            # caches alive after their widget is gone (an `lru_cache` on one of their methods),
            # and with them every line they cached.
            node.refresh()
        self.drop_children()
        removal = self.remove_children()

        async def release() -> None:
            await removal
            # A node list caches its displayed children until asked again: ask, so that the
            # removed ones are not kept alive by the cache.
            _ = self.displayed_children

        self.call_later(release)
        self.refresh(layout=True)
        return True

    def uncompact(self) -> None:
        """Build the children again (they draw the same lines) and show them."""
        if self._lines is None:
            return
        state = self._state
        self._lines, self._styles, self._spots, self._texts, self._state = None, (), (), (), None
        self.remove_class("-compact")
        self.build()
        self.restore_state(state)
        self.refresh(layout=True)

    def spot_at(self, y: int) -> int | None:
        """While compacted: the index (among `addressable()`) of the innermost one drawn at line `y`."""
        found: int | None = None
        for top, bottom, index in self._spots:
            if top <= y < bottom:
                found = index  # later ones are deeper or lower: the last match is innermost
        return found

    def texts(self) -> list[tuple[int, str]]:
        """(index among `addressable()`, text) of everything a search can find in the turn."""
        if self._lines is not None:
            return list(self._texts)
        found: list[tuple[int, str]] = []
        for index, widget in enumerate(self.addressable()):
            text = self.searchable_text(widget)
            if text:
                found.append((index, text))
        return found

    def expand_to(self, index: int) -> Widget | None:
        """Expand the turn if need be and return its `index`-th addressable widget."""
        self.uncompact()
        widgets = self.addressable()
        return widgets[index] if 0 <= index < len(widgets) else None

    # -- drawing ------------------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._lines is not None:
            return len(self._lines)
        return super().get_content_height(container, viewport, width)

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = self._lines
        if lines is None:
            return self._render_blank(crop)
        # The captured lines are final (every cell styled by the child that drew it): they skip
        # the styles cache, which would keep every line as a strip, caches and all.
        width = self.size.width
        styles = self._styles
        strips: list[Strip] = []
        for y in range(crop.y, crop.bottom):
            if 0 <= y < len(lines):
                strip = Strip([Segment(text, styles[style]) for text, style in lines[y]], width)
            else:
                strip = Strip.blank(width, self.visual_style.rich_style)
            strips.append(strip.crop(crop.x, crop.right) if crop.width != width else strip)
        return strips

    def _render_blank(self, crop: Region) -> list[Strip]:
        # Expanded, the turn draws nothing of its own (no border, no padding): it shows only in
        # the margins between its children. But every growth of a streamed answer resizes it, and
        # the styles cache would build each of its visible lines again (as costly as drawing the
        # answer itself, at every flush): blank lines in its background are the same lines.
        if self.opacity < 1 or self.styles.border or self.styles.padding:
            return super().render_lines(crop)
        background = self.background_colors[1]
        strip = Strip.blank(crop.width, Style(bgcolor=background.rich_color))
        for line_filter in self.get_line_filters():  # as the styles cache applies them
            strip = strip.apply_filter(line_filter, background)
        return [strip] * crop.height

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


def _pack(strips: list[Strip]) -> tuple[tuple[Line, ...], tuple[Style | None, ...]]:
    """Lines as runs of (text, style index), and the styles: few objects the collector tracks."""
    index: dict[Style | None, int] = {}
    lines: list[Line] = []
    for strip in strips:
        runs: list[tuple[str, int]] = []
        for text, style, _control in Segment.simplify(strip):
            if not text:
                continue
            runs.append((text, index.setdefault(style, len(index))))
        lines.append(tuple(runs))
    return tuple(lines), tuple(index)
