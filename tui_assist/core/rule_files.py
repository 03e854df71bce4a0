"""The files permission rules are kept in, as the core sees them: names, lists and the port that edits them.

Rules live under `[permissions]` (`allow = [...]`, `deny = [...]`) of two TOML files: the user's
`config.toml` and the project's `<workdir>/.tui-assist/settings.toml`. Reading a parsed file is
forgiving (a list that is not a list of strings becomes a warning). The core does no file I/O:
the application layer reads the files and edits them (`tui_assist.session.rule_files`, through the
`RulesFiles` port); `tui_assist.core.permissions` turns the strings into rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, cast

__all__ = [
    "PROJECT_DIR",
    "PROJECT_FILE",
    "PermissionsError",
    "RuleEffect",
    "RulesFiles",
    "project_settings_path",
    "rule_strings",
]

RuleEffect = Literal["allow", "deny"]

PROJECT_DIR = ".tui-assist"
PROJECT_FILE = "settings.toml"


class PermissionsError(Exception):
    """A rules file cannot be read or written; the message is one line for users."""


class RulesFiles(Protocol):
    """Edits the rules files (the application layer implements it; the core does no I/O)."""

    def edit(
        self, path: Path, effect: RuleEffect, *, add: Sequence[str] = (), remove: str | None = None
    ) -> None:
        """Add rules to (or remove one from) `[permissions] EFFECT` of a file, keeping the rest.

        Raises:
            PermissionsError: when the file cannot be read, edited or written.
        """
        ...


def project_settings_path(workdir: Path) -> Path:
    """`<workdir>/.tui-assist/settings.toml`: the project's rules file."""
    return workdir / PROJECT_DIR / PROJECT_FILE


def rule_strings(data: Mapping[str, Any], effect: RuleEffect, path: Path, warnings: list[str]) -> list[str]:
    """The rule strings of `[permissions] EFFECT` in a parsed rules file.

    Args:
        data: The file's parsed TOML.
        effect: `allow` or `deny`.
        path: The file, for warnings.
        warnings: Where a malformed section or list is reported (it then counts as empty).

    Returns:
        The strings, unparsed; empty when the list is missing or malformed.
    """
    section = data.get("permissions", {})
    if not isinstance(section, dict):
        warnings.append(f"{path}: [permissions] is not a table; ignored")
        return []
    value = cast(dict[str, Any], section).get(effect, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in cast(list[Any], value)):
        warnings.append(f"{path}: permissions.{effect} is not a list of strings; ignored")
        return []
    return cast(list[str], value)
