"""Slash commands without a UI: what a `/` prompt says, the registry, and custom commands.

A prompt that starts with `/` is a command and is never sent to the model as typed. The host
(the TUI) registers the built-ins with its own handlers in a `CommandRegistry`; `parse_slash`
splits a prompt into a command name and its arguments; `closest` names the command a typo meant.

Custom commands are Markdown files: `<workdir>/.tui-assist/commands/NAME.md` (the project's) and
`<user config dir>/commands/NAME.md` (the user's; a project command of the same name wins).
`/NAME ARGS` sends the file's text with `$ARGUMENTS` replaced by ARGS (or, when the text has no
`$ARGUMENTS`, with ARGS on a line of their own after it). A first line that is a `# ` heading is
the command's description. A built-in's name can't be taken by a custom command.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, TypeVar

from tui_assist.core.rule_files import PROJECT_DIR
from tui_assist.session.instructions import file_stamp

log = logging.getLogger(__name__)

H = TypeVar("H")

CommandSource = Literal["built-in", "project", "user"]

PROJECT_COMMANDS_DIR = Path(PROJECT_DIR) / "commands"
"""Under the workdir."""
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
    """A command read from a Markdown file."""

    command: SlashCommand
    path: Path
    text: str

    def expand(self, arguments: str) -> str:
        """The prompt to send for `/NAME arguments`."""
        if ARGUMENTS in self.text:
            return self.text.replace(ARGUMENTS, arguments)
        return f"{self.text}\n\n{arguments}" if arguments else self.text


@dataclass(frozen=True, slots=True)
class CustomCommands:
    """The custom commands found, and why any file was left out."""

    commands: dict[str, CustomCommand] = field(default_factory=lambda: {})
    problems: tuple[str, ...] = ()


def read_custom_command(path: Path, source: CommandSource) -> CustomCommand:
    """Read one command file.

    Raises:
        OSError: when it can't be read.
        ValueError: when it is too big or not UTF-8.
    """
    if path.stat().st_size > MAX_COMMAND_FILE_BYTES:
        raise ValueError(f"bigger than {MAX_COMMAND_FILE_BYTES:,} bytes")
    try:
        text = path.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8 text") from exc
    first = text.split("\n", 1)[0].strip()
    description = first[2:].strip() if first.startswith("# ") else ""
    return CustomCommand(SlashCommand(path.stem, "[ARGS]", description, source), path, text)


class CustomCommandLoader:
    """Finds the custom commands of a workdir and the user, again only when a folder changed.

    `load` is cheap when nothing changed (a `stat` of each folder and file), so a host may call it
    on every keystroke of a completion.
    """

    def __init__(self, workdir: Path, user_config_dir: Path, *, reserved: Iterable[str] = ()) -> None:
        """Look in `workdir`'s and `user_config_dir`'s command folders.

        Args:
            workdir: The project's folder (its `.tui-assist/commands/`).
            user_config_dir: The user's config dir (its `commands/`).
            reserved: Names a custom command can't take (the built-ins).
        """
        self.workdir = workdir
        self.folders: tuple[tuple[Path, CommandSource], ...] = (
            (workdir / PROJECT_COMMANDS_DIR, "project"),
            (user_config_dir / USER_COMMANDS_DIR, "user"),
        )
        self.reserved = frozenset(reserved)
        self._stamp: tuple[tuple[str, int, int], ...] | None = None
        self._loaded = CustomCommands()

    def load(self) -> CustomCommands:
        """The commands now on disk (the cached ones when no file changed)."""
        files: list[tuple[Path, CommandSource]] = [
            (path, source) for folder, source in self.folders for path in _command_files(folder)
        ]
        stamp = tuple(file_stamp(path) for path, _ in files)
        if stamp != self._stamp:
            self._loaded = self._read(files)
            self._stamp = stamp
        return self._loaded

    def _read(self, files: list[tuple[Path, CommandSource]]) -> CustomCommands:
        commands: dict[str, CustomCommand] = {}
        problems: list[str] = []
        for path, source in files:
            name = path.stem
            if not _NAME.fullmatch(name):
                problems.append(f"{path}: {name!r} is not a command name (letters, digits, - _ . :)")
                continue
            if name in self.reserved:
                problems.append(f"{path}: /{name} is a built-in command; rename the file")
                continue
            if name in commands:  # the project's folder is read first and wins
                continue
            try:
                commands[name] = read_custom_command(path, source)
            except (OSError, ValueError) as exc:
                problems.append(f"{path}: {exc}")
        return CustomCommands(commands, tuple(problems))


def _command_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except OSError:  # no such folder (the usual case), or not readable
        return []
