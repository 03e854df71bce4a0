"""Python's garbage collector while answers stream: process-wide, so in one place.

While text streams into a `StreamingMarkdown`, full collections are held off, the young ones run
less often, and the young and middle generations are collected after each frame; all of it is
released once nothing streams. Whatever else wants to repaint just before a flush can ride along
with it (`with_next_flush`). The widget calls `hold_full_collections` when text starts, and
`release_full_collections` when it ends or the widget goes.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import App


class Streaming(Protocol):
    """A widget text streams into (a `StreamingMarkdown`)."""

    @property
    def app(self) -> Any: ...

    @property
    def flush_queued(self) -> bool:
        """Whether a flush of queued text is scheduled."""
        ...


YOUNG_THRESHOLD = 10_000
"""Allocations between two young collections while an answer streams (Python's default is 700):
a frame's short-lived strips and segments then mostly die before a collection sees them, instead
of being promoted, scanned again by the middle generation, and collected late."""
RELEASE_DELAY = 0.5
"""Seconds from the end of a stream to the release of the full collections."""

streaming_widgets: weakref.WeakSet[Streaming] = weakref.WeakSet()
"""The widgets text is streaming into (appended to and not finished)."""
_thresholds: tuple[int, int, int] | None = None
"""The collector's thresholds while full collections are held off."""


def hold_full_collections(widget: Streaming) -> None:
    """Hold off Python's full collections while `widget` streams (see `release_full_collections`).

    What survives the young collections while an answer streams (Textual's strips carry several
    caches each) makes each full collection scan tens of thousands of objects: a stall of the
    event loop as long as a frame's budget, so the answer visibly paused.
    Textual pauses the collector for smooth scrolling for the same reason (`PAUSE_GC_ON_SCROLL`);
    here only the full collections wait. The young ones go on, less often (see `YOUNG_THRESHOLD`),
    and the young and middle generations are collected after each frame (`collect_after_frame`).
    What they leave is collected after the stream.
    """
    global _thresholds
    if _thresholds is None:  # never saved twice: a second save would keep the held-off value
        _thresholds = gc.get_threshold()
        gc.set_threshold(max(_thresholds[0], YOUNG_THRESHOLD), _thresholds[1], 1_000_000_000)
    streaming_widgets.add(widget)


def collect_after_frame(app: App[object]) -> None:
    """Collect the young and middle generations once the next frame is drawn.

    Left to the allocation count, a middle collection came in the middle of a frame and scanned
    what ten young ones had kept (mostly the caches of Textual's strips): the longest pauses of
    a streamed answer. Collected after each frame, they scan one frame's leftovers, in the time
    before the next flush. (Answers
    streaming side by side each ask: a second collection in a row finds next to nothing.)
    """
    app.call_after_refresh(_collect_after_write)


WRITE_WAIT = 0.001
"""Seconds between a frame and the collection after it: Textual's writer thread writes the frame
to the terminal once the event loop lets go of the interpreter, and a collection would hold it
back as long as it runs."""


def _collect_after_write() -> None:
    asyncio.get_running_loop().call_later(WRITE_WAIT, _collect_young)


def _collect_young() -> None:
    if streaming_widgets:
        gc.collect(1)


_with_next_flush: dict[Callable[[], object], None] = {}
"""Callbacks for the next flush of a streaming answer (a dict: an ordered set)."""


def with_next_flush(callback: Callable[[], object]) -> bool:
    """Call `callback` with the next flush of a streaming answer, so what it repaints is drawn in
    that flush's frame rather than in a frame of its own; False (and not kept) if no flush is
    queued (none streams, or its text paused: a tool runs).

    A frame holds the next one back by up to a refresh period (up to two on Textual's own grid,
    see `textual_private.FrameTimer`), so a repaint of anything else (an elapsed time) just before
    a flush delayed the answer's growth by as much: its longest pauses.
    """
    if not any(widget.flush_queued for widget in streaming_widgets):
        return False
    _with_next_flush[callback] = None
    return True


def flush_awaited() -> bool:
    """Whether something waits to be drawn with the next flush (see `with_next_flush`)."""
    return bool(_with_next_flush)


def run_with_flush() -> None:
    """Call what waits for the next flush (the flush is drawn)."""
    callbacks = list(_with_next_flush)
    _with_next_flush.clear()
    for callback in callbacks:
        callback()


def release_full_collections(widget: Streaming, *, finished: bool) -> None:
    streaming_widgets.discard(widget)
    if streaming_widgets:
        return
    if not finished:  # removed, or the app closing: no frame to wait for
        _with_next_flush.clear()  # what they would draw may be gone
        _restore_full_collections()
        return
    run_with_flush()  # nothing streams any more to take them along
    if _thresholds is not None:
        # Once the end of the answer is drawn: the full collection this lets run (at once: the
        # middle collections of the stream count towards it) has the stream's leftovers to scan,
        # and would hold back the frames that show the end.
        widget.app.set_timer(RELEASE_DELAY, _restore_full_collections)


def _restore_full_collections() -> None:
    global _thresholds
    if not streaming_widgets and _thresholds is not None:
        gc.set_threshold(*_thresholds)
        _thresholds = None
