"""The approval policy: whether a side-effecting tool call runs, is refused, or needs a person.

One policy lives as long as a session: it holds the mode (cycled with shift+tab in the TUI), the
permission rules (the user's, the project's, and those allowed "for this session"). For each
call the first of these that applies decides:

1. a deny rule that matches (deny beats allow, in every mode);
2. the mode `plan`: nothing side-effecting runs, and the model is told to read and propose (a
   call that only reads but still asks, `web_fetch`, goes on to the rules and the user);
3. the mode `bypass` (what `--yes` does): everything else runs;
4. a call asking to leave the OS sandbox (`"sandbox": false`): always asks;
5. an allow rule that covers the whole call;
6. the mode `accept-edits`: text-editor writes inside the workdir run;
7. a shell command that runs inside the OS sandbox (it cannot change anything outside the
   workdir) and that the parser can read;
8. the `[approval]` settings of older configs: `rules` per tool (`allow`/`deny` act like rules
   with the tool's name, `ask` only overrides `default`), then `default` (`ask`, `allow`,
   `deny`), which is `ask` unless set;
9. otherwise the host is asked (`TurnObserver.approve`).

A `PreToolUse` hook's `permissionDecision` joins in (`check(hook_permission=...)`): `allow` decides
right after the deny rules and plan mode, `ask` skips steps 3-8; before the host is asked, the
caller's `before_asking` (the `PermissionRequest` hooks) may answer in the person's place.

The text the model gets for a refusal says what happened. When the person refused, the words are
the host's (`ApprovalDecision.deny(reason)`), so the TUI never talks about headless flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from tui_assist.core.observer import SandboxUse, ToolApproval, TurnObserver

if TYPE_CHECKING:
    from tui_assist.core.hooks import HookPermission
    from tui_assist.core.permissions import Permissions
    from tui_assist.core.tooling import Tool

# `core.permissions` (the rules and the shell parser behind them) is imported where a call is
# checked, not here: every session builds a policy before the TUI paints its first screen.

__all__ = [
    "MODES",
    "ApprovalMode",
    "ApprovalOutcome",
    "ApprovalPolicy",
    "FallbackAction",
    "McpBackedTool",
    "ReadingTool",
    "Refusal",
    "SandboxedTool",
    "approval_request",
    "describe_mode",
]

ApprovalMode = Literal["default", "accept-edits", "plan", "bypass"]
"""`default` asks; `accept-edits` runs editor writes in the workdir; `plan` runs nothing
side-effecting; `bypass` runs everything that no deny rule forbids."""
MODES: tuple[ApprovalMode, ...] = ("default", "accept-edits", "plan", "bypass")

FallbackAction = Literal["ask", "allow", "deny"]
"""The `[approval]` settings: what happens to a call nothing else decided."""

PLAN_MESSAGE = (
    "Not run: plan mode is on, so no tool that changes files or runs commands may run. "
    "Read what you need (viewing files works) and propose a plan; the user will switch modes to carry it out."
)

_MODE_DESCRIPTIONS: dict[ApprovalMode, str] = {
    "default": "asks before side-effecting calls",
    "accept-edits": "file edits in the workdir run without asking",
    "plan": "read-only: side-effecting calls are refused",
    "bypass": "every call runs unless a deny rule forbids it",
}


def describe_mode(mode: ApprovalMode) -> str:
    """One line on what a mode does (for the status bar or `/permissions`)."""
    return _MODE_DESCRIPTIONS[mode]


@runtime_checkable
class SandboxedTool(Protocol):
    """A tool whose calls may run inside an OS sandbox (the `bash` tool)."""

    def sandbox_use(self, args: Any) -> SandboxUse:
        """How this call would run: `off`, `sandboxed`, or `escape` (asks to run outside)."""
        ...


@runtime_checkable
class McpBackedTool(Protocol):
    """A tool that lives on an MCP server (for `mcp__SERVER__TOOL` rules)."""

    @property
    def server(self) -> str:
        """The server's name in the config."""
        ...

    @property
    def remote_name(self) -> str:
        """The tool's name on its server."""
        ...


@runtime_checkable
class ReadingTool(Protocol):
    """A tool whose calls change nothing but still pass the approval policy (`web_fetch`)."""

    def read_only(self, args: Any) -> bool:
        """Whether this call only reads (so `plan` mode does not refuse it)."""
        ...


def approval_request(
    tool: Tool, args: Any, *, name: str, raw_input: dict[str, Any], node_id: str, workdir: Path | None
) -> ToolApproval:
    """The approval request for one parsed call, with what rules need to know about it.

    Args:
        tool: The tool.
        args: Its parsed arguments.
        name: The tool's name as the model called it.
        raw_input: The input the model sent.
        node_id: The call's node.
        workdir: The anchored working directory.

    Returns:
        The request (its `proposed_rules` and `reason` are filled in by the policy when it asks).
    """
    server = tool.server if isinstance(tool, McpBackedTool) else None
    remote = tool.remote_name if isinstance(tool, McpBackedTool) else None
    return ToolApproval(
        node_id=node_id,
        tool=name,
        input=raw_input,
        summary=tool.summary(args),
        workdir=workdir,
        sandbox=tool.sandbox_use(args) if isinstance(tool, SandboxedTool) else "off",
        mcp_server=server,
        mcp_tool=remote,
        read_only=tool.read_only(args) if isinstance(tool, ReadingTool) else False,
    )


def may_change_files(tool: Tool, args: Any) -> bool:
    """Whether a call could change the workdir: a side-effecting call, or any MCP tool's.

    An MCP server's tools run in another process whose effects nothing here can see, so even a
    trusted server's calls count (conservatively) as changing files.

    Args:
        tool: The tool.
        args: Its parsed arguments.
    """
    return tool.side_effecting(args) or isinstance(tool, McpBackedTool)


@dataclass(frozen=True, slots=True)
class ApprovalOutcome:
    """The policy's answer for one call."""

    allowed: bool
    why: str
    """What decided, one line: `rule bash(ls *) (project ...)`, `sandbox`, `the user`, ..."""
    message: str = ""
    """When refused: the tool result the model sees."""
    stop_turn: bool = False
    """The user chose to stop the turn; the host stops it."""
    asked: bool = False
    """Whether the host was asked."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A call the policy refused: the tool, a one-line summary of the call, and what decided."""

    tool: str
    summary: str
    why: str


class ApprovalPolicy:
    """Decides whether a side-effecting tool call may run; one per session.

    Args:
        default: `[approval] default`: what happens to a call nothing else decided.
        rules: `[approval] rules`: per tool name, `ask`, `allow` or `deny`.
        mode: The starting mode.
        permissions: The permission rules (`Permissions.load(...)`); none when omitted.
        notify: Called with a one-line message when a rule is saved, or cannot be.
        trust_sandbox: Whether a shell command that runs inside the OS sandbox runs without
            asking. Off for a headless run without `--yes`, whose contract is to refuse every
            side-effecting call that no rule allows.
    """

    def __init__(
        self,
        default: FallbackAction = "ask",
        rules: Mapping[str, FallbackAction] | None = None,
        *,
        mode: ApprovalMode = "default",
        permissions: Permissions | None = None,
        notify: Callable[[str], None] | None = None,
        trust_sandbox: bool = True,
    ) -> None:
        self.default: FallbackAction = default
        self.trust_sandbox = trust_sandbox
        self.rules: dict[str, FallbackAction] = dict(rules or {})
        self.mode: ApprovalMode = mode
        """The current mode: the status bar shows it, `next_mode()` cycles it."""
        self._permissions = permissions
        self._notify = notify
        self._cycle: tuple[ApprovalMode, ...] = MODES if mode == "bypass" else MODES[:3]
        self.refused: list[Refusal] = []
        """Every call refused so far, in order (hosts report them: `ask --json` `denied_calls`)."""

    @property
    def permissions(self) -> Permissions:
        """The permission rules (an empty set when the policy was built without them)."""
        if self._permissions is None:
            from tui_assist.core.permissions import Permissions

            self._permissions = Permissions()
        return self._permissions

    def next_mode(self) -> ApprovalMode:
        """Switch to the next mode and return it.

        The cycle is default -> accept-edits -> plan -> default; `bypass` joins it only when the
        session started in it (a key press should never switch every check off).
        """
        index = self._cycle.index(self.mode) if self.mode in self._cycle else -1
        self.mode = self._cycle[(index + 1) % len(self._cycle)]
        return self.mode

    async def check(
        self,
        request: ToolApproval,
        observer: TurnObserver,
        *,
        hook_permission: Literal["allow", "ask"] | None = None,
        before_asking: Callable[[], Awaitable[HookPermission | None]] | None = None,
    ) -> ApprovalOutcome:
        """Decide whether the call runs, asking the host when nothing else decides.

        A refused call is also kept in `refused`.

        Args:
            request: The call (see `approval_request`).
            observer: The host, asked through `approve()` when needed.
            hook_permission: A `PreToolUse` hook's decision: `allow` runs the call unless a deny
                rule or plan mode refuses it; `ask` asks even when a rule or mode would allow it.
            before_asking: Awaited when the host would be asked; its answer, if any, stands instead.

        Returns:
            Whether it runs, and if not, the tool result for the model.
        """
        outcome = await self._check(request, observer, hook_permission, before_asking)
        if not outcome.allowed:
            summary = request.summary.strip().splitlines()[0] if request.summary.strip() else request.tool
            why = "not approved" if outcome.asked else outcome.why
            self.refused.append(Refusal(request.tool, summary, why))
        return outcome

    async def _check(
        self,
        request: ToolApproval,
        observer: TurnObserver,
        hook_permission: Literal["allow", "ask"] | None,
        before_asking: Callable[[], Awaitable[HookPermission | None]] | None,
    ) -> ApprovalOutcome:
        tool = request.tool
        denial = self.permissions.denial(request)
        if denial is not None:
            rule, subject = denial
            what = f"`{subject}`" if subject != tool else f"this {tool} call"
            message = f"Denied: the deny rule {rule.text} ({rule.source}) forbids {what}."
            return ApprovalOutcome(False, f"rule {rule.text}", message)
        if self.rules.get(tool) == "deny":
            return ApprovalOutcome(
                False, "[approval] rules", f"Denied: {tool} is denied by the [approval] settings."
            )
        if self.mode == "plan" and not request.read_only:
            return ApprovalOutcome(False, "mode plan", PLAN_MESSAGE)
        if hook_permission == "allow":
            return ApprovalOutcome(True, "a PreToolUse hook")
        if hook_permission != "ask":
            if self.mode == "bypass":
                return ApprovalOutcome(True, "mode bypass")
            if request.sandbox != "escape":
                decided = self._decide_without_asking(request)
                if decided is not None:
                    return decided
        if before_asking is not None:
            answered = await before_asking()
            if answered is not None and answered.allowed:
                return ApprovalOutcome(True, "a PermissionRequest hook")
            if answered is not None:
                why = answered.message.strip().rstrip(".") or f"this {tool} call was not approved"
                return ApprovalOutcome(
                    False, "a PermissionRequest hook", f"Denied by a PermissionRequest hook: {why}."
                )
        return await self._ask(request, observer)

    def _decide_without_asking(self, request: ToolApproval) -> ApprovalOutcome | None:
        tool = request.tool
        rule = self.permissions.allowing(request)
        if rule is not None:
            return ApprovalOutcome(True, f"rule {rule.text} ({rule.source})")
        if self.rules.get(tool) == "allow":
            return ApprovalOutcome(True, "[approval] rules")
        if self.mode == "accept-edits" and self.permissions.is_workdir_edit(request):
            return ApprovalOutcome(True, "mode accept-edits")
        if self.trust_sandbox and request.sandbox == "sandboxed" and _readable_command(request):
            return ApprovalOutcome(True, "sandbox")
        fallback = self.rules.get(tool, self.default)
        if fallback == "allow":
            return ApprovalOutcome(True, "[approval] default")
        if fallback == "deny":
            return ApprovalOutcome(
                False, "[approval] default", f"Denied: {tool} is denied by the [approval] settings."
            )
        return None

    async def _ask(self, request: ToolApproval, observer: TurnObserver) -> ApprovalOutcome:
        proposal = self.permissions.propose(request)
        asked = dataclasses.replace(request, proposed_rules=proposal, reason=self._reason(request))
        decision = await observer.approve(asked)
        tool = request.tool
        match decision.kind:
            case "allow_once":
                return ApprovalOutcome(True, "the user", asked=True)
            case "allow_session":
                self._remember(proposal, save=False)
                return ApprovalOutcome(True, "the user (this session)", asked=True)
            case "allow_pattern":
                self._remember(proposal, save=True)
                return ApprovalOutcome(True, "the user (saved rule)", asked=True)
            case "deny_feedback":
                message = (
                    f"Denied: the user did not approve this {tool} call and said:\n{decision.text.strip()}"
                )
                return ApprovalOutcome(False, "the user", message, asked=True)
            case "stop":
                message = f"Denied: the user did not approve this {tool} call and stopped the turn."
                return ApprovalOutcome(False, "the user", message, stop_turn=True, asked=True)
            case "deny":
                reason = decision.text.strip().rstrip(".") or f"the user did not approve this {tool} call"
                return ApprovalOutcome(False, "the user", f"Denied: {reason}.", asked=True)

    def _remember(self, proposal: tuple[str, ...], *, save: bool) -> None:
        from tui_assist.core.permissions import PermissionsError, RuleError

        if not proposal:
            return
        try:
            if save:
                rules = self.permissions.save(proposal)
                where = rules[0].source.path if rules else None
                self._say(f"saved allow {', '.join(proposal)} to {where}")
                return
        except (PermissionsError, RuleError) as exc:
            self._say(f"could not save {', '.join(proposal)}: {exc}; allowed for this session instead")
        try:
            self.permissions.allow_for_session(proposal)
        except RuleError as exc:  # a proposal is always a valid rule; kept for safety
            self._say(f"could not remember {', '.join(proposal)}: {exc}")

    def _reason(self, request: ToolApproval) -> str:
        from tui_assist.core.permissions import bash_analysis

        if request.sandbox == "escape":
            return "asks to run outside the sandbox: full access to your files and the network"
        analysis = bash_analysis(request)
        if analysis is None or not analysis.commands:
            return ""
        if not analysis.parsed:
            return "too complex to check against your rules: read it carefully"
        if analysis.writes:
            return f"writes to {', '.join(analysis.writes)}"
        uncovered = self.permissions.uncovered(request)
        if uncovered and len(analysis.commands) > 1:
            return f"no rule allows: {'; '.join(uncovered)}"
        return ""

    def _say(self, line: str) -> None:
        if self._notify is not None:
            self._notify(line)


def _readable_command(request: ToolApproval) -> bool:
    """Whether the parser can read the call's command (one that cannot is never run unasked)."""
    from tui_assist.core.permissions import bash_analysis

    analysis = bash_analysis(request)  # only the shell runs sandboxed; `restart` alone has no command
    return analysis is None or analysis.parsed
