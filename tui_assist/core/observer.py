"""The observer: the one way the core talks to its host.

The core reports facts (`on_event`) and asks questions that need an answer (`approve`) through
this protocol and never decides how either is shown. A TUI, a headless CLI, the store and a test
are all observers; `FanOutObserver` lets several listen to one turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tui_assist.core.conversation import Usage
from tui_assist.core.events import StreamRetried, TextDelta, ThinkingDelta, TurnEvent, UsageRecorded

SandboxUse = Literal["off", "sandboxed", "escape"]
"""How a call would run: no sandbox on its tool, inside the OS sandbox, or asking to leave it."""

DecisionKind = Literal["allow_once", "allow_session", "allow_pattern", "deny", "deny_feedback", "stop"]


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """What the host answered to a `ToolApproval`.

    Build one with the class methods: `ApprovalDecision.allow_once()`, `.deny("...")`, ...
    """

    kind: DecisionKind
    text: str = ""
    """For `deny`: the host's words for what happened (e.g. "the user denied this call"; a headless
    host says how to allow it). For `deny_feedback`: the user's line for the model."""

    @classmethod
    def allow_once(cls) -> ApprovalDecision:
        """Run this call."""
        return cls("allow_once")

    @classmethod
    def allow_session(cls) -> ApprovalDecision:
        """Run this call and, for the rest of the session, calls the proposed rules cover."""
        return cls("allow_session")

    @classmethod
    def allow_pattern(cls) -> ApprovalDecision:
        """Run this call and save the proposed rules to the project's settings."""
        return cls("allow_pattern")

    @classmethod
    def deny(cls, reason: str = "") -> ApprovalDecision:
        """Refuse the call; `reason` says what happened, in the host's words."""
        return cls("deny", reason)

    @classmethod
    def deny_with_feedback(cls, feedback: str) -> ApprovalDecision:
        """Refuse the call and tell the model `feedback` instead."""
        return cls("deny_feedback", feedback)

    @classmethod
    def stop(cls) -> ApprovalDecision:
        """Refuse the call; the host stops the turn (in the TUI: escape)."""
        return cls("stop")


@dataclass(frozen=True, slots=True)
class ToolApproval:
    """A side-effecting tool call waiting for a person's decision."""

    node_id: str
    tool: str
    input: dict[str, Any]
    summary: str
    """What will happen, exactly: the shell command, or the file diff."""
    workdir: Path | None = None
    """The anchored working directory of the call (for `edit` rules and the dialog)."""
    sandbox: SandboxUse = "off"
    """Whether the call runs inside the OS sandbox."""
    mcp_server: str | None = None
    """For an MCP tool: its server's name in the config."""
    mcp_tool: str | None = None
    """For an MCP tool: its name on the server."""
    read_only: bool = False
    """The call only reads, yet asks because of where it reads (`web_fetch`): `plan` lets it be
    allowed by a rule or the user instead of refusing it."""
    proposed_rules: tuple[str, ...] = ()
    """What `allow_session` and `allow_pattern` would add (filled in by the policy before asking)."""
    reason: str = ""
    """Why the policy asks, one line (e.g. "runs outside the sandbox"); may be empty."""


class TurnObserver(Protocol):
    """What a strategy needs from its host."""

    def on_event(self, event: TurnEvent) -> None:
        """Receive one event. Must not block: hosts queue or post it."""
        ...

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Decide whether a side-effecting tool call may run."""
        ...


class NullObserver:
    """Ignores events and denies every approval."""

    def on_event(self, event: TurnEvent) -> None:
        """Ignore the event."""

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Deny: nobody is there to ask."""
        return ApprovalDecision.deny("no one was there to approve this call")


@dataclass
class RecordingObserver:
    """Keeps every event and answers approvals with a fixed decision (for tests and replays)."""

    decision: ApprovalDecision = field(default_factory=ApprovalDecision.allow_once)
    events: list[TurnEvent] = field(default_factory=lambda: list[TurnEvent]())
    approvals: list[ToolApproval] = field(default_factory=lambda: list[ToolApproval]())

    def on_event(self, event: TurnEvent) -> None:
        """Record the event."""
        self.events.append(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Record the request and answer with `decision`."""
        self.approvals.append(request)
        return self.decision

    @property
    def kinds(self) -> list[str]:
        """The `kind` of every event so far, in order."""
        return [e.kind for e in self.events]


class FanOutObserver:
    """Sends every event to several observers; the first one answers approvals."""

    def __init__(self, primary: TurnObserver, *others: TurnObserver) -> None:
        self._observers = (primary, *others)

    def on_event(self, event: TurnEvent) -> None:
        """Forward the event to every observer, in order."""
        for observer in self._observers:
            observer.on_event(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Ask the primary observer."""
        return await self._observers[0].approve(request)


class NodeSink:
    """A provider's stream callbacks as events of one node (dropped without an observer or node)."""

    __slots__ = ("_node_id", "_observer")

    def __init__(self, observer: TurnObserver | None, node_id: str | None) -> None:
        self._observer = observer if node_id is not None else None
        self._node_id = node_id or ""

    def text(self, delta: str) -> None:
        """Report a text delta of the node."""
        if self._observer is not None:
            self._observer.on_event(TextDelta(node_id=self._node_id, text=delta))

    def thinking(self, delta: str) -> None:
        """Report a thinking delta of the node."""
        if self._observer is not None:
            self._observer.on_event(ThinkingDelta(node_id=self._node_id, text=delta))

    def retrying(self, attempt: int, error: str) -> None:
        """Report that the node's stream restarts."""
        if self._observer is not None:
            self._observer.on_event(StreamRetried(node_id=self._node_id, attempt=attempt, error=error))

    def usage(self, usage: Usage, model: str) -> None:
        """Report what a cancelled call of the node spent."""
        if self._observer is not None:
            self._observer.on_event(UsageRecorded(node_id=self._node_id, usage=usage, model=model, cut=True))
