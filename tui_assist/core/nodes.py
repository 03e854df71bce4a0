"""Node scopes: one place that pairs every `NodeStarted` and `ToolCallStarted` with its ending."""

from __future__ import annotations

import asyncio
import time
import uuid
from types import TracebackType
from typing import Any

from tui_assist.core.events import (
    FileDiff,
    NodeFinished,
    NodeKind,
    NodeStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from tui_assist.core.observer import TurnObserver


def new_id() -> str:
    """A fresh, unique node id."""
    return uuid.uuid4().hex[:16]


class NodeScope:
    """Emits `NodeStarted` on entry and exactly one `NodeFinished` on exit.

    Leaving by exception reports `cancelled` (for `CancelledError`) or `failed`; leaving normally
    reports what `finish` set, or plain `done`.
    """

    def __init__(
        self,
        observer: TurnObserver,
        node_kind: NodeKind,
        label: str,
        parent_id: str | None,
        *,
        detail: str = "",
        node_id: str | None = None,
    ) -> None:
        self.observer = observer
        self.node_id = node_id or new_id()
        self._started = NodeStarted(
            node_id=self.node_id, parent_id=parent_id, node_kind=node_kind, label=label, detail=detail
        )
        self._outcome: str | None = None
        self._output = ""
        self._error: str | None = None

    def finish(self, *, outcome: str | None = None, output: str = "", error: str | None = None) -> None:
        """Set what the node's `NodeFinished` will report; `error` marks it failed."""
        self._outcome, self._output, self._error = outcome, output, error

    def __enter__(self) -> NodeScope:
        self.observer.on_event(self._started)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            event = NodeFinished(
                node_id=self.node_id, status="cancelled", outcome="cancelled", output=self._output
            )
        elif exc is not None:
            event = NodeFinished(
                node_id=self.node_id, status="failed", outcome="error", error=str(exc) or repr(exc)
            )
        elif self._error is not None:
            event = NodeFinished(
                node_id=self.node_id,
                status="failed",
                outcome=self._outcome,
                output=self._output,
                error=self._error,
            )
        else:
            event = NodeFinished(node_id=self.node_id, outcome=self._outcome, output=self._output)
        self.observer.on_event(event)


class ToolCallScope:
    """Emits `ToolCallStarted` on entry and exactly one `ToolCallFinished` on exit.

    Wherever a tool runs (the agent, a flow's own tool loop) the pair comes from here, so no call
    is left open in the tree or the store. Leaving by `CancelledError` reports the error result
    `cancelled`; leaving by another exception reports its message as an error result (the
    exception goes on); leaving normally reports what `finish` set (an empty result if nothing).
    After exit, `output`, `is_error` and `duration` hold what was reported.
    """

    def __init__(
        self,
        observer: TurnObserver,
        parent_id: str,
        call_id: str,
        name: str,
        input: dict[str, Any],
        *,
        node_id: str | None = None,
    ) -> None:
        self.observer = observer
        self.node_id = node_id or new_id()
        self.call_id = call_id
        self.name = name
        self._started = ToolCallStarted(
            node_id=self.node_id, parent_id=parent_id, call_id=call_id, name=name, input=input
        )
        self.output = ""
        self.is_error = False
        self.diff: FileDiff | None = None
        self.duration = 0.0
        self._clock = 0.0

    def finish(self, output: str, *, is_error: bool = False, diff: FileDiff | None = None) -> None:
        """Set the result the call's `ToolCallFinished` will report (with an editor write's diff)."""
        self.output, self.is_error, self.diff = output, is_error, diff

    def __enter__(self) -> ToolCallScope:
        self.observer.on_event(self._started)
        self._clock = time.monotonic()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.duration = time.monotonic() - self._clock
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            self.output, self.is_error = "cancelled", True
        elif exc is not None:
            self.output, self.is_error = str(exc) or repr(exc), True
        self.observer.on_event(
            ToolCallFinished(
                node_id=self.node_id,
                call_id=self.call_id,
                name=self.name,
                output=self.output,
                is_error=self.is_error,
                duration=self.duration,
                diff=self.diff,
            )
        )
