"""The permission rules files, read and written: the I/O behind the core's rule model.

The core (`tui_assist.core.permissions`) knows rules and where they came from, and does no file
I/O; this module reads the user's and the project's files into a `Permissions` and is the
`RulesFiles` it saves and removes rules through. Editing keeps the rest of a file as it was
(tomlkit edits the document in place) and replaces the file atomically
(`tui_assist.tools.safe_io.write_atomically`: a crash leaves the old or the new file).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tui_assist.core.permissions import PROJECT_SOURCE, USER_SOURCE, Permissions, RuleSource
from tui_assist.core.rule_files import PermissionsError, RuleEffect, project_settings_path, rule_strings

if TYPE_CHECKING:
    from tui_assist.session.trust import ProjectFiles

__all__ = [
    "TomlRulesFiles",
    "claude_settings_paths",
    "edit_rules_file",
    "load_permissions",
    "project_permissions",
    "read_rules_file",
]

CLAUDE_SETTINGS = ("settings.json", "settings.local.json")
"""Claude Code's project settings files, in `<workdir>/.claude/`."""


def claude_settings_paths(workdir: Path) -> list[Path]:
    """`<workdir>/.claude/settings.json` and `settings.local.json`: Claude Code's project settings."""
    return [workdir / ".claude" / name for name in CLAUDE_SETTINGS]


def load_permissions(
    workdir: Path | None,
    *,
    user_allow: Sequence[str] = (),
    user_deny: Sequence[str] = (),
    user_file: Path | None = None,
    claude_user_file: Path | None = None,
    snapshot: ProjectFiles | None = None,
) -> Permissions:
    """The rules of the user's settings plus those of the project's files under `workdir`.

    The project's allow rules take effect only once `Permissions.project_trusted` is set (the
    session sets it from the project's trust); its deny rules at once.

    Args:
        workdir: The project's working directory (None: no project rules, nothing saved).
        user_allow: `[permissions] allow` of the user's config.
        user_deny: `[permissions] deny` of the user's config.
        user_file: The user's config file, so its rules can be removed there.
        claude_user_file: The user's Claude Code `settings.json` (None: not read).
        snapshot: The project's files as read for the trust digest (read now when omitted).

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
    if claude_user_file is not None and claude_user_file.is_file():
        try:
            text = claude_user_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            permissions.warnings.append(f"{claude_user_file}: cannot read it ({exc}); its rules are ignored")
        else:
            _add_claude_rules(permissions, claude_user_file, text, RuleSource(USER_SOURCE, claude_user_file))
    if workdir is not None:
        project = project_permissions(workdir, snapshot)
        permissions.rules += project.rules
        permissions.warnings += project.warnings
    return permissions


def project_permissions(workdir: Path, snapshot: ProjectFiles | None = None) -> Permissions:
    """The rules of the project's own files alone: `.tui-assist/settings.toml`, `.claude/settings*.json`.

    Args:
        workdir: The project's working directory.
        snapshot: The project's files as read for the trust digest (read now when omitted).

    Returns:
        The rules (source `project`), with a warning per file or entry that could not be used.
    """
    from tui_assist.session.trust import ProjectFiles

    files = snapshot or ProjectFiles(workdir)
    permissions = Permissions()
    path = project_settings_path(workdir)
    if files.is_file(path):
        try:
            data = read_rules_file(path, files)
        except PermissionsError as exc:
            permissions.warnings.append(f"{exc}; its rules are ignored")
        else:
            source = RuleSource(PROJECT_SOURCE, path)
            for effect in ("allow", "deny"):
                permissions.extend(rule_strings(data, effect, path, permissions.warnings), effect, source)
    for path in claude_settings_paths(workdir):
        if not files.is_file(path):
            continue
        try:
            text = files.text(path)
        except (OSError, UnicodeDecodeError) as exc:
            permissions.warnings.append(f"{path}: cannot read it ({exc}); its rules are ignored")
            continue
        _add_claude_rules(permissions, path, text, RuleSource(PROJECT_SOURCE, path))
    return permissions


def _add_claude_rules(permissions: Permissions, path: Path, text: str, source: RuleSource) -> None:
    """Add the `permissions.allow`/`deny` of a Claude Code `settings.json` (its other keys are not rules)."""
    try:
        data: object = json.loads(text)
    except json.JSONDecodeError as exc:
        permissions.warnings.append(f"{path}: not JSON ({exc}); its rules are ignored")
        return
    section = cast(Mapping[str, Any], data).get("permissions") if isinstance(data, Mapping) else None
    if section is None:
        return
    if not isinstance(section, Mapping):
        permissions.warnings.append(f"{path}: permissions is not an object; ignored")
        return
    for effect in ("allow", "deny"):
        permissions.extend_claude(
            rule_strings({"permissions": section}, effect, path, permissions.warnings), effect, source
        )


class TomlRulesFiles:
    """The core's `RulesFiles` port over the TOML files (`edit_rules_file`)."""

    def __init__(self, after_edit: Callable[[Path, bytes | None], None] | None = None) -> None:
        """Edit the rules files; `after_edit(path, bytes_before)` is called after each edit."""
        self.after_edit = after_edit

    def edit(
        self, path: Path, effect: RuleEffect, *, add: Sequence[str] = (), remove: str | None = None
    ) -> None:
        """See `edit_rules_file` (`edit_claude_settings` for a Claude Code `settings.json`)."""
        try:
            before: bytes | None = path.read_bytes()
        except OSError:
            before = None
        if path.suffix == ".json":
            edit_claude_settings(path, effect, add=add, remove=remove)
        else:
            edit_rules_file(path, effect, add=add, remove=remove)
        if self.after_edit is not None:
            self.after_edit(path, before)


def read_rules_file(path: Path, snapshot: ProjectFiles | None = None) -> Mapping[str, Any]:
    """The parsed TOML of a rules file.

    Args:
        path: The file.
        snapshot: Read the file through it (the bytes the trust digest covers); else read now.

    Returns:
        Its tables and values.

    Raises:
        PermissionsError: when it cannot be read or is not TOML (`PATH: cannot read it (WHY)`).
    """
    try:
        text = snapshot.text(path) if snapshot is not None else path.read_text(encoding="utf-8")
        return tomllib.loads(text)
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


def edit_claude_settings(
    path: Path, effect: RuleEffect, *, add: Sequence[str] = (), remove: str | None = None
) -> None:
    """Add rules to (or remove one from) `permissions.EFFECT` of a Claude Code `settings.json`.

    The rest of the object is kept (written back with two-space indents), atomically.

    Raises:
        PermissionsError: when the file cannot be read, is not a JSON object, has a `permissions`
            or a list of another shape, or cannot be written.
    """
    from tui_assist.tools.safe_io import write_atomically

    try:
        data: object = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PermissionsError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise PermissionsError(f"cannot edit {path}: it is not a JSON object")
    document = cast(dict[str, Any], data)
    section: object = document.setdefault("permissions", {})
    if not isinstance(section, dict):
        raise PermissionsError(f"cannot edit {path}: permissions is not an object")
    values: object = cast(dict[str, Any], section).setdefault(effect, [])
    if not isinstance(values, list):
        raise PermissionsError(f"cannot edit {path}: permissions.{effect} is not a list")
    items = cast(list[Any], values)
    items += [rule for rule in add if rule not in items]
    items[:] = [item for item in items if item != remove]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, (json.dumps(document, indent=2) + "\n").encode("utf-8"), new_mode=0o644)
    except OSError as exc:
        raise PermissionsError(f"cannot write {path}: {exc}") from exc
