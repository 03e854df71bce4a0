"""Every command a host offers, declared once.

A command is what the user can ask for by name: a slash command (`/refine on`), a key, a
palette entry, or several of these at once. `COMMANDS` declares each one here, without a UI: its
name and arguments, what it does, and whether it makes sense without a screen. Hosts build from
it what they show: the TUI its slash completion and `/help`, and (from its own table of keys,
screen actions and palette titles by command name, `ui/command_bindings.py`) its key bindings
and palette; the ACP agent the commands it lists to the editor. Each host supplies the handlers
(the TUI's are in `ui/slash_commands.py`), so a name means the same thing everywhere.

The commands that make sense without a screen (`headless`) also have their effect here, as plain
functions of the session (`run_headless`), so the TUI, the ACP agent and `ask` share them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_assist.session.config_source import MAX_ROUNDS
from tui_assist.session.slash_commands import CommandRegistry, SlashCommand

if TYPE_CHECKING:
    from tui_assist.session.controller import TurnController
    from tui_assist.session.meter import Meter


@dataclass(frozen=True, slots=True)
class Command:
    """One command: how it is typed and described (each host binds it its own way)."""

    name: str
    """Its name: `/NAME` when `slash`, and the id its handlers and bindings are registered under."""
    description: str
    args: str = ""
    """How its arguments are written (`[on|off]`, `N`), for `/help` and completion."""
    slash: bool = True
    """Whether it can be typed as `/NAME` (a host handler registered under `name` runs it)."""
    headless: bool = False
    """Whether it makes sense without a screen (the ACP agent lists it; see `run_headless`)."""

    @property
    def slash_command(self) -> SlashCommand:
        """The command as slash completion and `/help` show it."""
        return SlashCommand(self.name, self.args, self.description)


COMMANDS: tuple[Command, ...] = (
    Command("help", "Commands and keys"),
    Command("new", "Start a new conversation"),
    Command("resume", "Open a stored conversation (the picker, filtered by QUERY)", "[QUERY]"),
    Command("model", "Switch the model for the following turns; without NAME, list the models", "[NAME]"),
    Command("refine", "Turn Refine mode on or off (no argument: toggle)", "[on|off]", headless=True),
    Command("rounds", f"Set the Refine round budget (1-{MAX_ROUNDS})", "N", headless=True),
    Command(
        "goal",
        "Work on TEXT until the critic, running the checks itself, says it is met (resume: go on)",
        '[TEXT [--check "CMD"]... [--max-attempts N] | resume]',
        headless=True,
    ),
    Command("cost", "Tokens and cost of this session, by model and by kind", headless=True),
    Command(
        "budget",
        "Cap what this conversation may spend, in USD (off: no cap; no N: show it)",
        "[N|off]",
        headless=True,
    ),
    Command("export", "Write the conversation to a file (Markdown or JSON)", "[md|json] [PATH]"),
    Command(
        "compact",
        "Summarise the older history now (the last turn stays verbatim)",
        "[INSTRUCTIONS]",
        headless=True,
    ),
    Command("theme", "Switch the theme; without NAME, list the themes", "[NAME]"),
    Command("permissions", "The approval mode and every allow/deny rule with its source", "[remove N]"),
    Command("rename", "Rename the conversation", "NAME"),
    Command(
        "hooks",
        "The hooks that run at session points and tool calls, and where they come from",
        headless=True,
    ),
    Command("agents", "The custom sub-agents the model can hand a task to", headless=True),
    Command("skills", "The skills the model can load (SKILL.md folders)", headless=True),
    Command(
        "tasks", "The background shells (status, runtime, last line); kill one from the list", headless=True
    ),
    Command("memory", "List the loaded instruction files (AGENTS.md); /memory N opens one in $EDITOR", "[N]"),
    Command("rewind", "Go back to before a turn: its files, the conversation, or both"),
    Command("quit", "Quit tui-assist"),
    # Commands a screen offers as keys and palette entries only, not typed.
    Command("cancel", "Cancel the running turn", slash=False),
    Command("mode", "Cycle the approval mode: default -> accept-edits -> plan", slash=False),
    Command("tree", "Show or hide the agent tree", slash=False),
    Command("flow", "Show or hide the flow panel", slash=False),
    Command("review", "Open the latest round's transcript", slash=False),
    Command("copy", "Copy the selected message, else the last answer", slash=False),
    Command("copy-last", "Copy the last answer to the clipboard", slash=False),
    Command("find", "Search the conversation", slash=False),
    Command("retry", "Send the prompt that failed again", slash=False),
    Command("grounded", "Answer a question from a folder of documents, with citations", slash=False),
    Command("approve-flow", "Release the held grounded run", slash=False),
    Command("explore", "Open the Workflow Explorer", slash=False),
    Command("mcp", "MCP servers, their state and their tools", slash=False),
    Command("mcp-restart", "Restart every configured MCP server", slash=False),
)
"""Every command, in the order `/help`, the completion list and the palette show them."""

BY_NAME: dict[str, Command] = {command.name: command for command in COMMANDS}

SLASH: CommandRegistry[Command] = CommandRegistry()
"""The built-in slash commands (their names can't be taken by a custom command)."""
for _command in COMMANDS:
    if _command.slash:
        SLASH.register(_command.slash_command, _command)


# -- the commands that make sense without a screen ---------------------------------------------


class CommandError(Exception):
    """A command can't run as typed; the message is one line for the user."""


async def run_headless(controller: TurnController, name: str, args: str) -> str:
    """Run a command that needs no screen, and return what it says (Markdown).

    Args:
        controller: The host's controller (its session; `/compact` is metered through it).
        name: The command's name (one whose `headless` is true).
        args: What follows the name.

    Raises:
        CommandError: for a mistake the user should fix, or a name that is not headless.
    """
    session = controller.session
    match name:
        case "refine":
            session.refine = parse_refine(args, session.refine)
            return f"Refine {'ON' if session.refine else 'OFF'} (≤{session.rounds} rounds)"
        case "rounds":
            session.rounds = parse_rounds(args)
            return f"Refine round budget: {session.rounds}"
        case "cost":
            return cost_markdown(session.meter)
        case "budget":
            from tui_assist.session.spend_cap import budget_command

            try:
                line = budget_command(session, args)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            controller.host.meter_changed()
            return line
        case "compact":
            return await compact(controller, args)
        case "goal":
            from tui_assist.session.goals import run_goal

            return await run_goal(controller, args)
        case "hooks" | "agents" | "skills":
            from tui_assist.session.extensions import agents_markdown, hooks_markdown, skills_markdown

            shown = {"hooks": hooks_markdown, "agents": agents_markdown, "skills": skills_markdown}
            return shown[name](session.extensions)
        case "tasks":
            from tui_assist.session.tasks import tasks_markdown

            return tasks_markdown(session.shells)
        case _:
            raise CommandError(f"/{name} needs the chat screen")


def parse_refine(args: str, current: bool) -> bool:
    """Whether Refine is on after `/refine [on|off]` (no argument toggles `current`).

    Raises:
        CommandError: for any other argument.
    """
    wanted = args.lower()
    if wanted not in ("", "on", "off"):
        raise CommandError("usage: /refine [on|off]")
    return not current if wanted == "" else wanted == "on"


def parse_rounds(args: str) -> int:
    """The round budget `/rounds N` asks for.

    Raises:
        CommandError: when N is not a whole number in range.
    """
    if not args.isdigit() or not 1 <= int(args) <= MAX_ROUNDS:
        raise CommandError(f"usage: /rounds N (a whole number from 1 to {MAX_ROUNDS})")
    return int(args)


async def compact(controller: TurnController, instructions: str) -> str:
    """Summarise the older history now (`/compact [INSTRUCTIONS]`), as a run; the line to show.

    Raises:
        CommandError: when a run is under way, there is no provider, or the summariser fails.
    """
    run = controller.start("compact", "/compact", lambda: _compact_now(controller, instructions))
    if run is None:
        raise CommandError("a turn is running: compact when it ends")
    await run
    if isinstance(run.error, CommandError):
        raise run.error
    if run.error is not None:
        raise CommandError(f"cannot compact: {run.error}") from run.error
    if run.cancelled:
        return "Compact cancelled: the history is as it was."
    return str(run.value)


async def _compact_now(controller: TurnController, instructions: str) -> str:
    from tui_assist.core.budget import BudgetExhausted
    from tui_assist.core.model import ProviderError
    from tui_assist.session.factory import SetupError

    try:
        report = await controller.session.compact(instructions.strip() or None, controller.observer)
    except (SetupError, ProviderError, BudgetExhausted, RuntimeError) as exc:
        raise CommandError(f"cannot compact: {exc}") from exc
    return f"⇣ {report.notice}" if report else "Nothing to compact yet: the latest turn stays verbatim."


def cost_markdown(meter: Meter) -> str:
    """The session's spend as a table: one row per model and kind, then the total."""
    lines = meter.lines()
    if not lines:
        return "**Cost** · no model calls in this session yet."
    rows = ["| model | kind | tokens | cost |", "|---|---|--:|--:|"]
    for line in lines:
        cost = "unknown" if line.cost is None else f"${line.cost:.4f}"
        rows.append(f"| `{line.model}` | {line.kind} | {line.tokens:,} | {cost} |")
    usage = meter.usage
    total = "unknown (a model has no price)" if meter.cost is None else f"${meter.cost:.4f}"
    tokens = usage.total_input_tokens + usage.output_tokens
    rows.append(f"| **total** | | **{tokens:,}** | **{total}** |")
    return "**Cost of this session**\n\n" + "\n".join(rows)
