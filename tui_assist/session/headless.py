"""The observer of headless runs: short progress lines on stderr, no questions asked."""

from __future__ import annotations

import sys
from typing import TextIO

from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    VerdictReached,
)
from tui_assist.core.observer import ApprovalDecision, ToolApproval


class HeadlessObserver:
    """Prints progress when asked to, and denies approvals (the policy decides `--yes` itself)."""

    def __init__(self, *, progress: bool, out: TextIO | None = None) -> None:
        self._progress = progress
        self._out = out or sys.stderr
        self._compactions: set[str] = set()
        self._hooks: dict[str, str] = {}

    def on_event(self, event: TurnEvent) -> None:
        """Print one progress line for rounds, tool calls, verdicts, compactions and blocking hooks."""
        if not self._progress:
            return
        match event:
            case NodeStarted(node_kind="round", label=label):
                self._write(f"── {label}")
            case NodeStarted(node_kind="compact", node_id=node_id):
                self._compactions.add(node_id)
            case NodeFinished(node_id=node_id, output=output) if node_id in self._compactions and output:
                self._write(f"  ⇣ {output}")
            case NodeStarted(node_kind="hook", node_id=node_id, label=label):
                self._hooks[node_id] = label
            case NodeFinished(node_id=node_id, outcome="blocked") if node_id in self._hooks:
                self._write(f"  ⊘ {self._hooks[node_id]}: blocked")
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


def _short(data: dict[str, object]) -> str:
    value = data.get("command") or data.get("path") or data.get("description") or ""
    text = " ".join(str(value).split())
    return text[:100]
