"""The permission rules files, read and written: the I/O behind the core's rule model.

The core (`tui_assist.core.permissions`) knows rules and where they came from, and does no file
I/O; this module reads the user's and the project's files into a `Permissions` and is the
`RulesFiles` it saves and removes rules through. Editing keeps the rest of a file as it was
(tomlkit edits the document in place) and replaces the file atomically
(`tui_assist.tools.safe_io.write_atomically`: a crash leaves the old or the new file).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from tui_assist.core.permissions import PROJECT_SOURCE, USER_SOURCE, Permissions, RuleSource
from tui_assist.core.rule_files import PermissionsError, RuleEffect, project_settings_path, rule_strings

__all__ = ["TomlRulesFiles", "edit_rules_file", "load_permissions", "read_rules_file"]


def load_permissions(
    workdir: Path | None,
    *,
    user_allow: Sequence[str] = (),
    user_deny: Sequence[str] = (),
    user_file: Path | None = None,
) -> Permissions:
    """The rules of the user's settings plus those of the project file under `workdir`.

    Args:
        workdir: The project's working directory (None: no project rules, nothing saved).
        user_allow: `[permissions] allow` of the user's config.
        user_deny: `[permissions] deny` of the user's config.
        user_file: The user's config file, so its rules can be removed there.

    Returns:
        The rules, able to save and remove rules in their files. Invalid rules and unreadable
        files are skipped with a line in `warnings`.
    """
    permissions = Permissions(
        project_file=project_settings_path(workdir) if workdir is not None else None,
        files=TomlRulesFiles(),
    )
    user = RuleSource(USER_SOURCE, user_file)
    permissions.extend(user_allow, "allow", user)
    permissions.extend(user_deny, "deny", user)
    if permissions.project_file is not None and permissions.project_file.is_file():
        path = permissions.project_file
        try:
            data = read_rules_file(path)
        except PermissionsError as exc:
            permissions.warnings.append(f"{exc}; its rules are ignored")
        else:
            project = RuleSource(PROJECT_SOURCE, path)
            for effect in ("allow", "deny"):
                permissions.extend(rule_strings(data, effect, path, permissions.warnings), effect, project)
    return permissions


class TomlRulesFiles:
    """The core's `RulesFiles` port over the TOML files (`edit_rules_file`)."""

    def edit(
        self, path: Path, effect: RuleEffect, *, add: Sequence[str] = (), remove: str | None = None
    ) -> None:
        """See `edit_rules_file`."""
        edit_rules_file(path, effect, add=add, remove=remove)


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

    from tui_assist.tools.safe_io import write_atomically

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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, tomlkit.dumps(document).encode("utf-8"), new_mode=0o644)
    except OSError as exc:
        raise PermissionsError(f"cannot write {path}: {exc}") from exc
