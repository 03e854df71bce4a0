"""A custom command's !`command` spans: run before its prompt is sent, their output in its place.

Each runs as a `!COMMAND` prompt does (`turns.shell.run_shell_command`): the permission rules,
the approval dialog when nothing else decides, the OS sandbox. The command file's
`allowed-tools` entries (`Bash(git status:*)`) are allow rules for these runs only, gone once the
prompt is expanded. A project's command is the repository's text: its spans run only once the
project is trusted; until then each line holding one is left out, with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui_assist.session.slash_commands import SHELL_SPAN, CustomCommand

if TYPE_CHECKING:
    from tui_assist.core.events import TurnEvent
    from tui_assist.core.observer import ApprovalDecision, ToolApproval, TurnObserver
    from tui_assist.session.chat import ChatSession


@dataclass(frozen=True, slots=True)
class CommandPrompt:
    """What a custom command sends: the expanded text, on which model, and what to warn about."""

    text: str
    model: str | None = None
    warnings: list[str] = field(default_factory=lambda: list[str]())


async def expand_command(
    session: ChatSession, custom: CustomCommand, arguments: str, observer: TurnObserver
) -> CommandPrompt:
    """The prompt `/NAME arguments` sends, its !`command` spans replaced by their output.

    Args:
        session: Whose rules, approvals, sandbox and project trust apply.
        custom: The command.
        arguments: What followed its name.
        observer: Asked to approve a span's command when no rule decides (its events are not
            shown: the output is in the prompt, which is).
    """
    text = custom.expand(arguments)
    if not SHELL_SPAN.search(text):
        return CommandPrompt(text, custom.model, list(custom.notes))
    name = f"/{custom.command.name}"
    extensions = session.extensions
    if custom.project and (extensions is None or not extensions.trusted):
        from tui_assist.session.extensions import TRUST_HINT

        kept = [line for line in text.split("\n") if not SHELL_SPAN.search(line)]
        left_out = text.count("\n") + 1 - len(kept)
        warning = (
            f"{name} ({custom.path}): {left_out} line(s) with a !`command` left out: the project is "
            f"not trusted ({TRUST_HINT})"
        )
        return CommandPrompt("\n".join(kept).strip(), custom.model, [*custom.notes, warning])
    from tui_assist.core.permissions import Rule, RuleError, RuleSource
    from tui_assist.turns.shell import run_shell_command

    permissions = session.approvals.permissions
    source = RuleSource(f"allowed-tools of {name}", custom.path)
    warnings = list(custom.notes)
    rules: list[Rule] = []
    for text_rule in custom.bash_rules():
        try:
            rules.append(Rule.parse(text_rule, "allow", source))
        except RuleError as exc:
            warnings.append(f"{name} ({custom.path}): {exc}; not used")
    permissions.rules.extend(rules)
    quiet = _ApprovalsOnly(observer)
    factory = session.toolbox_factory
    pieces: list[str] = []
    end = 0
    try:
        for match in SHELL_SPAN.finditer(text):
            output, failed = await run_shell_command(match[1], factory, session.approvals, quiet)
            if failed:
                first = output.strip().splitlines()[0] if output.strip() else "no output"
                warnings.append(f"{name}: !`{match[1]}` failed: {first[:200]}")
            pieces += [text[end : match.start()], output.rstrip()]
            end = match.end()
    finally:
        permissions.rules = [rule for rule in permissions.rules if rule not in rules]
    pieces.append(text[end:])
    return CommandPrompt("".join(pieces), custom.model, warnings)


class _ApprovalsOnly:
    """The host's observer for its approvals; the span's own events are not shown."""

    def __init__(self, observer: TurnObserver) -> None:
        self._observer = observer

    def on_event(self, event: TurnEvent) -> None:
        """Not shown: there is no turn to show it under yet."""

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        return await self._observer.approve(request)
