"""The approval policy for side-effecting tool calls.

Rules come from config (per tool: ask / allow / deny); "allow for the session" answers are
remembered here, so one policy object lives as long as a session does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from tui_assist.core.observer import ToolApproval, TurnObserver

ApprovalMode = Literal["ask", "allow", "deny"]

DENIED_MESSAGE = (
    "Denied: the user did not approve this {tool} call. Side-effecting tools need approval; "
    "in headless mode re-run with --yes to allow them, or set [approval] rules in config.toml."
)


class ApprovalPolicy:
    """Decides whether a side-effecting tool call may run."""

    def __init__(
        self, default: ApprovalMode = "ask", rules: Mapping[str, ApprovalMode] | None = None
    ) -> None:
        self.default: ApprovalMode = default
        self.rules: dict[str, ApprovalMode] = dict(rules or {})
        self.session_allowed: set[str] = set()

    def mode_for(self, tool: str) -> ApprovalMode:
        """The mode that applies to `tool` right now."""
        if tool in self.session_allowed:
            return "allow"
        return self.rules.get(tool, self.default)

    async def check(self, request: ToolApproval, observer: TurnObserver) -> str | None:
        """Ask (if needed) whether the call may run.

        Returns:
            None when allowed, else the message the model gets as the tool result.
        """
        mode = self.mode_for(request.tool)
        if mode == "ask":
            decision = await observer.approve(request)
            if decision == "allow_session":
                self.session_allowed.add(request.tool)
            mode = "deny" if decision == "deny" else "allow"
        return None if mode == "allow" else DENIED_MESSAGE.format(tool=request.tool)
