"""The files permission rules are kept in: reading their lists, and editing them in place.

Rules live under `[permissions]` (`allow = [...]`, `deny = [...]`) of two TOML files: the user's
`config.toml` and the project's `<workdir>/.tui-assist/settings.toml`. Reading is forgiving (a
list that is not a list of strings becomes a warning); editing keeps the rest of the file as it
was and replaces the file atomically. `tui_assist.core.permissions` turns the strings into rules.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

__all__ = [
    "PROJECT_DIR",
    "PROJECT_FILE",
    "PermissionsError",
    "RuleEffect",
    "edit_rules_file",
    "project_settings_path",
    "read_rules_file",
    "rule_strings",
]

RuleEffect = Literal["allow", "deny"]

PROJECT_DIR = ".tui-assist"
PROJECT_FILE = "settings.toml"


class PermissionsError(Exception):
    """A rules file cannot be read or written; the message is one line for users."""


def project_settings_path(workdir: Path) -> Path:
    """`<workdir>/.tui-assist/settings.toml`: the project's rules file."""
    return workdir / PROJECT_DIR / PROJECT_FILE


def read_rules_file(path: Path) -> Mapping[str, Any]:
    """The parsed TOML of a rules file.

    Args:
        path: The file.

    Returns:
        Its tables and values.

    Raises:
        PermissionsError: when it cannot be read or is not TOML (`PATH: cannot read it (WHY)`).
    """
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PermissionsError(f"{path}: cannot read it ({exc})") from exc


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


def edit_rules_file(
    path: Path, effect: RuleEffect, *, add: Sequence[str] = (), remove: str | None = None
) -> None:
    """Add rules to (or remove one from) `[permissions] EFFECT` of a TOML file, keeping the rest.

    tomlkit edits the document in place, so comments, order and formatting of everything else
    survive; the new text replaces the file atomically (a crash leaves the old or the new file).

    Args:
        path: The file (created, with its folder, when missing and there is something to add).
        effect: `allow` or `deny`.
        add: Rule strings to append (those already listed are not repeated).
        remove: A rule string to take out, as written in the file.

    Raises:
        PermissionsError: when the file cannot be read, is not TOML, has a `[permissions]` or a
            list of another shape, or cannot be written.
    """
    import tomlkit  # only when rules are saved or removed
    from tomlkit.exceptions import TOMLKitError

    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        document = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise PermissionsError(f"cannot read {path}: {exc}") from exc
    section: Any = cast(dict[str, Any], document).get("permissions")
    if section is None:
        if not add:
            return
        section = tomlkit.table()
        document["permissions"] = section
    if not isinstance(section, dict):
        raise PermissionsError(f"cannot edit {path}: [permissions] is not a table")
    values: Any = cast(dict[str, Any], section).get(effect)
    if values is None:
        if not add:
            return
        values = tomlkit.array()
        section[effect] = values
    if not isinstance(values, list):
        raise PermissionsError(f"cannot edit {path}: permissions.{effect} is not a list")
    items = cast(list[Any], values)
    for rule in add:
        if rule not in items:
            items.append(rule)
    if remove is not None:
        while remove in items:
            items.remove(remove)
    _write_atomically(path, tomlkit.dumps(document))


def _write_atomically(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise PermissionsError(f"cannot write {path}: {exc}") from exc
