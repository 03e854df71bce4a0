"""Reading hooks: Claude Code's `hooks` tables (JSON settings and TOML) into `HookDefinition`s.

An entry is Claude Code's matcher group (`matcher`, `hooks = [{type, command, timeout}]`) or this
program's flat table (`command`, `matcher`, `timeout`); one it cannot honour is one warning naming
the file, the event and the entry, and the rest still loads. Where the files are read and when
they run: `session/hooks.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from tui_assist.core.text import clip
from tui_assist.session.claude_dirs import CLAUDE_SETTINGS_FILES

if TYPE_CHECKING:
    from tui_assist.session.trust import ProjectFiles

# Here, not in the settings' module: the controller imports this one (through `hooks`) when the
# screen first connects, before the settings are validated, and a resumed conversation's page is
# read and drawn then: pydantic's import would hold it back.
HookEvent = Literal[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
]
"""The points where the user's hooks run: Claude Code's events."""
HOOK_EVENTS: Final[tuple[str, ...]] = get_args(HookEvent)
"""Claude Code's events, every one of which runs here."""
UNMATCHED_EVENTS: Final = frozenset({"UserPromptSubmit", "Stop"})
"""Events with no subject: a matcher on them is ignored."""
QUIET_KEYS: Final = frozenset({"statusMessage"})
"""Claude Code handler keys that need nothing here (what its spinner says)."""
SYNCHRONOUS_KEYS: Final = frozenset({"async", "asyncRewake"})
"""Claude Code handler keys asking to run in the background: here the hook runs in line."""
HANDLER_KEYS: Final = frozenset({"type", "command", "timeout"})

HookSource = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class HookDefinition:
    """One configured hook and where it came from."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = 60.0
    source: HookSource = "user"
    origin: Path | None = None
    """The file that defines it."""
    plugin_root: Path | None = None
    """For a plugin's hook: the plugin's folder (`$CLAUDE_PLUGIN_ROOT`)."""

    def matches(self, subjects: Sequence[str]) -> bool:
        """Whether this hook runs for an event about `subjects` (no subjects: it always runs).

        A tool event's subjects are the tool's name here and Claude Code's (`Bash`, `Edit`, `Task`,
        `mcp__SERVER__TOOL`), so a matcher written for Claude Code works too; `SessionStart`'s is
        its source. The matcher is a regular expression the whole subject must match.
        """
        if not subjects or self.matcher in ("", "*"):
            return True
        return any(re.fullmatch(self.matcher, subject) is not None for subject in subjects)

    def describe(self) -> str:
        """One line for `/hooks` and the trust dialog."""
        shown = self.matcher and self.matcher != "*" and self.event not in UNMATCHED_EVENTS
        return f"{self.event}{f' [{self.matcher}]' if shown else ''}: {self.command}"


def parse_hooks(
    table: object, source: HookSource, origin: Path | None, *, plugin_root: Path | None = None
) -> tuple[list[HookDefinition], list[str]]:
    """The hooks of a `hooks` table (TOML or Claude Code's JSON), and one warning per entry not loaded.

    Args:
        table: The value of `hooks` (event name -> list of entries, each a matcher group
            `{matcher?, hooks: [handler, ...]}` or one flat handler `{command, matcher?, timeout?}`).
        source: `user` or `project`.
        origin: The file it was read from, named in warnings.
        plugin_root: For a plugin's hooks: its folder.
    """
    reader = _HookTableReader(source, origin, plugin_root)
    reader.read(table)
    return reader.hooks, reader.warnings


@dataclass(slots=True)
class _HookTableReader:
    """Reads one file's `hooks` table, entry by entry, into hooks and one warning per entry."""

    source: HookSource
    origin: Path | None
    plugin_root: Path | None
    hooks: list[HookDefinition] = field(default_factory=lambda: list[HookDefinition]())
    warnings: list[str] = field(default_factory=lambda: list[str]())

    @property
    def where(self) -> str:
        return str(self.origin) if self.origin is not None else "config"

    def read(self, table: object) -> None:
        if table is None:
            return
        if not isinstance(table, Mapping):
            self.warnings.append(f"{self.where}: hooks must map each event to a list of entries; ignored")
            return
        for event, entries in table.items():
            if event not in HOOK_EVENTS:
                self.warnings.append(
                    f"{self.where}: unknown hook event {event!r} (one of {', '.join(HOOK_EVENTS)}); ignored"
                )
            elif not isinstance(entries, list):
                self.warnings.append(f"{self.where}: hooks.{event} must be a list of entries; ignored")
            else:
                for index, entry in enumerate(entries):
                    self._entry(str(event), f"hooks.{event}[{index}]", entry)

    def _entry(self, event: str, label: str, entry: object) -> None:
        if not isinstance(entry, Mapping):
            self.warnings.append(f"{self.where}: {label} is not a table; ignored")
            return
        group: Mapping[str, Any] = entry
        if "hooks" not in group:  # this program's flat shape: the entry is the handler
            self._handler(event, label, group, None)
            return
        matcher, handlers = group.get("matcher", ""), group["hooks"]
        problem = _matcher_problem(matcher)
        if problem is None and not isinstance(handlers, list):
            problem = "its hooks must be a list of handlers"
        if problem is not None:
            self.warnings.append(f"{self.where}: {label}: {problem}; ignored")
            return
        if extra := sorted(set(group) - {"matcher", "hooks"}):
            self.warnings.append(f"{self.where}: {label}: unknown key {', '.join(map(repr, extra))} ignored")
        for position, handler in enumerate(handlers):
            self._handler(event, f"{label}.hooks[{position}]", handler, str(matcher))

    def _handler(self, event: str, label: str, raw: object, group_matcher: str | None) -> None:
        """Add one handler, or say in one warning why it is not loaded (or not honoured in full)."""
        from pydantic import ValidationError

        from tui_assist.session.config import HookSettings

        if not isinstance(raw, Mapping):
            self.warnings.append(f"{self.where}: {label} is not a table; ignored")
            return
        data: dict[str, Any] = {str(k): v for k, v in raw.items()}
        command = data.get("command")
        named = f"{self.where}: {label}"
        if isinstance(command, str) and command:
            named += f" ({clip(command, 60)})"
        kind = data.get("type", "command")
        if kind != "command":
            self.warnings.append(
                f'{named}: "type": {json.dumps(kind)} hooks are not supported here (only "command"); ignored'
            )
            return
        if "if" in data:  # running it unconditioned would run it where its author did not want it
            self.warnings.append(f"{named}: `if` conditions are not supported here; ignored")
            return
        reasons = [
            f"`{key}` is not supported: it runs in line" for key in sorted(SYNCHRONOUS_KEYS & set(data))
        ]
        allowed = HANDLER_KEYS | ({"matcher"} if group_matcher is None else set())
        if unknown := sorted(set(data) - allowed - QUIET_KEYS - SYNCHRONOUS_KEYS):
            reasons.append(f"unknown key {', '.join(map(repr, unknown))} ignored")
        fields = {key: value for key, value in data.items() if key in allowed}
        if group_matcher is not None:
            fields["matcher"] = group_matcher
        try:
            valid = HookSettings.model_validate(fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            at = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            self.warnings.append(
                f"{named}: {at + ': ' if at else ''}{message[:1].lower() + message[1:]}; ignored"
            )
            return
        if reasons:
            self.warnings.append(f"{named}: {'; '.join(reasons)}")
        self.hooks.append(
            HookDefinition(
                event, valid.command, valid.matcher, valid.timeout, self.source, self.origin, self.plugin_root
            )
        )


def _matcher_problem(matcher: object) -> str | None:
    if not isinstance(matcher, str):
        return "matcher must be a string"
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"matcher {matcher!r} is not a regular expression ({exc})"
    return None


def claude_settings_hooks(
    path: Path,
    source: HookSource,
    *,
    plugin_root: Path | None = None,
    snapshot: ProjectFiles | None = None,
) -> tuple[list[HookDefinition], list[str], bool]:
    """The hooks of a Claude Code settings file (`{"hooks": {...}}`), its warnings, and whether it has any.

    A missing file has none; one that cannot be read or is not JSON is one warning. A plugin's
    `hooks/hooks.json` has the same shape: pass its folder as `plugin_root`. A project's file is
    read through `snapshot`, the bytes the trust digest covers.
    """
    try:
        text = snapshot.text(path) if snapshot is not None else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], [], False
    except (OSError, UnicodeDecodeError) as exc:
        return (
            [],
            [f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc}); its hooks are ignored"],
            False,
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); its hooks are ignored"], False
    if not isinstance(data, dict) or "hooks" not in data:
        return [], [], False
    hooks, warnings = parse_hooks(data["hooks"], source, path, plugin_root=plugin_root)
    return hooks, warnings, True


def project_claude_hooks(
    workdir: Path, snapshot: ProjectFiles | None = None
) -> tuple[list[HookDefinition], list[str], list[Path]]:
    """The hooks of the project's `.claude/settings.json` and `.claude/settings.local.json`.

    `snapshot`: the project's files as the trust digest reads them (read now when omitted).

    Returns:
        The hooks, their warnings, and the files that define hooks (for the trust digest).
    """
    hooks: list[HookDefinition] = []
    warnings: list[str] = []
    files: list[Path] = []
    for name in CLAUDE_SETTINGS_FILES:
        path = workdir / ".claude" / name
        found, said, has_hooks = claude_settings_hooks(path, "project", snapshot=snapshot)
        hooks += found
        warnings += said
        if has_hooks:
            files.append(path)
    return hooks, warnings, files


def project_hooks(
    workdir: Path, snapshot: ProjectFiles | None = None
) -> tuple[list[HookDefinition], list[str], Path | None]:
    """The hooks of the project's `.tui-assist/settings.toml`, its warnings, and the file (None: none).

    `snapshot`: the project's files as the trust digest reads them (read now when omitted).
    """
    from tui_assist.core.rule_files import PermissionsError, project_settings_path
    from tui_assist.session.rule_files import read_rules_file
    from tui_assist.session.trust import ProjectFiles

    path = project_settings_path(workdir)
    files = snapshot or ProjectFiles(workdir)
    if not files.is_file(path):
        return [], [], None
    try:
        data = read_rules_file(path, files)
    except PermissionsError as exc:
        return [], [str(exc)], None
    if "hooks" not in data:
        return [], [], None
    hooks, warnings = parse_hooks(data["hooks"], "project", path)
    return hooks, warnings, path
