"""Screen frames drawn as soon as they are asked for, at most one a refresh period.

Textual (8.2.8, pinned) draws a screen's frames from an interval timer that ticks on a fixed
grid. After a frame it skips to the second grid point ahead, not the first: a frame asked for up
to two periods (33 ms) after the last one waits for that grid point. A streamed answer asks for a
frame every 33 ms, so its frames came 0-15 ms late, a different lateness each time; a growth that
lays out the screen, asked for early to make up for its cost, came late the most.

`FrameTimer` keeps Textual's limit (a frame starts at least one period after the one before) and
drops the grid: a frame asked for later than that is drawn at once.
"""

from __future__ import annotations

from typing import Any

from textual import _time
from textual.screen import UPDATE_PERIOD, Screen
from textual.timer import EventTargetGone, Timer


def frame_wait(last_start: float, now: float, period: float = UPDATE_PERIOD) -> float:
    """Seconds a frame asked for at `now` waits, the last one having started at `last_start`."""
    return max(0.0, last_start + period - now)


class FrameTimer(Timer):
    """A paused-until-asked timer that ticks at once when asked, but not twice within its interval
    (no repeat count and no reset: the screen's update timer uses neither)."""

    async def _run(self) -> None:
        last_start = float("-inf")
        count = 0
        while True:
            await self._active.wait()  # a frame is asked for (`resume`; the tick pauses it)
            wait = frame_wait(last_start, _time.get_time(), self._interval)
            if wait:
                await _time.sleep(wait)
            last_start = _time.get_time()
            count += 1
            try:
                await self._tick(next_timer=last_start, count=count)
            except EventTargetGone:
                break


def paced_update_timer(screen: Screen[Any]) -> Timer:
    """A started `FrameTimer` for `screen`'s updates, as Textual's `Screen._update_timer` makes its own."""
    timer = FrameTimer(
        screen, UPDATE_PERIOD, name="screen_update", callback=screen._on_timer_update, pause=True
    )
    timer._start()
    screen._timers.add(timer)  # stopped with the screen, as `set_interval` arranges
    return timer
