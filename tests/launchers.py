"""A launcher that starts a run's work only when told to: a host that has not got to it yet.

A Textual worker or a task may start a moment after the controller handed it its work; a cancel
may arrive in between. Tests hold the work to put the cancel exactly there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tui_assist.session.runs import Cancellable, Work, task_launcher


class HeldLauncher:
    """Holds each work it is given until `release`, then starts it with `start` (a task by default)."""

    def __init__(self, start: Callable[[Work], Cancellable] = task_launcher) -> None:
        self.start = start
        self.held: list[Work] = []
        self.started: list[Any] = []
        self.cancels = 0

    def __call__(self, work: Work) -> HeldLauncher:
        self.held.append(work)
        return self

    def cancel(self) -> None:
        """Counted: the controller ends a run that did not start itself, whatever its launcher does."""
        self.cancels += 1

    def release(self) -> None:
        """Start every held work now, late."""
        while self.held:
            self.started.append(self.start(self.held.pop(0)))

    async def finished(self) -> None:
        """Wait for the started works that are tasks."""
        await asyncio.gather(*(s for s in self.started if isinstance(s, asyncio.Future)))
