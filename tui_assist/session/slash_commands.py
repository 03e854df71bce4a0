"""Slash commands without a UI: what a `/` prompt says, the registry, and custom commands.

A prompt that starts with `/` is a command and is never sent to the model as typed. The host
(the TUI) registers the built-ins with its own handlers in a `CommandRegistry`; `parse_slash`
splits a prompt into a command name and its arguments; `closest` names the command a typo meant.

Custom commands are Markdown files, in Claude Code's format: the project's in
`<workdir>/.tui-assist/commands/` and `<workdir>/.claude/commands/`, the user's in
`<user config dir>/commands/` and `~/.claude/commands/`, an enabled plugin's in its `commands/`
(as `/PLUGIN:NAME`), subfolders included (a file is found by its name; its folder is its
namespace, `project:frontend`). A user command wins over a project
command of the same name (one problem line says so): a repository can't replace what the user
typed `/NAME` for. YAML front matter (`description`, `argument-hint`, `allowed-tools`, `model`) is
read and never sent. `/NAME ARGS` sends the body with `$ARGUMENTS` replaced by ARGS and `$1`...
`$9` by its words (or, with neither, ARGS on a line of their own after it); each !`command` span
is replaced by that command's output before the prompt is sent (see `session.command_shell`).
Without a `description`, the body's first line is the description (as in Claude Code). A
built-in's name can't be taken by a custom command.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, NamedTuple, TypeVar

from tui_assist.core.rule_files import PROJECT_DIR
from tui_assist.session.claude_dirs import CLAUDE_PROJECT_DIR
from tui_assist.session.instructions import file_stamp

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tui_assist.session.plugins import Plugin

log = logging.getLogger(__name__)

H = TypeVar("H")

CommandSource = Literal["built-in", "project", "user", "plugin"]


class CommandFolder(NamedTuple):
    """A folder of command files, whose they are, and the plugin they come with."""

    path: Path
    source: CommandSource
    plugin: str = ""
    """A plugin's name: its commands are `/PLUGIN:NAME`."""


PROJECT_COMMANDS_DIR = Path(PROJECT_DIR) / "commands"
"""Under the workdir."""
CLAUDE_COMMANDS_DIR = Path(CLAUDE_PROJECT_DIR) / "commands"
"""Under the workdir: Claude Code's."""
USER_COMMANDS_DIR = "commands"
"""Under the user config dir."""
ARGUMENTS = "$ARGUMENTS"

MAX_COMMAND_FILE_BYTES = 100_000
"""A bigger custom command file is skipped (with a problem line)."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
_COMMAND_LINE = re.compile(r"/(?P<name>\S*)\s*(?P<args>.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A command as the completion list and `/help` show it."""

    name: str
    """Without the `/`."""
    args: str = ""
    """How its arguments are written, e.g. `[QUERY]` (optional) or `N` (required)."""
    description: str = ""
    source: CommandSource = "built-in"
    namespace: str = ""
    """The subfolder a custom command's file is in (`frontend`, `a:b`), as Claude Code shows it."""

    @property
    def origin(self) -> str:
        """Where it comes from, as completion and `/help` show it: `project:frontend`, `user`."""
        return f"{self.source}:{self.namespace}" if self.namespace else self.source

    @property
    def usage(self) -> str:
        """`/name ARGS`."""
        return f"/{self.name} {self.args}".rstrip()

    @property
    def needs_arguments(self) -> bool:
        """Whether it takes an argument that is not optional (`N`, not `[N]`)."""
        return bool(self.args) and not self.args.startswith("[")


@dataclass(frozen=True, slots=True)
class SlashInput:
    """A prompt read as a command."""

    name: str
    """The name after `/` (may be empty: a lone `/`)."""
    args: str
    """The rest, stripped."""


def parse_slash(prompt: str) -> SlashInput | None:
    """Read a prompt as a command.

    Args:
        prompt: The prompt as typed.

    Returns:
        The command's name and arguments, or None when the prompt doesn't start with `/`.
    """
    text = prompt.strip()
    if not text.startswith("/"):
        return None
    match = _COMMAND_LINE.match(text)
    assert match is not None  # the pattern matches any text that starts with `/`
    return SlashInput(match["name"], match["args"].strip())


def is_command_name(name: str) -> bool:
    """Whether `name` can name a command (`prime`, `gh:pr`), unlike `etc/hosts`."""
    return bool(_NAME.fullmatch(name))


def unknown_command(name: str, custom: CustomCommands) -> str:
    """The one line every host says for `/name` that no built-in or custom command has."""
    from tui_assist.session.commands import SLASH

    if not name:
        return "type a command name after / (/help lists the commands)"
    guess = closest(name, [*SLASH.names, *custom.commands])
    hint = f": did you mean /{guess}?" if guess else ""
    return f"unknown command /{name}{hint} (/help lists the commands)"


def closest(name: str, names: Iterable[str]) -> str | None:
    """The known name `name` most likely meant, or None when none is close.

    A name that starts the same way wins (`/he` -> `help`), then the most similar spelling.
    """
    import difflib  # only for a name that is not a command

    candidates = sorted(names)
    if not name:
        return None
    for candidate in candidates:
        if candidate.startswith(name):
            return candidate
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    return found[0] if found else None


def matching(query: str, commands: Iterable[SlashCommand]) -> list[SlashCommand]:
    """The commands a partly typed name may mean, best first, for the completion list.

    Those whose name starts with `query` come first (in the given order), then those that contain
    it, then those whose name holds its characters in order.
    """
    query = query.lower()
    starts: list[SlashCommand] = []
    contains: list[SlashCommand] = []
    scattered: list[SlashCommand] = []
    for command in commands:
        name = command.name.lower()
        if name.startswith(query):
            starts.append(command)
        elif query in name:
            contains.append(command)
        elif _in_order(query, name):
            scattered.append(command)
    return starts + contains + scattered


def _in_order(query: str, name: str) -> bool:
    position = 0
    for char in query:
        position = name.find(char, position) + 1
        if position == 0:
            return False
    return True


@dataclass
class CommandRegistry(Generic[H]):
    """The built-in commands a host offers, each with the host's handler, in registration order."""

    _entries: dict[str, tuple[SlashCommand, H]] = field(default_factory=lambda: {})

    def register(self, command: SlashCommand, handler: H) -> None:
        """Add a command (a later one of the same name replaces it)."""
        self._entries[command.name] = (command, handler)

    def get(self, name: str) -> tuple[SlashCommand, H] | None:
        """The command and handler registered under `name`, if any."""
        return self._entries.get(name)

    @property
    def commands(self) -> list[SlashCommand]:
        """Every registered command, in registration order."""
        return [command for command, _ in self._entries.values()]

    @property
    def names(self) -> list[str]:
        """Every registered name, in registration order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[SlashCommand]:
        return iter(self.commands)


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """A command read from a Markdown file (its front matter read, never sent)."""

    command: SlashCommand
    path: Path
    text: str
    """The body: what is sent, once expanded."""
    model: str | None = None
    """The model its turn runs on (`model:`, aliases resolved); None: the session's."""
    allowed_tools: tuple[str, ...] = ()
    """`allowed-tools` entries as written: the `Bash(...)` ones allow its !`command` lines."""
    notes: tuple[str, ...] = ()
    """What of its file is not honoured, or a command it shadows: warned about when it runs."""

    @property
    def project(self) -> bool:
        """Whether it is the project's (its !`command` lines run only once the project is trusted)."""
        return self.command.source == "project"

    def expand(self, arguments: str) -> str:
        """The prompt to send for `/NAME arguments`, before its !`command` lines run.

        `$ARGUMENTS` is all of `arguments`, `$1` to `$9` its words (split as a shell would,
        quotes group words); with neither in the text, the arguments follow it on a line of
        their own, so nothing typed is lost.
        """
        if ARGUMENTS not in self.text and not _POSITIONAL.search(self.text):
            return f"{self.text}\n\n{arguments}" if arguments else self.text
        words = _words(arguments)
        text = self.text.replace(ARGUMENTS, arguments)
        return _POSITIONAL.sub(lambda m: words[int(m[1]) - 1] if int(m[1]) <= len(words) else "", text)

    def bash_rules(self) -> list[str]:
        """The allow rules its `allowed-tools` give its !`command` lines (`Bash(git status:*)`)."""
        rules: list[str] = []
        for entry in self.allowed_tools:
            inner = _BASH_RULE.fullmatch(entry.strip())
            if inner is not None:
                pattern = inner[1].strip()
                # Claude Code's `git status:*` is a prefix: the command and any arguments after it.
                if pattern.endswith(":*"):
                    pattern = pattern[:-2].rstrip() + " *"
                rules.append(f"bash({pattern})")
            elif entry.strip() == "Bash":
                rules.append("bash(*)")
        return rules


def shell_lines(text: str) -> list[str]:
    """The commands of the !`command` spans in an expanded command's text, in order."""
    return [match[1] for match in SHELL_SPAN.finditer(text)]


SHELL_SPAN = re.compile(r"!`([^`\n]+)`")
"""Claude Code's syntax for a command whose output replaces it before the prompt is sent."""
_POSITIONAL = re.compile(r"\$([1-9])(?![0-9])")
_BASH_RULE = re.compile(r"Bash\((.+)\)", re.DOTALL)
_DESCRIPTION_LIMIT = 100
_KNOWN_KEYS = frozenset(
    {"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"}
)


def _words(arguments: str) -> list[str]:
    import shlex

    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words rather than nothing
        return arguments.split()


@dataclass(frozen=True, slots=True)
class CustomCommands:
    """The custom commands found, and why any file was left out (or not all of it honoured)."""

    commands: dict[str, CustomCommand] = field(default_factory=lambda: {})
    problems: tuple[str, ...] = ()


def read_custom_command(
    path: Path, source: CommandSource, namespace: str = "", name: str | None = None
) -> tuple[CustomCommand, list[str]]:
    """Read one command file, and what in it is not honoured (one line each).

    Its name is `name`, else the file's.

    Raises:
        OSError: when it can't be read.
        ValueError: when it is too big, not UTF-8, or its front matter is not valid YAML.
    """
    from tui_assist.core.claude_names import resolve_model, resolve_tools
    from tui_assist.session.front_matter import parse_front_matter

    if path.stat().st_size > MAX_COMMAND_FILE_BYTES:
        raise ValueError(f"bigger than {MAX_COMMAND_FILE_BYTES:,} bytes")
    try:
        raw = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8 text") from exc
    matter = parse_front_matter(raw)
    text = matter.body
    # As Claude Code does: without a `description`, the prompt's first line (a heading's text).
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    description = " ".join(matter.text("description").split()) or first.lstrip("#").strip()
    if len(description) > _DESCRIPTION_LIMIT:
        description = description[: _DESCRIPTION_LIMIT - 1].rstrip() + "…"
    problems = [f"{key}: not read here" for key in matter.unknown(_KNOWN_KEYS)]
    allowed = tuple(matter.names("allowed-tools") or ())
    unused = [name for name in allowed if not (name.strip() == "Bash" or _BASH_RULE.fullmatch(name.strip()))]
    if unused:
        problems.append(
            f"allowed-tools {', '.join(unused)}: only Bash(...) entries are used here (they allow the"
            " file's !`command` lines); the turn's own tool calls follow the usual rules"
        )
    problems += [f"allowed-tools {problem}" for problem in resolve_tools(unused).problems]
    hint = matter.text("argument-hint") or "[ARGS]"
    command = SlashCommand(name or path.stem, hint, description, source, namespace)
    model = resolve_model(matter.text("model") or None)
    return CustomCommand(command, path, text, model, allowed), problems


class CustomCommandLoader:
    """Finds the custom commands of a workdir and the user, again only when a folder changed.

    `load` is cheap when nothing changed (a `stat` of each file), so a host may call it on every
    keystroke of a completion.
    """

    def __init__(
        self,
        workdir: Path,
        user_config_dir: Path,
        *,
        reserved: Iterable[str] = (),
        claude_user: Path | None = None,
        plugins: Sequence[Plugin] = (),
    ) -> None:
        """Look in the project's and the user's command folders.

        Args:
            workdir: The project's folder (its `.tui-assist/commands/` and `.claude/commands/`).
            user_config_dir: The user's config dir (its `commands/`).
            reserved: Names a custom command can't take (the built-ins).
            claude_user: Claude Code's user dir (its `commands/`); None when it is not read.
            plugins: The enabled plugins (their `commands/`, as `/PLUGIN:NAME`).
        """
        self.workdir = workdir
        self.claude_user = claude_user
        self.plugins = tuple(plugins)
        self.folders: tuple[CommandFolder, ...] = (
            CommandFolder(user_config_dir / USER_COMMANDS_DIR, "user"),
            *((CommandFolder(claude_user / USER_COMMANDS_DIR, "user"),) if claude_user is not None else ()),
            *(CommandFolder(p.commands_dir, "plugin", p.name) for p in plugins if p.commands_dir is not None),
            CommandFolder(workdir / PROJECT_COMMANDS_DIR, "project"),
            CommandFolder(workdir / CLAUDE_COMMANDS_DIR, "project"),
        )
        self.reserved = frozenset(reserved)
        self._stamp: tuple[tuple[str, int, int], ...] | None = None
        self._loaded = CustomCommands()

    def load(self) -> CustomCommands:
        """The commands now on disk (the cached ones when no file changed)."""
        files = [(folder, path) for folder in self.folders for path in _command_files(folder.path)]
        stamp = tuple(file_stamp(path) for _, path in files)
        if stamp != self._stamp:
            self._loaded = self._read(files)
            self._stamp = stamp
        return self._loaded

    def _read(self, files: list[tuple[CommandFolder, Path]]) -> CustomCommands:
        commands: dict[str, CustomCommand] = {}
        problems: list[str] = []
        for folder, path in files:
            source = folder.source
            if not _NAME.fullmatch(path.stem):
                problems.append(f"{path}: {path.stem!r} is not a command name (letters, digits, - _ . :)")
                continue
            name = f"{folder.plugin}:{path.stem}" if folder.plugin else path.stem
            if name in self.reserved:
                problems.append(f"{path}: /{name} is a built-in command; rename the file")
                continue
            taken = commands.get(name)
            if taken is not None:  # the user's folders are read first and win, with a word
                if taken.command.source != "project" and source == "project":
                    problem = f"{path}: your command /{name} ({taken.path}) is used instead"
                else:
                    problem = f"{path}: /{name} is already {taken.path}; this one is not used"
                problems.append(problem)
                commands[name] = replace(taken, notes=(*taken.notes, problem))
                continue
            namespace = ":".join(
                (*([folder.plugin] if folder.plugin else []), *path.parent.relative_to(folder.path).parts)
            )
            try:
                command, unhonoured = read_custom_command(path, source, namespace, name)
            except (OSError, ValueError) as exc:
                problems.append(f"{path}: {exc}")
                continue
            if unhonoured:
                problem = f"{path}: {'; '.join(unhonoured)} (the rest loads)"
                problems.append(problem)
                command = replace(command, notes=(problem,))
            commands[name] = command
        return CustomCommands(commands, tuple(problems))


def _command_files(folder: Path) -> list[Path]:
    """The `.md` files in `folder` and its subfolders (none when it is missing)."""
    if not folder.is_dir():  # no such folder: the usual case
        return []
    try:
        return sorted(p for p in folder.rglob("*.md") if p.is_file())
    except OSError:  # not readable
        return []


def project_shell_commands(workdir: Path) -> list[Path]:
    """The project's command files that hold a !`command` span (what trusting the project covers)."""
    found: list[Path] = []
    for folder in (workdir / PROJECT_COMMANDS_DIR, workdir / CLAUDE_COMMANDS_DIR):
        for path in _command_files(folder):
            try:
                if path.stat().st_size <= MAX_COMMAND_FILE_BYTES and SHELL_SPAN.search(
                    path.read_text(encoding="utf-8", errors="replace")
                ):
                    found.append(path)
            except OSError:
                continue
    return found
