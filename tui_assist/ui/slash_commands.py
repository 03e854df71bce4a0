"""The chat's slash commands: the built-ins' handlers, running a `/` prompt, and its completion.

Adding a command is one entry here (or in a module imported here):

    @slash("rename", "NAME", "Rename the conversation")
    async def _rename(screen: MainScreen, args: str) -> None:
        ...

A handler gets the main screen and the text after the name. It raises `CommandError` for a
mistake the user should fix (one line, shown above the prompt, with the prompt text put back);
it may be a coroutine function (it then runs in a worker). What it reports goes to the
conversation pane (`screen.conversation.add_notice`) or a toast (`screen.notify`).
"""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.paths import config_dir, data_dir
from tui_assist.session.config_source import MAX_ROUNDS
from tui_assist.session.slash_commands import (
    CommandRegistry,
    CustomCommandLoader,
    SlashCommand,
    closest,
    matching,
    parse_slash,
)
from tui_assist.ui.widgets.completion import CompletionItem, CompletionSpan

if TYPE_CHECKING:
    from tui_assist.session.meter import Meter
    from tui_assist.ui.screens.main import MainScreen

Handler = Callable[["MainScreen", str], Awaitable[None] | None]


class CommandError(Exception):
    """A command can't run as typed; the message is one line for the user."""


BUILTINS: CommandRegistry[Handler] = CommandRegistry()
"""The built-in commands, in the order `/help` and the completion list show them."""


def slash(name: str, args: str = "", description: str = "") -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of the built-in `/name`."""

    def register(handler: Handler) -> Handler:
        BUILTINS.register(SlashCommand(name, args, description), handler)
        return handler

    return register


# -- running a command -----------------------------------------------------------------------------


class SlashCommands:
    """What the main screen knows about commands: the built-ins and the custom ones on disk."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self._loader: CustomCommandLoader | None = None

    @property
    def loader(self) -> CustomCommandLoader:
        session = self.screen.session
        workdir = session.settings.workdir if session.ready else session.preview.workdir
        if self._loader is None or self._loader.folders[0][0].parent.parent != workdir:
            self._loader = CustomCommandLoader(workdir, config_dir(), reserved=BUILTINS.names)
        return self._loader

    def all_commands(self) -> list[SlashCommand]:
        custom = self.loader.load().commands
        return [*BUILTINS.commands, *(c.command for c in custom.values())]

    def run(self, text: str) -> None:
        """Run the command `text` (a prompt starting with `/`)."""
        screen = self.screen
        call = parse_slash(text)
        assert call is not None
        entry = BUILTINS.get(call.name)
        if entry is not None:
            _, handler = entry
            try:
                result = handler(screen, call.args)
            except CommandError as exc:
                self.refuse(text, str(exc))
                return
            if result is not None:
                screen.run_worker(self._finish(text, result), group="slash-command", exit_on_error=False)
            return
        loaded = self.loader.load()
        custom = loaded.commands.get(call.name)
        if custom is not None:
            screen.send_prompt(custom.expand(call.args))
            return
        names = [*BUILTINS.names, *loaded.commands]
        guess = closest(call.name, names)
        if not call.name:
            why = "type a command name after /"
        else:
            why = f"unknown command /{call.name}" + (f": did you mean /{guess}?" if guess else "")
        self.refuse(text, f"{why} (/help lists the commands)")

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
                command.description + ("" if command.source == "built-in" else f" ({command.source})"),
                submit_on_enter=not command.needs_arguments,
            )
            for command in matching(span.query, self.commands.all_commands())
        ]


# -- the built-ins ---------------------------------------------------------------------------------


@slash("help", "", "Commands and keys")
def _help(screen: MainScreen, args: str) -> None:
    commands = screen.slash.all_commands()
    width = max(len(c.usage) for c in commands)
    lines = ["**Commands**", "", "```text"]
    for command in commands:
        source = "" if command.source == "built-in" else f" ({command.source})"
        lines.append(f"{command.usage:<{width}}  {command.description}{source}")
    lines += ["```", "", "**Keys**", "", "```text"]
    keys = key_help(screen)
    key_width = max((len(k) for k, _, _ in keys), default=0)
    what_width = max((len(w) for _, w, _ in keys), default=0)
    lines += [f"{key:<{key_width}}  {what:<{what_width}}  {binding_id}" for key, what, binding_id in keys]
    lines += [
        "```",
        "",
        "Keys are remapped by binding id in the `[keymap]` table of the config file. Custom commands"
        " are Markdown files in `.tui-assist/commands/` (in the workdir) and"
        f" `{config_dir() / 'commands'}`; `$ARGUMENTS` is replaced by what follows the name.",
    ]
    problems = screen.slash.loader.load().problems
    if problems:
        lines += ["", "**Skipped command files**", ""] + [f"- `{p}`" for p in problems]
    screen.conversation.add_notice("\n".join(lines))


def key_help(screen: MainScreen) -> list[tuple[str, str, str]]:
    """The chat's own keys where the focus is now, the keymap applied: (keys, what, binding id)."""
    keys: dict[str, tuple[list[str], str]] = {}
    for _, bindings in screen._binding_chain:
        for _, binding in bindings:
            if binding.id and binding.description:
                shown, _ = keys.setdefault(binding.id, ([], binding.description))
                if (key := screen.app.get_key_display(binding)) not in shown:
                    shown.append(key)
    return [(" / ".join(shown), what, binding_id) for binding_id, (shown, what) in keys.items()]


@slash("new", "", "Start a new conversation")
def _new(screen: MainScreen, args: str) -> None:
    screen.action_new_conversation()


@slash("resume", "[QUERY]", "Open a stored conversation (the picker, filtered by QUERY)")
def _resume(screen: MainScreen, args: str) -> None:
    screen.action_resume_conversation(query=args)


@slash("model", "[NAME]", "Switch the model for the following turns; without NAME, list the models")
def _model(screen: MainScreen, args: str) -> None:
    session = screen.session
    if not args:
        lines = [f"- `{m}`{'  (in use)' if m == session.model else ''}" for m in session.known_models()]
        screen.conversation.add_notice("**Models** (`/model NAME` switches)\n\n" + "\n".join(lines))
        return
    if not session.ready:
        raise CommandError("the provider is still loading; try again in a moment")
    if screen.running:
        raise CommandError("a turn is running: switch the model when it ends (or escape it first)")
    from tui_assist.session.factory import SetupError

    try:
        session.set_model(args)
    except SetupError as exc:
        raise CommandError(f"cannot switch the model: {exc}") from exc
    screen.status.model = args
    screen.notify(f"Model: {args} (from the next turn)", timeout=2)


@slash("refine", "[on|off]", "Turn Refine mode on or off (no argument: toggle)")
def _refine(screen: MainScreen, args: str) -> None:
    wanted = args.lower()
    if wanted not in ("", "on", "off"):
        raise CommandError("usage: /refine [on|off]")
    if wanted == "" or (wanted == "on") != screen.session.refine:
        screen.action_toggle_refine()
    else:
        screen.notify(f"Refine is already {wanted.upper()}", timeout=1.5)


@slash("rounds", "N", f"Set the Refine round budget (1-{MAX_ROUNDS})")
def _rounds(screen: MainScreen, args: str) -> None:
    if not args.isdigit() or not 1 <= int(args) <= MAX_ROUNDS:
        raise CommandError(f"usage: /rounds N (a whole number from 1 to {MAX_ROUNDS})")
    screen.set_rounds(int(args))


@slash("cost", "", "Tokens and cost of this session, by model and by kind")
def _cost(screen: MainScreen, args: str) -> None:
    screen.conversation.add_notice(cost_markdown(screen.session.meter))


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


@slash("export", "[md|json] [PATH]", "Write the conversation to a file (Markdown or JSON)")
async def _export(screen: MainScreen, args: str) -> None:
    from tui_assist.store.commands import history_export

    words = shlex.split(args) if args else []
    fmt = "md"
    if words and words[0] in ("md", "json"):
        fmt = words.pop(0)
    if len(words) > 1:
        raise CommandError("usage: /export [md|json] [PATH]")
    session = screen.session
    if session.conversation_id is None and not session.conversation.messages:
        raise CommandError("nothing to export yet: this conversation has no turns")
    workdir = session.settings.workdir
    if words:
        path = workdir / Path(words[0]).expanduser()
    else:
        stamp = datetime.fromtimestamp(time.time()).strftime("%Y%m%d-%H%M%S")
        path = data_dir(session.settings.data_dir) / "exports" / f"conversation-{stamp}.{fmt}"
    out, err = io.StringIO(), io.StringIO()
    if session.store is not None and session.conversation_id is not None:
        if await history_export(session.store, session.conversation_id, out, fmt=fmt, err=err) != 0:
            raise CommandError(f"cannot export: {err.getvalue().strip()}")
    elif fmt == "md":
        out.write(session.export_markdown())
    else:
        raise CommandError("JSON export needs the stored history, which is not available")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(out.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
    screen.notify(f"Exported to {path}", timeout=4)


@slash("theme", "[NAME]", "Switch the theme; without NAME, list the themes")
def _theme(screen: MainScreen, args: str) -> None:
    app = screen.tui_app
    names = app.theme_names
    if not args:
        lines = [f"- `{name}`{'  (in use)' if name == app.theme else ''}" for name in names]
        screen.conversation.add_notice("**Themes** (`/theme NAME` switches)\n\n" + "\n".join(lines))
        return
    if args not in names:
        guess = closest(args, names)
        raise CommandError(f"unknown theme {args!r}" + (f": did you mean {guess}?" if guess else ""))
    app.switch_theme(args)


@slash("hooks", "", "List the hooks that run at session points and tool calls, and where they come from")
def _hooks(screen: MainScreen, args: str) -> None:
    from tui_assist.paths import config_file

    found = screen.session.extensions
    lines = found.hook_lines(config_file()) if found is not None else []
    if not lines:
        screen.conversation.add_notice(
            "**Hooks** · none. Add `[[hooks.PreToolUse]]` tables (`command`, `matcher`, `timeout`) to "
            f"`{config_file()}` or to the project's `.tui-assist/settings.toml`."
        )
        return
    screen.conversation.add_notice("**Hooks**\n\n" + "\n".join(f"- `{line}`" for line in lines))


@slash("agents", "", "List the custom sub-agents the model can hand a task to")
def _agents(screen: MainScreen, args: str) -> None:
    found = screen.session.extensions
    lines = found.agent_lines() if found is not None else []
    if not lines:
        screen.conversation.add_notice(
            "**Agents** · none. Put Markdown files with front matter (`name`, `description`, `tools`, "
            f"`model`) in `.tui-assist/agents/`, `.claude/agents/` or `{config_dir() / 'agents'}`."
        )
        return
    screen.conversation.add_notice("**Agents**\n\n" + "\n".join(f"- `{line}`" for line in lines))


@slash("memory", "[N]", "List the loaded instruction files (AGENTS.md); /memory N opens one in $EDITOR")
def _memory(screen: MainScreen, args: str) -> None:
    from tui_assist.session.instructions import describe

    files = screen.session.load_instructions().files
    if not args:
        if not files:
            screen.conversation.add_notice(
                "**Instructions** · none loaded. Put an `AGENTS.md` in the workdir (or the git root) "
                f"or in `{config_dir()}`."
            )
            return
        lines = [f"{i}. `{line}`" for i, line in enumerate(describe(files), 1)]
        screen.conversation.add_notice(
            "**Instructions** given to the model (`/memory N` opens one in your editor)\n\n"
            + "\n".join(lines)
        )
        return
    if not args.isdigit() or not 1 <= int(args) <= len(files):
        count = len(files)
        raise CommandError(f"usage: /memory N, with N from 1 to {count}" if count else "no instruction files")
    edit_file(screen, files[int(args) - 1].path)


def edit_file(screen: MainScreen, path: Path) -> None:
    """Open `path` in `$VISUAL` / `$EDITOR` (else `vi`), with the app suspended meanwhile."""
    from textual.app import SuspendNotSupported

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        with screen.app.suspend():
            completed = subprocess.run([*shlex.split(editor), str(path)], check=False)
    except SuspendNotSupported as exc:
        raise CommandError("cannot open an editor here: the terminal can't be handed over") from exc
    except OSError as exc:
        raise CommandError(f"cannot run the editor {editor!r}: {exc.strerror or exc} (set $EDITOR)") from exc
    if completed.returncode != 0:
        screen.notify(f"{editor} exited with status {completed.returncode}", severity="warning")


@slash("compact", "[INSTRUCTIONS]", "Summarise the older history now (the last turn stays verbatim)")
async def _compact(screen: MainScreen, args: str) -> None:
    from tui_assist.core.model import ProviderError
    from tui_assist.session.factory import SetupError
    from tui_assist.ui.bridge import TextualObserver

    if screen.running:
        raise CommandError("a turn is running: compact when it ends")
    session = screen.session
    try:
        report = await session.compact(args.strip() or None, TextualObserver(screen, screen.app))
    except (SetupError, ProviderError, RuntimeError) as exc:
        raise CommandError(f"cannot compact: {exc}") from exc
    notice = f"⇣ {report.notice}" if report else "Nothing to compact yet: the latest turn stays verbatim."
    screen.conversation.add_notice(notice, classes="-compacted")
    screen.status.context = session.context_fill


@slash("rename", "NAME", "Rename the conversation")
async def _rename(screen: MainScreen, args: str) -> None:
    from tui_assist.session.factory import SetupError

    try:
        title = await screen.session.rename(args)
    except (ValueError, SetupError) as exc:
        raise CommandError(f"cannot rename: {exc}") from exc
    screen.notify(f"Renamed: {title}", timeout=2)


@slash("permissions", "[remove N]", "The approval mode and every allow/deny rule with its source")
def _permissions(screen: MainScreen, args: str) -> None:
    from tui_assist.core.approval import describe_mode
    from tui_assist.core.permissions import PermissionsError

    policy = screen.session.approvals
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
        screen.notify(f"Removed {rule.effect} {rule.text} ({rule.source})", timeout=3)
        return
    lines = [
        f"- **Mode:** `{policy.mode}`: {describe_mode(policy.mode)} (shift+tab cycles it)",
        f"- **Bash:** {screen.session.sandbox_description}",
        "",
    ]
    lines += [f"{i}. {rule.effect} `{rule.text}` · {rule.source}" for i, rule in enumerate(rules, 1)]
    if not rules:
        lines.append("No rules yet: `p` in an approval dialog saves one to this project.")
    else:
        lines += ["", "`/permissions remove N` removes rule N (from its file too)."]
    screen.conversation.add_notice("\n".join(lines))


@slash("rewind", "", "Go back to before a turn: its files, the conversation, or both")
def _rewind(screen: MainScreen, args: str) -> None:
    screen.open_rewind()


@slash("quit", "", "Quit tui-assist")
def _quit(screen: MainScreen, args: str) -> None:
    screen.app.exit()
