"""The command line's grammar: commands, the flags each one uses, and one-line usage errors.

Global flags (`--data-dir`, `--workdir`, `--provider`, ...) are accepted before or after every
command, as `git -C` is: users put them in aliases and scripts. A command that does not use one
ignores it (it is dropped from the namespace, so its value is neither read nor validated), and
its `--help` names such flags apart, on one line. A word that is not a command opens the chat with
that prompt (`tui-assist "fix the test"`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from tui_assist import __version__

PROG = "tui-assist"


class UsageError(Exception):
    """The command line is wrong; `command` is what was being parsed (e.g. `history list`)."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command


class _Parser(argparse.ArgumentParser):
    """Raises `UsageError` instead of printing usage and exiting, so every error is one line."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(command_of_prog(self.prog), message)


def command_of_prog(prog: str) -> str:
    """`tui-assist history list` -> `history list`; the bare program is the chat."""
    return prog.removeprefix(PROG).strip() or "chat"


# Each global flag: its dest, its option strings and argparse keywords. Defaults are SUPPRESSed so
# a flag given before the command isn't overwritten by the command's parser, and so the namespace
# tells exactly which flags were given.
_GLOBALS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "refine": (("--refine",), {"action": "store_true", "help": "refine mode: generate, critique, revise"}),
    "rounds": (("--rounds",), {"type": int, "metavar": "N", "help": "refine round budget (default 3)"}),
    "workdir": (("--workdir",), {"metavar": "DIR", "help": "the folder the tools work in (default: here)"}),
    "data_dir": (("--data-dir",), {"metavar": "DIR", "help": "where conversations are stored"}),
    "provider": (
        ("--provider",),
        {"metavar": "NAME", "help": "anthropic (default), scripted, openai, or ollama, vllm, llamacpp"},
    ),
    "base_url": (
        ("--base-url",),
        {"metavar": "URL", "help": "endpoint (or profile name) of an OpenAI-compatible provider"},
    ),
    "model": (("--model",), {"metavar": "NAME", "help": "model id (default claude-sonnet-4-6)"}),
    "theme": (("--theme",), {"metavar": "NAME", "help": "TUI theme: tui-dark, tui-light, tui-high-contrast"}),
    "thinking": (
        ("--thinking",),
        {"metavar": "off|auto|N", "help": "extended thinking: off (default), auto, or a budget of N tokens"},
    ),
    "max_budget_usd": (
        ("--max-budget-usd",),
        {
            "type": float,
            "metavar": "N",
            "help": "spend cap: no model request once the conversation cost N USD",
        },
    ),
    "script": (("--script",), {"metavar": "FILE", "help": "replayed replies for --provider scripted"}),
    "mode": (
        ("--mode",),
        {
            "choices": ("default", "accept-edits", "plan", "bypass"),
            "help": "approvals: default asks, accept-edits runs edits, plan runs nothing, bypass runs all",
        },
    ),
    "trust_project": (
        ("--trust-project",),
        {"action": "store_true", "help": "trust this project's hooks, MCP servers and agents (remembered)"},
    ),
}
GLOBAL_FLAGS = tuple(_GLOBALS)

_MODEL = ("provider", "base_url", "model", "script")
_TURN = (
    "refine",
    "rounds",
    "workdir",
    "data_dir",
    "mode",
    "trust_project",
    "thinking",
    "max_budget_usd",
    *_MODEL,
)
USES: dict[str, tuple[str, ...]] = {
    "chat": (*_TURN, "theme"),
    "ask": _TURN,
    "explore": ("theme",),
    "acp": _TURN,
    "history": ("data_dir",),
    "stats": ("data_dir",),
    "flow grounded": ("data_dir", *_MODEL),
    "flow approve": ("data_dir",),
    # A rewind restores the turn's own workdir; --workdir only confirms it (cli/rewind.py).
    "rewind": ("data_dir", "workdir"),
    "bench docs": _MODEL,
    "bench helpdesk": _MODEL,
    # Each run has its own copy of the task's repo and a throwaway data dir; scripts come per task.
    "bench strategies": ("rounds", "provider", "base_url", "model"),
    "plugin install": ("data_dir",),
    "plugin list": ("data_dir",),
    "plugin remove": ("data_dir",),
    "plugin enable": ("data_dir",),
    "plugin disable": ("data_dir",),
    "plugin marketplace add": ("data_dir",),
    "plugin marketplace list": ("data_dir",),
    # Reports what a session in that workdir would load; it trusts nothing itself.
    "doctor": ("workdir", "data_dir"),
}
"""The global flags each command uses; it accepts and ignores the others."""

COMMANDS = ("ask", "acp", "explore", "history", "stats", "flow", "bench", "rewind", "plugin", "doctor")


def _add_globals(parser: argparse.ArgumentParser, uses: Sequence[str]) -> None:
    """Every global flag; `--help` lists those in `uses` and names the others on one line."""
    ignored = [_GLOBALS[name][0][0] for name in GLOBAL_FLAGS if name not in uses]
    description = f"also accepted, and ignored here: {' '.join(ignored)}" if ignored else None
    group = parser.add_argument_group("global options", description)
    for name in GLOBAL_FLAGS:
        flags, kwargs = _GLOBALS[name]
        if name not in uses:
            kwargs = {**kwargs, "help": argparse.SUPPRESS}
        group.add_argument(*flags, dest=name, default=argparse.SUPPRESS, **kwargs)


def _union(group: str) -> tuple[str, ...]:
    """The global flags some subcommand of `group` uses (a group's own `--help` lists those)."""
    used = {name for command, names in USES.items() if command.startswith(f"{group} ") for name in names}
    return tuple(name for name in GLOBAL_FLAGS if name in used)


def _sub(subparsers: Any, name: str, uses: Sequence[str], **kwargs: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(name, **kwargs)
    _add_globals(parser, uses)
    return parser


def build_parser(*, commands: bool = True) -> argparse.ArgumentParser:
    """The whole grammar; without `commands`, only the chat's (the global flags, `--continue`...)."""
    parser = _Parser(
        prog=PROG,
        description='A terminal chat assistant. With no command, opens the chat (`tui-assist "PROMPT"` '
        "opens it and sends PROMPT).",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _add_globals(parser, GLOBAL_FLAGS)
    parser.add_argument(
        "--continue", dest="continue_", action="store_true", help="open the latest conversation"
    )
    parser.add_argument(
        "--resume", nargs="?", const="", metavar="ID", help="open the resume picker, or conversation ID"
    )
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ask = _sub(sub, "ask", USES["ask"], help="run one turn headless and print the answer")
    ask.add_argument(
        "prompt",
        metavar="PROMPT",
        nargs="?",
        help="the request ('-' or none: stdin; with PROMPT, stdin is attached)",
    )
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        help="text (default), json (= --json), stream-json (one JSON object per line as the turn runs)",
    )
    ask.add_argument("--yes", action="store_true", help="approve every tool call")
    ask.add_argument(
        "--goal", metavar="TEXT", help="work on TEXT until the critic, running the checks, says it is met"
    )
    ask.add_argument(
        "--check",
        dest="checks",
        action="append",
        default=[],
        metavar="CMD",
        help="a command that verifies the goal (exit 0: met); repeatable",
    )
    ask.add_argument("--max-attempts", type=int, metavar="N", help="attempts the goal may make (default 5)")
    resume = ask.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue", dest="continue_", action="store_true", help="append to the latest conversation"
    )
    resume.add_argument("--conversation", metavar="ID", help="append to conversation ID")

    _sub(
        sub,
        "acp",
        USES["acp"],
        help="serve the Agent Client Protocol on stdio (for editors: Zed, Neovim...)",
        description="Be an Agent Client Protocol agent on stdin/stdout, for an editor (Zed, JetBrains, "
        "Neovim, Emacs) to start and drive. Each session is a stored conversation; logs go to the log file.",
    )
    _sub(sub, "explore", USES["explore"], help="watch the five workflow patterns run (offline)")

    history = _sub(sub, "history", USES["history"], help="list, show, search and export conversations")
    hsub = history.add_subparsers(dest="history_command", metavar="ACTION", required=True)
    hl = _sub(hsub, "list", USES["history"], help="recent conversations")
    hl.add_argument("--json", action="store_true", help="print JSON")
    hl.add_argument("--limit", type=int, default=20, metavar="N", help="how many (default 20)")
    hs = _sub(hsub, "show", USES["history"], help="one conversation")
    hs.add_argument("id", metavar="ID", help="a conversation id (or a unique prefix)")
    hs.add_argument("--json", action="store_true", help="print JSON")
    hq = _sub(hsub, "search", USES["history"], help="full-text search over prompts and answers")
    hq.add_argument("query", metavar="QUERY", help="words to find")
    hq.add_argument("--json", action="store_true", help="print JSON")
    hq.add_argument("--limit", type=int, default=20, metavar="N", help="how many (default 20)")
    he = _sub(hsub, "export", USES["history"], help="a conversation with its rounds and tool calls")
    he.add_argument("id", metavar="ID", help="a conversation id (or a unique prefix)")
    he.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")

    rewind = _sub(
        sub, "rewind", USES["rewind"], help="restore the files and/or the conversation to before a turn"
    )
    rewind.add_argument("turn_id", metavar="TURN_ID", help="the turn to go back to before (or an id prefix)")
    scope = rewind.add_mutually_exclusive_group()
    scope.add_argument("--files", dest="scope", action="store_const", const="files", help="the files only")
    scope.add_argument(
        "--conversation",
        dest="scope",
        action="store_const",
        const="conversation",
        help="the chat only",
    )
    scope.add_argument("--both", dest="scope", action="store_const", const="both", help="both (the default)")
    rewind.add_argument("--yes", action="store_true", help="do it (without: only print what would change)")
    rewind.add_argument("--json", action="store_true", help="print JSON")

    stats = _sub(sub, "stats", USES["stats"], help="outcomes and tokens by week")
    stats.add_argument("--json", action="store_true", help="print JSON")

    flow = _sub(sub, "flow", _union("flow"), help="run built-in flows")
    fsub = flow.add_subparsers(dest="flow_command", metavar="FLOW", required=True)
    grounded = _sub(
        fsub, "grounded", USES["flow grounded"], help="answer from your documents, with citations"
    )
    grounded.add_argument("question", metavar="QUESTION", help="what to answer")
    grounded.add_argument(
        "--corpus",
        metavar="DIR",
        type=Path,
        help="folder of Markdown/text files (default: a sample)",
    )
    grounded.add_argument(
        "--data", metavar="FILE", type=Path, help="SQLite file to answer data questions from"
    )
    grounded.add_argument("--json", action="store_true", help="print JSON")
    grounded.add_argument(
        "--leaves", choices=("rules", "model"), help="rules or model (default: model when one is configured)"
    )
    approve = _sub(fsub, "approve", USES["flow approve"], help="release a run held for approval")
    approve.add_argument("run_id", metavar="RUN_ID", help="the held run's id")
    approve.add_argument("--json", action="store_true", help="print JSON")

    bench = _sub(sub, "bench", _union("bench"), help="reproducible benchmarks of control policies")
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH", required=True)
    docs = _sub(bsub, "docs", USES["bench docs"], help="docs tasks: keyword route vs workflow vs loops")
    docs.add_argument("--fixtures", metavar="DIR", type=Path, help="dir of documents/glossary/cases.json")
    docs.add_argument(
        "--cases", choices=("baseline", "adaptive", "all"), default="baseline", help="which cases"
    )
    docs.add_argument("--json", action="store_true", help="print JSON rows")
    docs.add_argument("--trace", metavar="CASE_ID", help="print each policy's decisions for one case")
    docs.add_argument("--with-model", action="store_true", help="also run the configured model as a policy")
    helpdesk = _sub(bsub, "helpdesk", USES["bench helpdesk"], help="the five workflow patterns on 12 tickets")
    helpdesk.add_argument("--json", action="store_true", help="print JSON rows")
    helpdesk.add_argument("--leaves", choices=("rules", "model"), default="rules", help="rules or model")
    strategies = _sub(
        bsub,
        "strategies",
        USES["bench strategies"],
        help="agent vs refine (vs goal) turns on tasks a check grades: pass rates, tokens, cost, time",
        description="Run every task of a suite with each strategy, headless, every tool call approved, "
        "in a fresh copy of the task's repo; then grade it with the task's check. With --provider "
        "scripted, each task's scripts/<strategy>.json is replayed (offline).",
    )
    strategies.add_argument(
        "--suite", metavar="DIR", type=Path, help="folder of tasks (task.toml + repo/); default: built-in"
    )
    strategies.add_argument(
        "--strategies",
        default="agent,refine",
        metavar="LIST",
        help="agent, refine, goal, or a list (default agent,refine; goal runs the tasks with a goal_check)",
    )
    strategies.add_argument(
        "--concurrency", type=int, default=1, metavar="N", help="runs at once (default 1)"
    )
    strategies.add_argument("--json", action="store_true", help="print JSON rows")

    _add_plugin_commands(sub)
    doctor = _sub(
        sub,
        "doctor",
        USES["doctor"],
        help="every place settings, commands, agents, skills, hooks and MCP servers are read from",
        description="List each file and folder a session in the workdir reads, what loaded from it, "
        "what was skipped and why, and the project's trust.",
    )
    doctor.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _add_plugin_commands(sub: Any) -> None:
    """`plugin install|list|remove|enable|disable` and `plugin marketplace add|list`."""
    plugin = _sub(sub, "plugin", _union("plugin"), help="install and manage Claude Code plugins")
    psub = plugin.add_subparsers(dest="plugin_command", metavar="ACTION", required=True)
    install = _sub(
        psub,
        "install",
        USES["plugin install"],
        help="install a plugin from a folder, a git URL or NAME@MARKETPLACE",
        description="Fetch the plugin, list what it brings (commands, agents, skills, hooks, MCP "
        "servers) and ask before installing it into the data dir.",
    )
    install.add_argument("source", metavar="PATH|GIT_URL|NAME@MARKETPLACE", help="where the plugin is")
    install.add_argument("--yes", action="store_true", help="install without asking")
    listing = _sub(
        psub, "list", USES["plugin list"], help="installed plugins: name, version, source, enabled"
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    for action, what in (("remove", "uninstall"), ("enable", "enable"), ("disable", "disable")):
        command = _sub(psub, action, USES[f"plugin {action}"], help=f"{what} an installed plugin")
        command.add_argument("name", metavar="NAME", help="the plugin's name (see plugin list)")
    market = _sub(psub, "marketplace", _union("plugin marketplace"), help="add and list plugin marketplaces")
    msub = market.add_subparsers(dest="marketplace_command", metavar="ACTION", required=True)
    add = _sub(
        msub, "add", USES["plugin marketplace add"], help="add a marketplace from a folder or a git URL"
    )
    add.add_argument("source", metavar="PATH|GIT_URL", help="holds .claude-plugin/marketplace.json")
    mlist = _sub(msub, "list", USES["plugin marketplace list"], help="added marketplaces and their plugins")
    mlist.add_argument("--json", action="store_true", help="print JSON")


def command_name(args: argparse.Namespace) -> str:
    """The command the namespace holds: `chat`, `ask`, `history list`, `flow grounded`, ..."""
    command = args.command or "chat"
    if command == "plugin" and args.plugin_command == "marketplace":
        return f"plugin marketplace {args.marketplace_command}"
    for group in ("history", "flow", "bench", "plugin"):
        if command == group:
            return f"{group} {getattr(args, f'{group}_command')}"
    return command


def _uses(command: str) -> tuple[str, ...]:
    return USES.get(command) or USES.get(command.split()[0], ())


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the command line.

    Raises:
        UsageError: with one line on what is wrong.
    """
    if not any(word in COMMANDS for word in argv):
        # No command named: the chat's grammar is enough, and building every command's parser
        # took most of the TUI's parsing. Whatever it can't parse, the whole grammar parses again
        # (a stray word is an invalid command there, and errors read the same).
        try:
            return _parse(build_parser(commands=False), argv, strict=True)
        except UsageError:
            pass
    return _parse(build_parser(), argv)


def _parse(
    parser: argparse.ArgumentParser, argv: Sequence[str], *, strict: bool = False
) -> argparse.Namespace:
    """`parse` with `parser`; `strict`: any word left over is a usage error."""
    argv = list(argv)
    prompt_at = _bare_prompt_index(parser, argv)
    prompt = None
    if prompt_at is not None:
        prompt = argv.pop(prompt_at)
    args, extras = parser.parse_known_args(argv)
    if strict and extras:
        raise UsageError("chat", "unrecognized arguments")
    args.prompt = prompt if args.command is None else getattr(args, "prompt", None)
    command = command_name(args)
    if extras:
        raise UsageError(command, f"unrecognized arguments: {' '.join(extras)}")
    for name in GLOBAL_FLAGS:
        if name in vars(args) and name not in _uses(command):
            delattr(args, name)  # ignored: never read, so never validated either
    if command != "chat" and (getattr(args, "resume", None) is not None):
        raise UsageError(command, "--resume opens the chat; it does not apply to a command")
    return args


def _bare_prompt_index(parser: argparse.ArgumentParser, argv: list[str]) -> int | None:
    """Where a chat prompt stands in `argv`, if anywhere.

    It is the first word that is neither a flag nor a flag's value, unless that word is a command.
    """
    takes_value = {
        option
        for action in parser._actions  # noqa: SLF001 - argparse has no public way to ask
        if action.nargs is None and action.option_strings and not isinstance(action.const, bool)
        for option in action.option_strings
    }
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1 if i + 1 < len(argv) else None
        if word == "--resume":  # its ID is optional: a following word that isn't a flag is the ID
            i += 2 if i + 1 < len(argv) and not argv[i + 1].startswith("-") else 1
            continue
        if word.startswith("-") and word != "-":
            i += 2 if word in takes_value else 1
            continue
        return None if word in COMMANDS else i
    return None
