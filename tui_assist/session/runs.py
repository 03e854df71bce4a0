"""Runs: the handles a `TurnController` gives its host for the work it owns.

A run is one piece of work the user started (a turn, a `!` shell turn, `/compact`, a flow, a
resume, a rewind; later a goal or a background task). The controller makes it, queues it while
another runs, starts it through the host's `Launcher` and ends it; the host only holds the handle:
it awaits it, cancels it and watches it. A run can be cancelled in any state, before it started
too: the controller ends it at once, so a launcher that never gets to start its work leaves
nothing half-started behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Generator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from tui_assist.core.conversation import ImageBlock
    from tui_assist.session.controller import TurnEnded

RunKind = Literal["turn", "shell", "compact", "flow", "resume", "rewind", "command"]
"""What a run does. A `command` (a built-in's work) runs beside the others; every other kind
holds the controller's one busy slot."""
RunState = Literal["queued", "starting", "running", "done"]
"""`queued` behind the running run; `starting` handed to the launcher; `running`; `done`."""

Work = Callable[[], Coroutine[Any, Any, Any]]
"""What a launcher starts: a coroutine function, called only when the work really starts."""


class Cancellable(Protocol):
    """What a launcher hands back: a Textual `Worker`, an `asyncio.Task`."""

    def cancel(self) -> object:
        """Stop the work (before it started too)."""
        ...


Launcher = Callable[[Work], Cancellable]
"""How a host starts work on its loop: a Textual worker in the TUI (so the work may await a
modal), a task in `ask` and ACP."""


def task_launcher(work: Work) -> asyncio.Task[Any]:
    """Start `work` as an asyncio task (the launcher of hosts with no event loop of their own)."""
    return asyncio.ensure_future(work())


class Run:
    """A handle on one run: await it, cancel it, watch it."""

    def __init__(
        self,
        kind: RunKind,
        label: str,
        *,
        images: Sequence[ImageBlock] = (),
        cancel: Callable[[Run], bool],
    ) -> None:
        self.kind: RunKind = kind
        self.label = label
        """What the run is: the prompt as typed, or what the host calls it."""
        self.images = tuple(images)
        """Images sent with the prompt (a turn's)."""
        self.state: RunState = "queued"
        self.cancelled = False
        """Whether it was cancelled (a turn under way is then kept, marked interrupted)."""
        self.value: object = None
        """What the work returned."""
        self.error: Exception | None = None
        """What the work raised (a `CommandError` for a command the user should fix)."""
        self.ended: TurnEnded | None = None
        """How a turn ended (None for other kinds, and for a turn cancelled before it began)."""
        self.handle: Cancellable | None = None
        """What the launcher gave back (set while `starting`)."""
        self.held = False
        """A prompt queued for after the running turn (`tab`): it never joins that turn."""
        self.joined = False
        """The prompt joined the running turn at its next model request (it is done, not run)."""
        self._cancel = cancel
        self._watchers: list[Callable[[Run], object]] = []
        self._done = asyncio.Event()

    def __repr__(self) -> str:
        return f"<Run {self.kind} {self.state} {self.label[:30]!r}>"

    @property
    def done(self) -> bool:
        """Whether the run is over (finished, failed or cancelled)."""
        return self.state == "done"

    def cancel(self) -> bool:
        """Cancel the run in whatever state it is; False when it is already done."""
        return self._cancel(self)

    def watch(self, callback: Callable[[Run], object]) -> None:
        """Call `callback` with the run each time its state changes (now, if it is done)."""
        if self.done:
            callback(self)
        else:
            self._watchers.append(callback)

    async def wait(self) -> Run:
        """Wait for the run to be done (a cancel is no exception here: see `cancelled`)."""
        await self._done.wait()
        return self

    def __await__(self) -> Generator[Any, None, Run]:
        return self.wait().__await__()

    def set_state(self, state: RunState) -> None:
        """Move to `state` and tell the watchers (the controller's to call)."""
        if self.done:
            return
        self.state = state
        if state == "done":
            self._done.set()
        for callback in list(self._watchers):
            callback(self)
