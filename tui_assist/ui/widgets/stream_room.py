"""The unseen room above a streaming answer that a pane follows: growth without layouts.

A streaming answer keeps blank lines below its text (`reserve_for`), so most
flushes draw into them; once they are full, the answer used to be laid out again, with the whole
screen, at every `LAYOUT_INTERVAL`, dozens of times for a long answer. While the pane follows the
answer's end and the text is taller than the pane, rows above the pane's top are never seen: the
answer is laid out that much taller, with a *gap* of blank rows above its text, and when the room
below is full its text moves up into the gap, a repaint of the answer (the same picture a layout
drew) with no layout at all. The gap is sized for `GAP_INTERVAL` of the stream's growth, so a long
answer is laid out a few times, however it streams.

A gap must never be seen: it is dropped (`drop_gaps`, with the pane scrolled by as much, so the
view stays still) as soon as the pane scrolls away from its end, and the answer's last layout
(`finish`) has none.
"""

from __future__ import annotations

import weakref
from typing import Protocol, runtime_checkable

from textual.widget import Widget

LAYOUT_INTERVAL = 1 / 8
"""Seconds of a fast stream's growth that the room below its text holds (see `reserve_for`): a
repaint of the lines that changed costs much less than moving every line shown (into the gap) or
a layout of the screen, so a fast stream's room is renewed about this often rather than at every
flush, and its text still grows every `STREAM_INTERVAL`."""
RESERVE_SHARE = 1 / 2
"""The room below a streaming answer's text is at most this share of the screen's height."""
GAP_INTERVAL = 2.0
"""Seconds of a stream's growth the gap above its text holds."""
GAP_SCREENS = 8
"""The gap is at least the screen's height, and at most this many screens."""


@runtime_checkable
class Gapped(Protocol):
    @property
    def text_top(self) -> int:
        """The rows of the gap."""
        ...

    def drop_gap(self) -> int:
        """Lay out without the gap; the rows it had (0: none)."""
        ...


_gapped: weakref.WeakKeyDictionary[Widget, None] = weakref.WeakKeyDictionary()
"""The widgets laid out with a gap above their text."""


def following_pane(widget: Widget) -> Widget | None:
    """The anchored pane that scrolls `widget`, if it shows the end of its content."""
    for ancestor in widget.ancestors:
        if isinstance(ancestor, Widget) and ancestor.is_anchored:
            return ancestor if ancestor.scroll_y >= ancestor.max_scroll_y else None
    return None


def gap_for(widget: Widget, lines: int, rate: float) -> int:
    """The gap `widget` may keep above its `lines` of text, growing `rate` lines a second: none
    unless a pane follows it and the text alone fills that pane (so the gap is above its top)."""
    pane = following_pane(widget)
    if pane is None or lines < pane.scrollable_content_region.height:
        return 0
    screen = widget.screen.size.height
    return max(screen, min(screen * GAP_SCREENS, int(rate * GAP_INTERVAL)))


def hides_gap(widget: Widget, rows: int) -> bool:
    """Whether `rows` of text and reserve at the bottom of `widget` fill the pane that scrolls it."""
    pane = next((a for a in widget.ancestors if isinstance(a, Widget) and a.is_anchored), None)
    return pane is not None and rows >= pane.scrollable_content_region.height


def note_gap(widget: Widget, gap: int) -> None:
    """Remember whether `widget` is laid out with a gap (`drop_gaps` drops it)."""
    if gap:
        _gapped[widget] = None
    else:
        _gapped.pop(widget, None)


def drop_gaps(pane: Widget, *, exposed: bool = False) -> int:
    """Drop the gaps of the answers in `pane` (with `exposed`, those whose text and reserve no
    longer fill it: a taller pane): the rows they had, which the pane scrolls back by."""
    dropped = 0
    for widget in list(_gapped):
        if pane in widget.ancestors and isinstance(widget, Gapped):
            if not exposed or not hides_gap(widget, widget.size.height - widget.text_top):
                dropped += widget.drop_gap()
    return dropped


def reserve_for(widget: Widget, rate: float) -> int:
    """Blank lines to keep below the text of a stream growing `rate` lines a second.

    A slow stream (fewer lines a second than layouts in `LAYOUT_INTERVAL`) keeps none: each of
    its new lines is laid out as it comes. A fast one keeps room for about `LAYOUT_INTERVAL` of its
    growth, up to `RESERVE_SHARE` of the screen.
    """
    return min(int(widget.screen.size.height * RESERVE_SHARE), int(rate * LAYOUT_INTERVAL))
