"""The chat's slash commands: the built-ins' handlers, running a `/` prompt, and its completion.

The commands themselves (name, arguments, help) are declared once, in `session/commands.py`; this
module gives the chat's handler of each slash command declared there (`@handles(NAME)` above an
`async` or plain function of a `CommandContext` and the text after the name: the session, its
controller and the chat's few verbs, not the screen, see `ui/command_context.py`). A handler
raises `CommandError` for a mistake the user should fix (one line, shown above the prompt, with
the prompt text put back); a coroutine function runs in a worker. What it reports goes to the
conversation pane (`context.add_notice`) or a toast (`context.notify`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.core.text import CompletionSpan
from tui_assist.paths import config_dir, data_dir
from tui_assist.session.commands import SLASH, CommandError, cost_markdown, parse_refine, parse_rounds
from tui_assist.session.slash_commands import SlashCommand, SlashInput, closest, matching
from tui_assist.ui.command_context import CommandContext, ScreenContext
from tui_assist.ui.widgets.completion import CompletionItem

if TYPE_CHECKING:
    from tui_assist.ui.screens.main import MainScreen

Handler = Callable[[CommandContext, str], Awaitable[None] | None]

__all__ = ["CommandError", "SlashCommands", "SlashCompletion", "handles"]

HANDLERS: dict[str, Handler] = {}
"""The chat's handler of each built-in slash command, by name."""


def handles(name: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the chat's handler of the built-in `/name`."""
    if name not in SLASH:
        raise LookupError(f"/{name} is not declared in session/commands.py")

    def register(handler: Handler) -> Handler:
        HANDLERS[name] = handler
        return handler

    return register


# -- running a command -----------------------------------------------------------------------------


class SlashCommands:
    """What the main screen knows about commands: the built-ins and the custom ones on disk."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.context: CommandContext = ScreenContext(screen)
        """What the handlers are given."""

    def all_commands(self) -> list[SlashCommand]:
        custom = self.screen.session.custom_commands().commands
        return [*SLASH.commands, *(c.command for c in custom.values())]

    def run(self, call: SlashInput, text: str) -> None:
        """Run the built-in command `call` (typed as `text`), or say why it can't run.

        (An unknown name never gets here: the controller refuses it, in every host alike.)
        """
        handler = HANDLERS[call.name]
        try:
            result = handler(self.context, call.args)
        except CommandError as exc:
            self.refuse(text, str(exc))
            return
        if result is not None:
            self.screen.run_worker(self._finish(text, result), group="slash-command", exit_on_error=False)

    async def _finish(self, text: str, pending: Awaitable[None]) -> None:
        try:
            await pending
        except CommandError as exc:
            self.refuse(text, str(exc))

    def refuse(self, text: str, message: str) -> None:
        """Say why `text` did not run, and give it back for editing (unless something else was typed)."""
        prompt = self.screen.prompt
        if not prompt.text.strip():
            prompt.restore(text)
        prompt.show_error(message)


class SlashCompletion:
    """Completes a command name typed at the start of the prompt (`/he` -> `/help`)."""

    def __init__(self, commands: SlashCommands) -> None:
        self.commands = commands

    def span_at(self, text: str, cursor: int) -> CompletionSpan | None:
        if not text.startswith("/") or cursor == 0:
            return None
        end = next((i for i, char in enumerate(text) if char.isspace()), len(text))
        if cursor > end:
            return None
        return CompletionSpan(0, end, text[1:cursor])

    def items(self, span: CompletionSpan) -> list[CompletionItem]:
        return [
            CompletionItem(
                f"/{command.name} ",
                command.usage,
                command.description + ("" if command.source == "built-in" else f" ({command.origin})"),
                submit_on_enter=not command.needs_arguments,
            )
            for command in matching(span.query, self.commands.all_commands())
        ]


# -- the built-ins ---------------------------------------------------------------------------------


@handles("help")
def _help(context: CommandContext, args: str) -> None:
    commands = context.commands()
    width = max(len(c.usage) for c in commands)
    lines = ["**Commands**", "", "```text"]
    for command in commands:
        source = "" if command.source == "built-in" else f" ({command.origin})"
        lines.append(f"{command.usage:<{width}}  {command.description}{source}")
    lines += ["```", "", "**Keys**", "", "```text"]
    keys = context.keys()
    key_width = max((len(k) for k, _, _ in keys), default=0)
    what_width = max((len(w) for _, w, _ in keys), default=0)
    lines += [f"{key:<{key_width}}  {what:<{what_width}}  {binding_id}" for key, what, binding_id in keys]
    lines += [
        "```",
        "",
        "Keys are remapped by binding id in the `[keymap]` table of the config file. Custom commands"
        " are Markdown files in `.tui-assist/commands/` and `.claude/commands/` (in the workdir),"
        f" `{config_dir() / 'commands'}` and `~/.claude/commands/`; `$ARGUMENTS` is replaced by what"
        " follows the name, `$1`...`$9` by its words.",
    ]
    problems = context.session.custom_commands().problems
    if problems:
        lines += ["", "**Command files not (wholly) used**", ""] + [f"- `{p}`" for p in problems]
    context.add_notice("\n".join(lines), at_top=True)  # it opens at its start: the commands


@handles("new")
def _new(context: CommandContext, args: str) -> None:
    context.new_conversation()


@handles("resume")
def _resume(context: CommandContext, args: str) -> None:
    context.resume_conversation(args)


@handles("model")
def _model(context: CommandContext, args: str) -> None:
    from tui_assist.core.claude_names import resolve_model
    from tui_assist.ui.model_completion import offered_models

    session = context.session
    if not args:
        lines = [f"- `{m}`{'  (in use)' if m == session.model else ''}" for m in offered_models(session)]
        context.add_notice("**Models** (`/model NAME` switches)\n\n" + "\n".join(lines))
        return
    args = resolve_model(args) or args.strip()  # an alias's current id, else the name as written
    if not session.ready:
        raise CommandError("the provider is still loading; try again in a moment")
    if context.controller.running:
        raise CommandError("a turn is running: switch the model when it ends (or escape it first)")
    from tui_assist.session.factory import SetupError

    try:
        session.set_model(args)
    except SetupError as exc:
        raise CommandError(f"cannot switch the model: {exc}") from exc
    context.model_switched(args)
    price = session.price(args)
    cost = f", ${price.input:g}/${price.output:g} per M tokens" if price else ", no price: cost unknown"
    context.notify(f"Model: {args} (from the next turn{cost})", timeout=2)


@handles("refine")
def _refine(context: CommandContext, args: str) -> None:
    on = parse_refine(args, context.session.refine)
    if args and on == context.session.refine:
        context.notify(f"Refine is already {args.upper()}", timeout=1.5)
    else:
        context.set_refine(on)


@handles("rounds")
def _rounds(context: CommandContext, args: str) -> None:
    context.set_rounds(parse_rounds(args))


@handles("cost")
def _cost(context: CommandContext, args: str) -> None:
    context.add_notice(cost_markdown(context.session.meter))


@handles("budget")
def _budget(context: CommandContext, args: str) -> None:
    from tui_assist.session.spend_cap import budget_command

    try:
        line = budget_command(context.session, args)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    context.meter_changed()
    context.notify(line, timeout=3)


@handles("export")
async def _export(context: CommandContext, args: str) -> None:
    from tui_assist.session.export import ExportError, write_export

    words = shlex.split(args) if args else []
    fmt = "md"
    if words and words[0] in ("md", "json"):
        fmt = words.pop(0)
    if len(words) > 1:
        raise CommandError("usage: /export [md|json] [PATH]")
    session = context.session
    if words:
        path = session.settings.workdir / Path(words[0]).expanduser()
    else:
        stamp = datetime.fromtimestamp(time.time()).strftime("%Y%m%d-%H%M%S")
        path = data_dir(session.settings.data_dir) / "exports" / f"conversation-{stamp}.{fmt}"
    try:
        document = await session.export(fmt)
    except ExportError as exc:
        raise CommandError(str(exc)) from exc
    try:
        write_export(path, document)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
    context.notify(f"Exported to {path}", timeout=4)


@handles("theme")
def _theme(context: CommandContext, args: str) -> None:
    names = context.theme_names
    if not args:
        lines = [f"- `{name}`{'  (in use)' if name == context.theme else ''}" for name in names]
        context.add_notice("**Themes** (`/theme NAME` switches)\n\n" + "\n".join(lines))
        return
    if args not in names:
        guess = closest(args, names)
        raise CommandError(f"unknown theme {args!r}" + (f": did you mean {guess}?" if guess else ""))
    context.switch_theme(args)


@handles("hooks")
def _hooks(context: CommandContext, args: str) -> None:
    from tui_assist.session.extensions import hooks_markdown

    context.add_notice(hooks_markdown(context.session.extensions))


@handles("agents")
def _agents(context: CommandContext, args: str) -> None:
    from tui_assist.session.extensions import agents_markdown

    context.add_notice(agents_markdown(context.session.extensions))


@handles("skills")
def _skills(context: CommandContext, args: str) -> None:
    from tui_assist.session.extensions import skills_markdown

    context.add_notice(skills_markdown(context.session.extensions))


@handles("tasks")
def _tasks(context: CommandContext, args: str) -> None:
    from tui_assist.ui.screens.tasks import TasksScreen

    context.push_screen(TasksScreen(context.session.shells))


@handles("memory")
def _memory(context: CommandContext, args: str) -> None:
    from tui_assist.session.instructions import describe

    files = context.session.load_instructions().files
    if not args:
        if not files:
            context.add_notice(
                "**Instructions** · none loaded. Put an `AGENTS.md` in the workdir (or the git root) "
                f"or in `{config_dir()}`."
            )
            return
        lines = [f"{i}. `{line}`" for i, line in enumerate(describe(files), 1)]
        context.add_notice(
            "**Instructions** given to the model (`/memory N` opens one in your editor)\n\n"
            + "\n".join(lines)
        )
        return
    if not args.isdigit() or not 1 <= int(args) <= len(files):
        count = len(files)
        raise CommandError(f"usage: /memory N, with N from 1 to {count}" if count else "no instruction files")
    edit_file(context, files[int(args) - 1].path)


def edit_file(context: CommandContext, path: Path) -> None:
    """Open `path` in `$VISUAL` / `$EDITOR` (else `vi`), with the app suspended meanwhile."""
    from textual.app import SuspendNotSupported

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        with context.suspend():
            completed = subprocess.run([*shlex.split(editor), str(path)], check=False)
    except SuspendNotSupported as exc:
        raise CommandError("cannot open an editor here: the terminal can't be handed over") from exc
    except OSError as exc:
        raise CommandError(f"cannot run the editor {editor!r}: {exc.strerror or exc} (set $EDITOR)") from exc
    if completed.returncode != 0:
        context.notify(f"{editor} exited with status {completed.returncode}", severity="warning")


@handles("compact")
async def _compact(context: CommandContext, args: str) -> None:
    from tui_assist.session.commands import compact

    context.add_notice(await compact(context.controller, args), classes="-compacted")


@handles("rename")
async def _rename(context: CommandContext, args: str) -> None:
    from tui_assist.session.factory import SetupError

    try:
        title = await context.session.rename(args)
    except (ValueError, SetupError) as exc:
        raise CommandError(f"cannot rename: {exc}") from exc
    context.notify(f"Renamed: {title}", timeout=2)


@handles("permissions")
def _permissions(context: CommandContext, args: str) -> None:
    from tui_assist.core.approval import describe_mode
    from tui_assist.core.permissions import PermissionsError

    policy = context.session.approvals
    rules = policy.permissions.rules
    words = args.split()
    if words:
        if len(words) != 2 or words[0] != "remove" or not words[1].isdigit():
            raise CommandError("usage: /permissions, or /permissions remove N")
        index = int(words[1])
        if not 1 <= index <= len(rules):
            raise CommandError(f"there is no rule {index} (see /permissions)")
        rule = rules[index - 1]
        try:
            policy.permissions.remove(rule)
        except PermissionsError as exc:
            raise CommandError(f"cannot remove {rule.text}: {exc}") from exc
        context.notify(f"Removed {rule.effect} {rule.text} ({rule.source})", timeout=3)
        return
    lines = [
        f"- **Mode:** `{policy.mode}`: {describe_mode(policy.mode)} (shift+tab cycles it)",
        f"- **Bash:** {context.session.sandbox_description}",
        "",
    ]
    for i, rule in enumerate(rules, 1):
        waits = "" if policy.permissions.in_effect(rule) else " · waits for you to trust the project"
        lines.append(f"{i}. {rule.effect} `{rule.text}` · {rule.source}{waits}")
    if not rules:
        lines.append("No rules yet: `p` in an approval dialog saves one to this project.")
    else:
        lines += ["", "`/permissions remove N` removes rule N (from its file too)."]
    context.add_notice("\n".join(lines))


@handles("rewind")
def _rewind(context: CommandContext, args: str) -> None:
    context.open_rewind()


@handles("quit")
def _quit(context: CommandContext, args: str) -> None:
    context.exit()


@handles("goal")
def _goal(context: CommandContext, args: str) -> None:
    from tui_assist.session.goals import goal_status, start_goal

    prompt = start_goal(context.session.goals, args, running=context.controller.running)
    if prompt is None:
        context.add_notice(goal_status(context.session.goals))
    else:
        context.submit(prompt)
