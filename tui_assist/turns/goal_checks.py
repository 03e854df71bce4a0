"""Running a goal's checks: each command as `!COMMAND` runs it, asked about once per goal.

A check is a `bash` call through the ordinary path (deny rules, plan mode, hooks, the sandbox,
the tool-call events), so the tree shows it and the rules hold it. What a person answered for a
check command when the goal started stands for the rest of the goal: `ChecksApprover` answers
the same question again in the person's place, and asks nothing else itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.events import TurnEvent
from tui_assist.core.goal import CheckResult, check_result
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import ApprovalDecision, ToolApproval, TurnObserver
from tui_assist.core.tool_labels import BASH_TOOL
from tui_assist.core.tooling import ToolboxFactory
from tui_assist.turns.shell import NO_SHELL, run_shell_command


class ChecksApprover:
    """The host as an observer, except that a check command approved once is not asked again."""

    def __init__(self, commands: Sequence[str]) -> None:
        self.commands = frozenset(commands)
        self.approved: set[str] = set()
        """Check commands the person let run during this goal."""
        self.host: TurnObserver | None = None

    def over(self, host: TurnObserver) -> ChecksApprover:
        """This approver in front of `host` (the observer the goal reports to)."""
        self.host = host
        return self

    def on_event(self, event: TurnEvent) -> None:
        """Pass the event on to the host."""
        assert self.host is not None
        self.host.on_event(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        """Allow an approved check again without asking; ask the host about anything else."""
        assert self.host is not None
        command = request.summary.strip()
        if request.tool == BASH_TOOL and command in self.approved:
            return ApprovalDecision.allow_once()
        decision = await self.host.approve(request)
        if request.tool == BASH_TOOL and command in self.commands and decision.kind.startswith("allow"):
            self.approved.add(command)
        return decision


async def run_checks(
    commands: Sequence[str],
    *,
    toolbox_factory: ToolboxFactory,
    approvals: ApprovalPolicy,
    observer: ChecksApprover,
    parent_id: str,
    before_side_effect: Callable[[], Awaitable[None]] | None = None,
) -> list[CheckResult]:
    """Run every check in order under a `checks` node of `parent_id`, each in a fresh shell.

    Returns:
        One result per command, in order (a refused one has no exit code and `refused` set).
    """
    results: list[CheckResult] = []
    with NodeScope(observer, "step", "checks", parent_id, detail="\n".join(commands)) as node:
        for index, command in enumerate(commands, 1):
            refused_before = len(approvals.refused)
            output, failed = await run_shell_command(
                command,
                toolbox_factory,
                approvals,
                observer,
                parent_id=node.node_id,
                label=f"check {index}",
                before_side_effect=before_side_effect,
            )
            # Refused by the rules or the person, or no shell to run it in: the goal is blocked.
            refused = len(approvals.refused) > refused_before or (failed and output == NO_SHELL)
            results.append(check_result(command, output, is_error=failed, refused=refused))
        failing = [
            f"check {i} " + ("did not run" if r.exit_code is None else f"exited {r.exit_code}")
            for i, r in enumerate(results, 1)
            if not r.passed
        ]
        # A failing check shows as a failed node, its exit code beside it in the tree.
        summary = f"{len(results) - len(failing)}/{len(results)} passed"
        node.finish(
            outcome="failed" if failing else "passed", output=summary, error="; ".join(failing) or None
        )
    return results
