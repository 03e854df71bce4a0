"""Markdown that streams in without re-rendering what is already finished.

Textual's own streaming Markdown lays out every block of the answer on every frame, so a frame's cost grows
with the answer. This widget splits the text at block boundaries instead: everything before the last safe
boundary is *committed* (rendered once into cached strips, re-rendered only when the width or theme changes)
and only the unfinished *tail* is rendered again when deltas arrive. The widget draws through the line API,
so a flush costs O(tail + visible lines) however long the answer grows.

What a flush costs is mostly not this widget's work but Textual's: a taller answer means a full layout of
the screen and a repaint of the whole pane, since anchored content scrolls. Textual would lay out and
repaint a second time a frame later, because the layout changed the virtual sizes of the answer, its turn
and the pane; `LaidOutSize` drops that request, so a growth is laid out and repainted once. So the answer
can be drawn `STREAM_INTERVAL` apart while text streams (drawn less often, it grew in visible bursts), and
the first delta after a pause is drawn on the next frame. A flush that changes no line repaints nothing, and
one that changes only the tail without changing the height repaints only the tail lines that differ. A fast
stream (more lines a second than `LAYOUT_INTERVAL` would lay out one at a time) keeps a few blank lines of
room below its text (`stream_room.reserve_for`), so its new lines mostly fill that room, a repaint of a few
lines; once it is full, the text moves up into an unseen gap above it (`stream_room`) while the pane follows
it, or else the screen is laid out (about every `LAYOUT_INTERVAL`).

A boundary is a blank line outside a code fence that is followed by an unindented line: splitting
there cannot change how the text before it parses (indented continuations of list items and
indented code stay with their block).

Committed chunks keep only their source and their height at the current width; their strips live in a small
LRU cache and are rendered again on demand when scrolled back into view. So the number of live objects (and
the cost of Python's full garbage collections, which stalled the loop visibly when every line of a long
answer was kept as strips) stays bounded however long the answer or the session grows.
"""

from __future__ import annotations

import asyncio
import re
import time
from bisect import bisect_right
from collections import OrderedDict

from rich.style import Style
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from tui_assist.ui.textual_private import layout_now
from tui_assist.ui.widgets import stream_gc, stream_room
from tui_assist.ui.widgets.laid_out_size import LaidOutSize
from tui_assist.ui.widgets.markdown_render import (
    MarkdownRenderer,
    defer_highlighting,
    drawn_plain,
    highlight_deferred,
    highlighting_deferred,
    load_parser,
    markdown_renderer,
    parsed_markdown,
    warm_up,
)
from tui_assist.ui.widgets.selection_highlight import highlight_span, selection_style
from tui_assist.ui.widgets.stream_gc import with_next_flush
from tui_assist.ui.widgets.stream_room import LAYOUT_INTERVAL, RESERVE_SHARE

__all__ = [
    "LAYOUT_INTERVAL",
    "RESERVE_SHARE",
    "LaidOutSize",
    "StreamingMarkdown",
    "defer_highlighting",
    "highlight_deferred",
    "highlighting_deferred",
    "load_parser",
    "parsed_markdown",
    "warm_up",
    "with_next_flush",
]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
FRAME_INTERVAL = 1 / 60
"""Seconds the first delta after a pause waits (one frame of Textual's: deltas that arrive
together are drawn together), and between the slices of a burst larger than `FRAME_BUDGET`."""
STREAM_INTERVAL = 1 / 30
"""Least seconds between two flushes while text streams: 30 growths a second read as smooth, and
leave room (Textual paints at most 60 frames a second) for the answer to keep that pace even
when a frame comes late. Each flush that adds lines costs a layout of the screen and a repaint of
the pane, so drawing every delta (a fast stream sends many a frame) would spend the CPU on that."""
LAYOUT_LEAD = 0.012
"""Seconds before its due time that a paced flush starts. One that must lay out the screen (the
pane scrolls, so it is repainted whole) reaches the terminal later than one that repaints a few
lines, and is drawn at once; one that repaints waits for its due time (`_held`). So the answer
grows about `STREAM_INTERVAL` apart either way: started on time, each layout's growth came late
by its own cost, the stream's longest pauses."""
FRAME_BUDGET = 4_000
"""Characters taken from the queue per frame: a burst (or one huge append) is drawn over several
frames instead of stalling the event loop while all of it is parsed at once."""
CHUNK_TARGET = 1_500
"""Characters per committed chunk (whole blocks are never split, so chunks may be larger)."""
CACHED_CHUNKS = 6
"""Rendered chunks kept per widget; the rest are rendered again when scrolled into view."""
PAINTED_LINES = 200
"""Painted lines kept per widget (a few screens): beyond that they are painted again."""
_BLANK = Strip.blank(0)


class StreamingMarkdown(LaidOutSize, Widget):
    """Markdown that can grow by `append` (merged per frame) and be finished with `finish`."""

    DEFAULT_CSS = """
    StreamingMarkdown {
        height: auto;
        width: 1fr;
    }
    """

    def __init__(
        self,
        markdown: str = "",
        *,
        finished: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._chunks: list[str] = []
        """Committed source chunks, in order, each with the blank lines after it."""
        self._starts: list[int] = []
        """First line of each chunk at the current width (chunks after the first follow a blank line)."""
        self._committed_height = 0
        self._cache: OrderedDict[int, list[Strip]] = OrderedDict()
        """Chunk index -> its styled strips, least recently used first."""
        self._tail = ""
        self._tail_lines: list[Strip] = []
        self._tail_render: tuple[str, int, list[Strip]] = ("", 0, [])
        """The tail text and width `_tail_lines` were rendered from, and the unstyled lines."""
        self._pending: list[str] = []
        self._scan = 0
        """Offset in the tail up to which complete lines were scanned."""
        self._fence: str | None = None
        self._blank_at: int | None = None
        self._width = 0
        self._theme_key: tuple[str, str] | None = None
        self._base_style: Style | None = None
        self._tail_dirty = False
        self._timer: Timer | None = None
        self._flushed_at = float("-inf")
        """`time.monotonic()` of the last flush that drew new text (when it was due, if it came late)."""
        self._due = float("-inf")
        """When the flush the timer waits for is due."""
        self._held: tuple[asyncio.TimerHandle, int, Region | None] | None = None
        """A flush's repaint waiting for its due time (see `LAYOUT_LEAD`), and what it repaints."""
        self._reserve = 0
        """Blank lines of room below the text while it streams (see `stream_room.reserve_for`)."""
        self._offset = 0
        """Rows of the unseen gap above the text (see `stream_room`)."""
        self._room = 0
        """The height the last layout gave the widget: the gap, `line_count` and the reserve."""
        self._laid_out_at = (float("-inf"), 0)
        """`time.monotonic()` and `line_count` when the growth of the text last asked for a layout."""
        self._selection: Selection | None = None
        """The mouse text selection in this widget, if any."""
        self._painting = False
        self._painted: dict[int, Strip] = {}
        """Line -> the line as painted (padding, background, filters), kept while the answer grows."""
        self._painted_as: tuple[object, ...] = ()
        """What the painted lines depend on besides their text (see `render_lines`)."""
        self.finished = finished
        """No more text will come: the tail is committed on mount or on `finish`."""
        if markdown:
            self._pending.append(markdown)

    # -- public API -------------------------------------------------------------------------

    @property
    def flush_queued(self) -> bool:
        """Whether a flush of queued text is scheduled (or its repaint held for its due time)."""
        return self._timer is not None or self._held is not None

    @property
    def source(self) -> str:
        """The whole text so far (flushed or not)."""
        return "".join(self._chunks) + self._tail + "".join(self._pending)

    @property
    def line_count(self) -> int:
        """Rendered lines at the current width."""
        return self._committed_height + self._gap + len(self._tail_lines)

    @property
    def text_top(self) -> int:
        """The row of the first line: rows above it are the unseen gap (see `stream_room`)."""
        return self._offset

    def drop_gap(self) -> int:
        """Lay out without the gap above the text (its pane left the end); the rows it had."""
        gap, self._offset = self._offset, 0
        stream_room.note_gap(self, 0)
        if gap:
            self._room -= gap
            self.refresh(layout=True)
        return gap

    def append(self, text: str) -> None:
        """Queue a delta; queued deltas are merged and drawn together (see `STREAM_INTERVAL`)."""
        if not text:
            return
        if not self.finished and self.is_mounted:  # an unmounted one is never unmounted to release it
            stream_gc.hold_full_collections(self)
        self._pending.append(text)
        if self._timer is None and self.is_mounted:
            now = time.monotonic()
            wait = max(FRAME_INTERVAL, self._flushed_at + STREAM_INTERVAL - now)
            self._due = now + wait
            self._timer = self.set_timer(max(FRAME_INTERVAL, wait - LAYOUT_LEAD), self._on_frame)

    def reset(self, text: str = "") -> None:
        """Throw away everything (a retried stream) and start again with `text`."""
        self._chunks.clear()
        self._starts.clear()
        self._committed_height = 0
        self._cache.clear()
        self._tail = ""
        self._tail_lines = []
        self._pending = [text] if text else []
        self._scan, self._fence, self._blank_at = 0, None, None
        self.finished = False
        self._painted.clear()
        self._reserve, self._laid_out_at = 0, (float("-inf"), 0)
        self._offset = 0
        stream_room.note_gap(self, 0)
        self._flush()
        self.refresh(layout=True)  # the flush compares with what was just thrown away

    def finish(self) -> None:
        """No more deltas: commit the tail so the whole text is static."""
        self._flush(final=True)
        self.finished = True
        stream_gc.release_full_collections(self, finished=True)

    def flush(self) -> None:
        """Draw queued deltas now instead of when the merge window closes."""
        self._flush()

    # -- internals ----------------------------------------------------------------------------

    @property
    def _gap(self) -> int:
        return 1 if self._committed_height and self._tail_lines else 0

    def _on_frame(self) -> None:
        self._timer = None
        self._flush(paced=True)

    def on_mount(self) -> None:
        if self._pending:
            if not self.finished:
                stream_gc.hold_full_collections(self)
            self._flush(final=self.finished, mounting=True)

    def on_unmount(self) -> None:
        stream_gc.release_full_collections(self, finished=False)
        stream_room.note_gap(self, 0)
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._held is not None:
            self._held[0].cancel()
            self._held = None

    def notify_style_update(self) -> None:
        # A theme change restyles every widget; re-render if it changed the Markdown styles. (Not
        # `self.watch(app, "theme")`: those watchers outlive removed widgets and keep them alive.)
        super().notify_style_update()
        if (
            self._theme_key is not None
            and self._width > 0
            and markdown_renderer(self.app).key != self._theme_key
        ):
            self.render_again()

    def render_again(self) -> None:
        """Render every line again, at the next layout (the Markdown styles changed)."""
        if self._width > 0:
            self._width = 0
            self._painted.clear()
            self.refresh(layout=True)

    def _flush(self, final: bool = False, *, paced: bool = False, mounting: bool = False) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._held is not None:  # repainted with this flush instead
            handle, first, region = self._held
            handle.cancel()
            self._held = None
            self._repaint(first, region)
        before = self.line_count
        committed = self._committed_height
        old_tail = self._tail_lines
        if self._pending:
            # A flush the busy loop ran late counts from when it was due, so the next one is not
            # late too (lateness does not add up into longer gaps), and so does one its timer ran
            # early (`LAYOUT_LEAD`, or a little more): counted from then, the pace drifted sooner.
            late = time.monotonic() - self._due
            on_time = -LAYOUT_LEAD <= late < STREAM_INTERVAL or (paced and late < 0)
            self._flushed_at = self._due + (0 if on_time else late)
            queued = "".join(self._pending)
            self._pending.clear()
            if len(queued) > FRAME_BUDGET:
                queued, rest = self._split_for_budget(queued)
                self._pending.append(rest)
            self._tail += queued
            self._tail_dirty = True
            self._commit_ready()
        if self._pending:
            if self.is_attached:
                self._timer = self.set_timer(FRAME_INTERVAL, lambda: self._flush(final))
            final = False
        if final and self._tail:
            self._commit_tail()
        if self._width <= 0:
            # Not laid out yet; mounting, its parent lays it out (`AwaitMount`), a second layout
            if not mounting:
                self.refresh(layout=True)
            return
        if self._tail_dirty:
            self._render_tail()
        lines = self.line_count
        if self._offset + lines > self._room or (final and (lines != self._room or self._offset)):
            self._unpaint(committed)  # what was committed before this flush is as it was
            rate = 0.0 if final else self._growth_rate(lines)
            self._reserve = 0 if final else stream_room.reserve_for(self, rate)
            if not final and self._move_into_gap(lines):
                return
            self._offset = 0 if final else stream_room.gap_for(self, lines, rate)
            stream_room.note_gap(self, self._offset)
            if final:  # the answer's end: not a frame after what the turn's end repaints
                layout_now(self)
            else:
                self.refresh(layout=True)
            # A layout's frame is the costliest of the stream: what waits for a flush joins the
            # next repaint within the room instead, unless no room is kept (each growth lays out).
            self._drawn(with_waiting=not self._reserve)
            return
        # Within the room, so no layout: repaint what changed of the lines that were the tail.
        region = self._changed_region(committed, old_tail, max(lines, before))
        wait = self._due - time.monotonic() if paced else 0
        # What waits for a flush (the panels' tick) makes its frame dearer: drawn at once, as a layout.
        if wait > 0 and not stream_gc.flush_awaited():
            handle = asyncio.get_running_loop().call_later(wait, self._show, committed, region)
            self._held = (handle, committed, region)
        else:
            self._show(committed, region)

    def _show(self, first: int, region: Region | None) -> None:
        """Repaint a flush within the room (and what waits for a flush)."""
        self._held = None
        self._repaint(first, region)
        self._drawn()

    def _repaint(self, first: int, region: Region | None) -> None:
        """Forget the painted lines from `first` on (what was committed before the flush is as it
        was) and repaint the changed `region`, together: a frame painted between the two would
        take, from Textual's own line cache, lines it was not yet told changed, and keep them."""
        self._unpaint(first)
        if region is not None:
            self.refresh(region.translate((0, self._offset)))

    def _drawn(self, *, with_waiting: bool = True) -> None:
        """A flush asked for its frame: while streaming, what waits for a flush joins it (unless
        not `with_waiting`), and the young are collected after it."""
        if self in stream_gc.streaming_widgets:
            if with_waiting:
                stream_gc.run_with_flush()
            stream_gc.collect_after_frame(self.app)

    def _move_into_gap(self, lines: int) -> bool:
        """Move the text up into the gap above it, to keep the reserve below it: a repaint of the
        rows shown, not a layout. False when the gap is too small, or the pane no longer follows."""
        offset = self._room - lines - self._reserve
        if not self._offset or offset < 0 or stream_room.following_pane(self) is None:
            return False
        self._offset = offset
        self.refresh()  # every row shows another line (the painted ones are kept by line)
        self._drawn(with_waiting=not self._reserve)
        return True

    def _growth_rate(self, lines: int) -> float:
        """Lines a second the text grew since the room was last renewed (now, at `lines`)."""
        now = time.monotonic()
        then, lines_then = self._laid_out_at
        self._laid_out_at = (now, lines)
        return (lines - lines_then) / max(now - then, STREAM_INTERVAL)

    def _unpaint(self, first: int = 0) -> None:
        """Forget the painted lines from `first` on (their text or look changed)."""
        if first <= 0:
            self._painted.clear()
        else:
            for y in [y for y in self._painted if y >= first]:
                del self._painted[y]

    def _changed_region(self, top: int, old_tail: list[Strip], end: int) -> Region | None:
        """The lines from `top` to `end` that differ from what they showed (the gap line and
        `old_tail` from `top`, the height committed before): often one line, often none. Committing
        part of the tail draws the same lines as before from a chunk, so only the lines the new text
        changed are repainted (the whole old tail, 20-40 lines, used to be)."""
        old = [_BLANK] * (1 if top and old_tail else 0) + old_tail
        changed: list[int] = []
        for y in range(top, end):
            was = old[y - top] if y - top < len(old) else _BLANK
            now = self._line(y)
            if was is not now and was != now:
                changed.append(y)
        if not changed:
            return None
        return Region(0, changed[0], self._width, changed[-1] + 1 - changed[0])

    @staticmethod
    def _split_for_budget(queued: str) -> tuple[str, str]:
        """About one frame's worth of `queued`, cut after a newline when there is one."""
        cut = queued.rfind("\n", 0, FRAME_BUDGET)
        cut = cut + 1 if cut > 0 else FRAME_BUDGET
        return queued[:cut], queued[cut:]

    def _commit_ready(self) -> None:
        """Find block boundaries in the newly completed lines of the tail and commit up to the last."""
        tail = self._tail
        boundaries: list[tuple[int, int]] = []
        pos = self._scan
        while (end := tail.find("\n", pos)) != -1:
            line = tail[pos:end]
            if self._fence is not None:
                stripped = line.strip()
                if stripped.startswith(self._fence) and not stripped.strip(self._fence[0]):
                    self._fence = None
            elif match := _FENCE.match(line):
                if self._blank_at is not None and pos > 0:
                    boundaries.append((self._blank_at, pos))
                self._fence = match.group(1)[:3]
                self._blank_at = None
            elif not line.strip():
                if self._blank_at is None:
                    self._blank_at = pos
            else:
                if self._blank_at is not None and not line[:1].isspace():
                    boundaries.append((self._blank_at, pos))
                self._blank_at = None
            pos = end + 1
        self._scan = pos
        if not boundaries:
            return
        # Group blocks into chunks of about CHUNK_TARGET characters: small enough that scrolling
        # back re-renders little, large enough that there aren't thousands of them.
        start = 0
        for i, (cut, resume) in enumerate(boundaries):
            if cut - start >= CHUNK_TARGET or i == len(boundaries) - 1:
                self._commit_source(tail[start:resume])  # with its blank lines: `source` is exact
                start = resume
        self._tail = tail[start:]
        self._scan -= start
        if self._blank_at is not None:
            self._blank_at -= start
        self._tail_dirty = True

    def _render_tail(self) -> None:
        lines = self._renderer().render(self._tail, self._width)
        self._tail_render = (self._tail, self._width, lines)
        self._tail_lines = self._style_lines(lines)
        self._tail_dirty = False

    def _commit_tail(self) -> None:
        text, width, lines = self._tail_render
        if text == self._tail and width == self._width > 0:
            # Finished after the tail was drawn: it is already rendered.
            self._chunks.append(self._tail)
            self._add_chunk(len(self._chunks) - 1, lines)
        else:
            self._commit_source(self._tail)
        self._tail = ""
        self._scan, self._fence, self._blank_at = 0, None, None
        self._tail_dirty = True

    def _commit_source(self, chunk: str) -> None:
        if not chunk:
            return
        self._chunks.append(chunk)
        if self._width > 0:
            self._add_chunk(len(self._chunks) - 1, self._renderer().render(chunk, self._width))

    def _add_chunk(self, index: int, lines: list[Strip]) -> None:
        """Place chunk `index` (rendered as `lines`) after the committed ones and cache it."""
        start = self._committed_height + (1 if self._committed_height and lines else 0)
        self._starts.append(start)
        self._committed_height = start + len(lines) if lines else self._committed_height
        self._remember(index, self._style_lines(lines))

    def _remember(self, index: int, lines: list[Strip]) -> list[Strip]:
        self._cache[index] = lines
        self._cache.move_to_end(index)
        while len(self._cache) > CACHED_CHUNKS:
            self._cache.popitem(last=False)
        return lines

    def _chunk_lines(self, index: int) -> list[Strip]:
        lines = self._cache.get(index)
        if lines is not None:
            self._cache.move_to_end(index)
            return lines
        rendered = self._renderer().render(self._chunks[index], self._width)
        return self._remember(index, self._style_lines(rendered))

    def _style_lines(self, lines: list[Strip]) -> list[Strip]:
        style = self._base_style
        return [line.apply_style(style) for line in lines] if style else lines

    def _renderer(self) -> MarkdownRenderer:
        drawn_plain(self)  # drawn again once highlighting is back, if it is deferred
        renderer = markdown_renderer(self.app)
        if renderer.key != self._theme_key:
            self._theme_key = renderer.key
            if self._width > 0:
                self._width = 0
        return renderer

    def _ensure_width(self, width: int) -> None:
        renderer = self._renderer()
        if width == self._width or width <= 0:
            return
        self._width = width
        self._starts.clear()
        self._committed_height = 0
        self._cache.clear()
        self._painted.clear()
        for index, chunk in enumerate(self._chunks):
            self._add_chunk(index, renderer.render(chunk, width))
        self._render_tail()

    def _check_style(self) -> None:
        style = self.rich_style
        if style != self._base_style:
            self._base_style = style
            self._cache.clear()
            self._painted.clear()
            if self._width > 0:
                self._render_tail()

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure_width(width)
        if self.finished or not stream_room.hides_gap(self, self.line_count + self._reserve):
            self._offset = 0  # (a wider or taller screen: the text no longer fills the pane)
        self._room = self._offset + self.line_count + (0 if self.finished else self._reserve)
        return self._room

    def render_lines(self, crop: Region) -> list[Strip]:
        # Each growth of a streamed answer resizes the widget, and Textual then paints all of its
        # visible lines again (padding, background, filters: as costly as the rest of a frame),
        # though only the tail changed. So painted lines are kept here, and dropped where the text
        # changed (`_unpaint`) or when what else they depend on changes.
        self._check_style()
        width = self.content_region.width
        if width != self._width:
            self._ensure_width(width)
        styles = self.styles
        painted_as = (
            crop.x,
            crop.width,
            self.size.width,
            self._base_style,
            self.opacity,
            tuple(map(id, self.get_line_filters())),
        )
        if painted_as != self._painted_as or len(self._painted) > PAINTED_LINES:
            self._painted_as = painted_as
            self._painted.clear()
        if styles.border or styles.padding.top or styles.padding.bottom:
            self._painted.clear()  # lines that depend on the height: not kept
        painted = self._painted  # by line, not row: text moved into the gap is painted already
        top = self._offset
        self._painting = True
        try:
            y = crop.y
            while y < crop.bottom:
                if y - top in painted:
                    y += 1
                    continue
                end = y + 1
                while end < crop.bottom and end - top not in painted:
                    end += 1
                lines = super().render_lines(Region(crop.x, y, crop.width, end - y))
                painted.update(zip(range(y - top, end - top), lines, strict=True))
                y = end
        finally:
            self._painting = False
        lines = [painted[y - top] for y in crop.line_range]
        if styles.border or styles.padding.top or styles.padding.bottom:
            painted.clear()
        return lines

    def render_line(self, y: int) -> Strip:
        line = self._line(y - self._offset)
        selection = self._selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            line = highlight_span(line, *span, selection_style(self))
        if self._painting:
            return line
        # Outside `render_lines`, the compositor asks for a line to find the character under the
        # pointer (mouse text selection): that needs offsets, painting doesn't. (Each offset is a
        # new Rich style: on every painted line they would cost time, and churn Rich's style cache.)
        return line.apply_offsets(0, y)

    def _line(self, y: int) -> Strip:
        if y < 0:  # the gap
            return _BLANK
        if y < self._committed_height:
            index = bisect_right(self._starts, y) - 1
            offset = y - self._starts[index]
            lines = self._chunk_lines(index)
            return lines[offset] if 0 <= offset < len(lines) else _BLANK
        y -= self._committed_height + self._gap
        return self._tail_lines[y] if 0 <= y < len(self._tail_lines) else _BLANK

    # -- mouse text selection -----------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text as shown (the Markdown source is what the copy key copies)."""
        if self._width <= 0:
            return None
        return selection.extract("\n".join(self._plain_lines())), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._selection = selection
        self._painted.clear()
        self.refresh()

    def _plain_lines(self) -> list[str]:
        """Every rendered line as text; chunks out of the cache are rendered without caching them."""
        lines = [""] * self.line_count
        for index, chunk in enumerate(self._chunks):
            strips = self._cache.get(index)
            if strips is None:
                strips = self._renderer().render(chunk, self._width)
            start = self._starts[index]
            lines[start : start + len(strips)] = [strip.text.rstrip() for strip in strips]
        top = self._committed_height + self._gap
        lines[top:] = [strip.text.rstrip() for strip in self._tail_lines]
        return [""] * self._offset + lines  # by row, as the selection counts them
