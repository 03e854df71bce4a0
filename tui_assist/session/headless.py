"""The host of headless runs (`ask`, `bench strategies`): progress lines on stderr, no questions asked."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TextIO

from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    VerdictReached,
)
from tui_assist.core.observer import ApprovalDecision, ToolApproval, TurnObserver
from tui_assist.core.tree import NodeLog
from tui_assist.session.controller import QuietHost

if TYPE_CHECKING:
    from tui_assist.session.controller import TurnController
    from tui_assist.session.slash_commands import SlashInput


class HeadlessObserver:
    """Prints progress when asked to, and denies approvals (the policy decides `--yes` itself)."""

    def __init__(self, *, progress: bool, out: TextIO | None = None) -> None:
        self._progress = progress
        self._out = out or sys.stderr
        self.log = NodeLog(max_turns=8)
        """The fold of the events shown (when showing progress): what a node is, it is asked."""

    def on_event(self, event: TurnEvent) -> None:
        """Print one progress line for rounds, tool calls, verdicts, compactions and blocking hooks."""
        if not self._progress:
            return
        record = self.log.apply(event)
        match event:
            case NodeStarted(node_kind="round", label=label):
                self._write(f"── {label}")
            case NodeFinished(output=output) if record is not None and record.kind == "compact" and output:
                self._write(f"  ⇣ {output}")
            case NodeFinished(outcome="blocked") if record is not None and record.kind == "hook":
                self._write(f"  ⊘ {record.label}: blocked")
            case ToolCallStarted(name=name, input=input_):
                self._write(f"  → {name} {_short(input_)}")
            case ToolCallFinished(is_error=True, name=name, output=output):
                self._write(f"  ✗ {name}: {output.splitlines()[0] if output else ''}")
            case VerdictReached(verdict=verdict, feedback=feedback):
                self._write(f"  critic: {verdict.upper()} {feedback.splitlines()[0] if feedback else ''}")
            case _:
                pass

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Deny: headless runs approve through `--yes` or rules, never by asking."""
        return ApprovalDecision.deny(
            f"this {request.tool} call needs approval and a headless run cannot ask; "
            "re-run with --yes, or add an allow rule to [permissions] in config.toml"
        )

    def _write(self, line: str) -> None:
        print(line[:200], file=self._out, flush=True)


class HeadlessHost(HeadlessObserver, QuietHost):
    """A controller's host with no screen: it keeps how the turn ended, and what a command said."""

    def __init__(
        self, *, progress: bool, out: TextIO | None = None, observer: TurnObserver | None = None
    ) -> None:
        """Print progress lines to `out` (stderr) when `progress`; or report to `observer` instead."""
        super().__init__(progress=progress, out=out)
        self._observer = observer
        self.controller: TurnController | None = None
        """Set by whoever builds the controller: headless commands run through it."""
        self.command_output: str | None = None
        """What the last command said (Markdown), when the prompt was one."""

    @property
    def turn_observer(self) -> TurnObserver:
        """The observer given, else itself: progress lines, and no questions asked."""
        return self._observer or self

    def run_command(self, call: SlashInput, text: str) -> Callable[[], Awaitable[None]]:
        """Run a built-in that needs no screen (see `session.commands.run_headless`)."""
        return lambda: self._run_command(call)

    async def _run_command(self, call: SlashInput) -> None:
        from tui_assist.session.commands import run_headless

        assert self.controller is not None, "the controller sets itself as the host's"
        self.command_output = await run_headless(self.controller, call.name, call.args)


def _short(data: dict[str, object]) -> str:
    value = data.get("command") or data.get("path") or data.get("description") or ""
    text = " ".join(str(value).split())
    return text[:100]
