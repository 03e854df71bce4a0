"""The hooks that run before a turn starts: what they add to its prompt, and their events shown inside it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tui_assist.core.events import NodeStarted
from tui_assist.core.observer import RecordingObserver

if TYPE_CHECKING:
    from tui_assist.core.events import TurnEvent
    from tui_assist.core.observer import ApprovalDecision, ToolApproval, TurnObserver
    from tui_assist.session.hooks import SessionHooks


class AfterTurnStart:
    """Passes events on; right after the turn's node starts, also those of the hooks run before it.

    Their root nodes are moved under the turn's node, so a host sees one tree per turn.
    """

    def __init__(self, inner: TurnObserver, turn_id: str, before: list[TurnEvent]) -> None:
        self._inner = inner
        self._turn_id = turn_id
        self._before: list[TurnEvent] | None = before

    def on_event(self, event: TurnEvent) -> None:
        """Pass the event on (after the turn's start, the hooks' before it)."""
        self._inner.on_event(event)
        if self._before is not None and isinstance(event, NodeStarted) and event.node_id == self._turn_id:
            before, self._before = self._before, None
            for earlier in before:
                if isinstance(earlier, NodeStarted) and earlier.parent_id is None:
                    earlier = replace(earlier, parent_id=self._turn_id)
                self._inner.on_event(earlier)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Ask the observer passed on to."""
        return await self._inner.approve(request)


class TurnHookContext:
    """What the `SessionStart` and `UserPromptSubmit` hooks say for the next turn, until it starts."""

    def __init__(self) -> None:
        self.session_started: str | None = "startup"
        """The `SessionStart` source still to run for this conversation (None: it ran)."""
        self._pending: tuple[str, str, list[TurnEvent]] | None = None
        """What `UserPromptSubmit` hooks said for the next prompt: (prompt, context, their events)."""

    def forget(self) -> None:
        """No prompt's hooks ran yet (a new prompt is on its way)."""
        self._pending = None

    async def prompt_submitted(self, hooks: SessionHooks, session_id: str | None, prompt: str) -> None:
        """Run the `UserPromptSubmit` hooks for `prompt` (see `ChatSession.prompt_hooks`)."""
        hooks.session_id = session_id
        hooks.turn_id = None
        seen = RecordingObserver()
        context = await hooks.prompt_submit(prompt, seen)
        self._pending = (prompt, context, seen.events)

    async def context(
        self, hooks: SessionHooks | None, session_id: str | None, prompt: str, sent: str, turn_id: str
    ) -> tuple[str, list[TurnEvent]]:
        """`sent` with what the `SessionStart` (first turn) and `UserPromptSubmit` hooks said.

        Their events come back too, to show under the turn's node (they ran before it started).
        """
        from tui_assist.session.hooks import with_context

        pending, self._pending = self._pending, None
        if hooks is None:
            return sent, []
        seen = RecordingObserver()
        if pending is not None and pending[0] == prompt:
            seen.events.extend(pending[2])
        hooks.session_id = session_id
        hooks.turn_id = turn_id
        if self.session_started is not None:
            source, self.session_started = self.session_started, None
            sent = with_context(sent, await hooks.session_start(seen, source), "SessionStart")
        if pending is not None and pending[0] == prompt:
            sent = with_context(sent, pending[1], "UserPromptSubmit")
        return sent, seen.events
