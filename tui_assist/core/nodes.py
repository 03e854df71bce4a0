"""Node scopes: one place that pairs every `NodeStarted` with its ending event."""

from __future__ import annotations

import asyncio
import uuid
from types import TracebackType

from tui_assist.core.events import NodeFinished, NodeKind, NodeStarted
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
