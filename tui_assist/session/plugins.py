"""Claude Code plugins and marketplaces: installed into the data dir, listed, enabled, removed.

A plugin is a folder with `.claude-plugin/plugin.json` (`name`, `version`, `description`, and
optional custom paths `commands`, `agents`, `skills`, `hooks`, `mcpServers`) and the default
folders `commands/`, `agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`. A marketplace is a
folder or repository with `.claude-plugin/marketplace.json` listing plugins (`name`, `source`: a
path inside the marketplace or a git URL, `description`, `version`).

An install copies the plugin (a local folder) or clones it (`git clone --depth 1`, with no hooks,
no fsmonitor and no user or system git config) into `<data dir>/plugins/installed/NAME`, after
the caller showed what it brings (`PendingInstall.brings`) and the user agreed. Which plugins are
installed, from where and whether they are enabled lives in `<data dir>/plugins/state.json`,
replaced atomically. Installed plugins are the user's own choice, so project trust does not gate
them; everything else reads them through one call, `installed_plugins` (or `load_plugins`, which
also returns what could not be read).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

from tui_assist.session.plugin_fetch import PluginError, is_git_url
from tui_assist.session.plugin_fetch import fetch_source as _fetch
from tui_assist.session.plugin_fetch import normal_source as _normal_source
from tui_assist.tools.safe_io import write_atomically

__all__ = [
    "MANIFEST",
    "MARKETPLACE_MANIFEST",
    "Marketplace",
    "PendingInstall",
    "Plugin",
    "PluginError",
    "PluginsFound",
    "add_marketplace",
    "installed_plugins",
    "load_marketplaces",
    "load_plugins",
    "prepare_install",
    "remove_plugin",
    "set_enabled",
]

MANIFEST: Final = Path(".claude-plugin") / "plugin.json"
MARKETPLACE_MANIFEST: Final = Path(".claude-plugin") / "marketplace.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""A plugin's or marketplace's name: it becomes a folder name and the `PLUGIN:` of its commands."""
_METADATA_KEYS: Final = frozenset(
    {"$schema", "name", "version", "description", "author", "homepage", "repository", "license", "keywords"}
)
_COMPONENT_KEYS: Final = ("commands", "agents", "skills", "hooks", "mcpServers")


@dataclass(frozen=True, slots=True)
class Plugin:
    """One plugin as found on disk: what the other loaders read from it."""

    name: str
    root: Path
    """Its folder (`${CLAUDE_PLUGIN_ROOT}`)."""
    enabled: bool = True
    version: str | None = None
    description: str = ""
    source: str = ""
    """Where it was installed from: a path, a git URL, or `NAME@MARKETPLACE`."""
    marketplace: str | None = None
    commands_dir: Path | None = None
    """Markdown commands, offered as `/PLUGIN:NAME`; None when absent."""
    agents_dir: Path | None = None
    skills_dir: Path | None = None
    """Folders holding `SKILL.md`."""
    hooks_file: Path | None = None
    """A JSON file in Claude Code's hooks shape (`{"hooks": {EVENT: [...]}}`); may be the manifest."""
    mcp_file: Path | None = None
    """A `.mcp.json` (flat or with `mcpServers`), or the manifest when it lists them inline."""

    def brings(self) -> list[str]:
        """What the plugin adds, one line each: commands, agents, skills, hooks and MCP servers.

        Names are the ones sessions use (`PLUGIN:NAME`); paths inside the plugin read
        `${CLAUDE_PLUGIN_ROOT}/...`, wherever the plugin is now.
        """
        from tui_assist.session.mcp_config import plugin_mcp_servers

        root = str(self.root)
        lines = [f"command /{self.name}:{path.stem}" for path in _markdown_files(self.commands_dir)]
        lines += [f"agent {self.name}:{path.stem}: {path}" for path in _markdown_files(self.agents_dir)]
        lines += [f"skill {self.name}:{folder.name}" for folder in _skill_folders(self.skills_dir)]
        lines += [f"hook {line}" for line in _hook_lines(self.hooks_file)]
        lines += [f"MCP server {line}" for line in plugin_mcp_servers([self]).describe()]
        return [line.replace(root, "${CLAUDE_PLUGIN_ROOT}") for line in lines]


@dataclass(frozen=True, slots=True)
class PluginsFound:
    """The installed plugins, and one line per one that could not be read fully."""

    plugins: tuple[Plugin, ...] = ()
    warnings: tuple[str, ...] = ()
    state_file: Path | None = None


@dataclass(frozen=True, slots=True)
class MarketplaceEntry:
    """One plugin a marketplace lists."""

    name: str
    source: str
    """A path inside the marketplace's folder, or a git URL ("" when `unsupported`)."""
    description: str = ""
    version: str | None = None
    ref: str | None = None
    """The branch or tag to clone (a git source's `ref`)."""
    unsupported: str | None = None
    """Why the entry's source cannot be fetched here (an `npm` source, say)."""


@dataclass(frozen=True, slots=True)
class Marketplace:
    """An added marketplace: its copy in the data dir and the plugins it lists."""

    name: str
    root: Path
    source: str
    plugins: tuple[MarketplaceEntry, ...] = ()


def installed_plugins(data_dir: Path) -> list[Plugin]:
    """The installed plugins, enabled or not (what command, agent, skill, hook and MCP loaders read).

    Args:
        data_dir: The program's data dir.
    """
    return list(load_plugins(data_dir).plugins)


def load_plugins(data_dir: Path) -> PluginsFound:
    """The installed plugins, and what could not be read (one line each, naming the file)."""
    state = _State.read(data_dir)
    warnings = list(state.warnings)
    plugins: list[Plugin] = []
    for name, entry in state.plugins.items():
        root = _installed_dir(data_dir) / name
        if not root.is_dir():
            warnings.append(f"{state.path}: plugin {name!r} is recorded but {root} is missing; skipped")
            continue
        plugin = read_plugin(root, warnings, fallback_name=name)
        recorded = entry.get("version")
        plugins.append(
            _with(
                plugin,
                name=name,
                version=plugin.version or (str(recorded) if recorded is not None else None),
                enabled=bool(entry.get("enabled", True)),
                source=str(entry.get("source", "")),
                marketplace=cast(str | None, entry.get("marketplace")),
            )
        )
    return PluginsFound(tuple(plugins), tuple(warnings), state.path)


def read_plugin(root: Path, warnings: list[str], *, fallback_name: str | None = None) -> Plugin:
    """The plugin in `root`: its manifest (optional, as in Claude Code) and its component paths.

    Args:
        root: The plugin's folder.
        warnings: Gets one line per manifest entry that could not be used.
        fallback_name: The name when the manifest gives none (default: the folder's name).
    """
    manifest_path = root / MANIFEST
    manifest: Mapping[str, Any] = {}
    if manifest_path.is_file():
        manifest = _read_json_object(manifest_path, warnings)
    unknown = sorted(set(manifest) - _METADATA_KEYS - set(_COMPONENT_KEYS))
    if unknown:
        warnings.append(f"{manifest_path}: {', '.join(unknown)} not supported; ignored")
    name = manifest.get("name") if isinstance(manifest.get("name"), str) else None
    version = manifest.get("version")

    def folder(key: str, default: str) -> Path | None:
        return _component(root, manifest_path, manifest.get(key), default, warnings, want_dir=True)

    def file(key: str, default: str) -> Path | None:
        value = manifest.get(key)
        if isinstance(value, Mapping):  # listed inline in the manifest
            return manifest_path
        return _component(root, manifest_path, value, default, warnings, want_dir=False)

    description = manifest.get("description")
    return Plugin(
        name=cast(str, name or fallback_name or root.name),
        root=root,
        version=str(version) if isinstance(version, str | int | float) else None,
        description=description if isinstance(description, str) else "",
        commands_dir=folder("commands", "commands"),
        agents_dir=folder("agents", "agents"),
        skills_dir=folder("skills", "skills"),
        hooks_file=file("hooks", "hooks/hooks.json"),
        mcp_file=file("mcpServers", ".mcp.json"),
    )


@dataclass(slots=True)
class PendingInstall:
    """A plugin fetched into a staging folder, not installed yet: show `brings()`, then `complete()`.

    Use as a context manager: leaving it without `complete()` deletes the staged copy.
    """

    data_dir: Path
    plugin: Plugin
    """As staged (its `root` is the staging folder)."""
    source: str
    marketplace: str | None = None
    replaces: str | None = None
    """The version of the installed plugin of that name this replaces ("" when it has none), or None."""
    warnings: list[str] = field(default_factory=lambda: list[str]())
    _staging: Path | None = None

    def brings(self) -> list[str]:
        """What the plugin adds, one line each."""
        return self.plugin.brings()

    def complete(self) -> Plugin:
        """Move the staged plugin into place and record it (enabled); returns it as installed."""
        assert self._staging is not None, "completed twice"
        target = _installed_dir(self.data_dir) / self.plugin.name
        if target.exists():
            shutil.rmtree(target)
        self._staging_plugin.rename(target)  # a folder moved within the data dir
        self.discard()
        state = _State.read(self.data_dir)
        state.plugins[self.plugin.name] = {
            "source": self.source,
            "marketplace": self.marketplace,
            "version": self.plugin.version,
            "enabled": True,
        }
        state.write()
        return _with(read_plugin(target, [], fallback_name=self.plugin.name), source=self.source)

    @property
    def _staging_plugin(self) -> Path:
        assert self._staging is not None
        return self._staging / "plugin"

    def discard(self) -> None:
        """Delete the staging folder (and the staged copy, unless `complete` moved it)."""
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def __enter__(self) -> PendingInstall:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def prepare_install(data_dir: Path, spec: str) -> PendingInstall:
    """Fetch the plugin `spec` names into a staging folder and read it (nothing is installed yet).

    Args:
        data_dir: The program's data dir.
        spec: A folder, a git URL (`https://`, `ssh://`, `git@`, `file://`), or `NAME@MARKETPLACE`.

    Raises:
        PluginError: when it cannot be fetched or is not a plugin.
    """
    source, marketplace, listed = _resolve(data_dir, spec)
    plugins_dir = _plugins_dir(data_dir)
    _installed_dir(data_dir).mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=plugins_dir))
    pending: PendingInstall | None = None
    try:
        warnings = _fetch(source, staging / "plugin", listed.ref if listed else None)
        plugin = read_plugin(staging / "plugin", warnings, fallback_name=listed.name if listed else None)
        if listed is not None:
            plugin = _with(
                plugin,
                version=plugin.version or listed.version,
                description=plugin.description or listed.description,
            )
        _check_name(plugin.name, "plugin")
        state = _State.read(data_dir)
        old = state.plugins.get(plugin.name)
        replaces = None if old is None else str(old.get("version") or "")
        pending = PendingInstall(
            data_dir, plugin, spec if marketplace else source, marketplace, replaces, warnings, staging
        )
        return pending
    finally:
        if pending is None:
            shutil.rmtree(staging, ignore_errors=True)


def remove_plugin(data_dir: Path, name: str) -> Plugin:
    """Uninstall `name`: its folder and its record. Returns it as it was.

    Raises:
        PluginError: when no such plugin is installed.
    """
    plugin = _installed(data_dir, name)
    state = _State.read(data_dir)
    state.plugins.pop(name, None)
    state.write()
    shutil.rmtree(plugin.root, ignore_errors=True)
    return plugin


def set_enabled(data_dir: Path, name: str, enabled: bool) -> bool:
    """Enable or disable `name`. Returns whether that changed anything.

    Raises:
        PluginError: when no such plugin is installed.
    """
    _installed(data_dir, name)
    state = _State.read(data_dir)
    entry = state.plugins[name]
    if bool(entry.get("enabled", True)) == enabled:
        return False
    entry["enabled"] = enabled
    state.write()
    return True


def add_marketplace(data_dir: Path, source: str) -> Marketplace:
    """Copy or clone the marketplace at `source` into the data dir and record it.

    Adding one again replaces the copy (that is how its list is updated).

    Raises:
        PluginError: when it cannot be fetched or has no valid `.claude-plugin/marketplace.json`.
    """
    source = _normal_source(source)
    folder = _plugins_dir(data_dir) / "marketplaces"
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    try:
        _fetch(source, staging / "copy")
        market = _read_marketplace(staging / "copy", source)
        target = folder / market.name
        if target.exists():
            shutil.rmtree(target)
        (staging / "copy").rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    state = _State.read(data_dir)
    state.marketplaces[market.name] = {"source": source}
    state.write()
    return _read_marketplace(target, source)


def load_marketplaces(data_dir: Path) -> tuple[list[Marketplace], list[str]]:
    """The added marketplaces, and one line per one that could not be read."""
    state = _State.read(data_dir)
    found: list[Marketplace] = []
    warnings = list(state.warnings)
    for name, entry in state.marketplaces.items():
        try:
            found.append(
                _read_marketplace(
                    _plugins_dir(data_dir) / "marketplaces" / name, str(entry.get("source", ""))
                )
            )
        except PluginError as exc:
            warnings.append(str(exc))
    return found, warnings


# -- reading


def _component(
    root: Path, manifest: Path, value: object, default: str, warnings: list[str], *, want_dir: bool
) -> Path | None:
    """The path a manifest key names (relative to the plugin's root, inside it), else the default's."""
    if isinstance(value, list) and value:
        items = cast(list[object], value)
        if len(items) > 1:
            warnings.append(f"{manifest}: only the first of several paths is read ({items[0]!r})")
        value = items[0]
    if value is not None and not isinstance(value, str):
        warnings.append(f"{manifest}: {value!r} is not a path; the default {default} is read")
        value = None
    path = (root / (value or default)).resolve()
    if not path.is_relative_to(root.resolve()):
        warnings.append(f"{manifest}: {value} is outside the plugin; ignored")
        return None
    if want_dir and path.is_dir() or not want_dir and path.is_file():
        return path
    if value is not None:
        warnings.append(f"{manifest}: {value} is not there; ignored")
    return None


def _read_json_object(path: Path, warnings: list[str]) -> Mapping[str, Any]:
    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.append(f"{path}: cannot read it ({exc}); ignored")
        return {}
    if not isinstance(data, Mapping):
        warnings.append(f"{path}: not a JSON object; ignored")
        return {}
    return cast(Mapping[str, Any], data)


def _markdown_files(folder: Path | None) -> list[Path]:
    return sorted(folder.rglob("*.md")) if folder is not None else []


def _skill_folders(folder: Path | None) -> list[Path]:
    return sorted(p.parent for p in folder.glob("*/SKILL.md")) if folder is not None else []


def _hook_lines(path: Path | None) -> list[str]:
    """`EVENT [matcher]: command` for each command hook in a Claude Code hooks file."""
    if path is None:
        return []
    table = _read_json_object(path, []).get("hooks")
    lines: list[str] = []
    for event, groups in cast(Mapping[str, Any], table).items() if isinstance(table, Mapping) else ():
        for group in cast(list[Any], groups) if isinstance(groups, list) else ():
            if not isinstance(group, Mapping):
                continue
            group = cast(Mapping[str, Any], group)
            matcher = group.get("matcher")
            where = f" [{matcher}]" if isinstance(matcher, str) and matcher else ""
            for hook in cast(list[Any], group.get("hooks") or []):
                if isinstance(hook, Mapping):
                    hook = cast(Mapping[str, Any], hook)
                    lines.append(f"{event}{where}: {hook.get('command') or hook.get('type')}")
    return lines


def _read_marketplace(root: Path, source: str) -> Marketplace:
    path = root / MARKETPLACE_MANIFEST
    if not path.is_file():
        raise PluginError(f"{source} is not a marketplace: it has no {MARKETPLACE_MANIFEST}")
    warnings: list[str] = []
    data = _read_json_object(path, warnings)
    if warnings:
        raise PluginError(warnings[0])
    name = data.get("name")
    if not isinstance(name, str):
        raise PluginError(f"{path}: no name")
    _check_name(name, "marketplace")
    metadata = data.get("metadata")
    plugin_root = (
        cast(Mapping[str, Any], metadata).get("pluginRoot") if isinstance(metadata, Mapping) else None
    )
    entries: list[MarketplaceEntry] = []
    for raw in cast(list[Any], data.get("plugins") or []):
        if not isinstance(raw, Mapping) or not isinstance(cast(Mapping[str, Any], raw).get("name"), str):
            continue
        raw = cast(Mapping[str, Any], raw)
        version = raw.get("version")
        where, ref, unsupported = _entry_source(
            raw.get("source"), plugin_root if isinstance(plugin_root, str) else None
        )
        entries.append(
            MarketplaceEntry(
                raw["name"],
                where,
                description=str(raw.get("description") or ""),
                version=str(version) if version is not None else None,
                ref=ref,
                unsupported=unsupported,
            )
        )
    return Marketplace(name, root, source, tuple(entries))


def _entry_source(value: object, plugin_root: str | None) -> tuple[str, str | None, str | None]:
    """A marketplace entry's `source` as (path or URL, ref, why it is unsupported).

    Claude Code's shapes: a path relative to the marketplace (a bare name is under
    `metadata.pluginRoot`), `{"source": "github", "repo", "ref"?}`, `{"source": "url", "url", "ref"?}`.
    """
    if isinstance(value, str):
        bare = plugin_root is not None and not value.startswith(".") and "/" not in value
        return (f"{plugin_root.rstrip('/')}/{value}" if bare and plugin_root else value), None, None
    if not isinstance(value, Mapping):
        return "", None, f"its source {value!r} is not a path or an object"
    value = cast(Mapping[str, Any], value)
    kind = value.get("source")
    ref = value.get("ref") if isinstance(value.get("ref"), str) else None
    if kind == "github" and isinstance(value.get("repo"), str):
        return f"https://github.com/{value['repo']}.git", ref, None
    if kind in ("url", "git", None) and isinstance(value.get("url"), str):
        return value["url"], ref, None
    return "", None, f"its source ({kind}) is not supported here"


# -- fetching


def _resolve(data_dir: Path, spec: str) -> tuple[str, str | None, MarketplaceEntry | None]:
    """Where to fetch `spec` from, the marketplace it names, and its marketplace entry (its `ref`)."""
    name, at, market_name = spec.rpartition("@")
    if not at or is_git_url(spec) or "/" in market_name or not name or Path(spec).is_dir():
        return _normal_source(spec), None, None
    markets, _ = load_marketplaces(data_dir)
    market = next((m for m in markets if m.name == market_name), None)
    if market is None:
        known = ", ".join(m.name for m in markets) or "none added"
        raise PluginError(
            f"no marketplace {market_name!r} ({known}; add one with tui-assist plugin marketplace add)"
        )
    entry = next((e for e in market.plugins if e.name == name), None)
    if entry is None:
        listed = ", ".join(e.name for e in market.plugins) or "none"
        raise PluginError(f"marketplace {market_name} lists no plugin {name!r} (it lists: {listed})")
    if entry.unsupported is not None:
        raise PluginError(f"marketplace {market_name}: plugin {name}: {entry.unsupported}")
    if is_git_url(entry.source):
        return entry.source, market_name, entry
    path = (market.root / entry.source).resolve()
    if not path.is_relative_to(market.root.resolve()) or not path.is_dir():
        raise PluginError(
            f"marketplace {market_name}: plugin {name}'s source {entry.source} is not a folder in it"
        )
    return str(path), market_name, entry


# -- state


def _plugins_dir(data_dir: Path) -> Path:
    return data_dir / "plugins"


def _installed_dir(data_dir: Path) -> Path:
    return _plugins_dir(data_dir) / "installed"


def _check_name(name: str, what: str) -> None:
    if not _NAME.fullmatch(name):
        raise PluginError(f"the {what} name {name!r} is not usable (letters, digits, '.', '_', '-')")


def _installed(data_dir: Path, name: str) -> Plugin:
    found = load_plugins(data_dir)
    plugin = next((p for p in found.plugins if p.name == name), None)
    if plugin is None:
        names = ", ".join(p.name for p in found.plugins) or "none installed"
        raise PluginError(f"no plugin {name!r} ({names})")
    return plugin


def _with(plugin: Plugin, **changes: Any) -> Plugin:
    from dataclasses import replace

    return replace(plugin, **changes)


@dataclass(slots=True)
class _State:
    """The plugins' `state.json`.

    Its shape: `{"plugins": {NAME: {source, marketplace, version, enabled}}, "marketplaces":
    {NAME: {source}}}`.
    """

    path: Path
    plugins: dict[str, dict[str, Any]] = field(default_factory=lambda: dict[str, dict[str, Any]]())
    marketplaces: dict[str, dict[str, Any]] = field(default_factory=lambda: dict[str, dict[str, Any]]())
    warnings: list[str] = field(default_factory=lambda: list[str]())

    @classmethod
    def read(cls, data_dir: Path) -> _State:
        state = cls(_plugins_dir(data_dir) / "state.json")
        if not state.path.exists():
            return state
        data = _read_json_object(state.path, state.warnings)
        for key in ("plugins", "marketplaces"):
            table = data.get(key, {})
            if isinstance(table, Mapping):
                entries = {
                    str(k): dict(cast(Mapping[str, Any], v))
                    for k, v in cast(Mapping[str, Any], table).items()
                    if isinstance(v, Mapping) and _NAME.fullmatch(str(k))
                }
                setattr(state, key, entries)
        return state

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"plugins": self.plugins, "marketplaces": self.marketplaces}
        write_atomically(self.path, (json.dumps(data, indent=2) + "\n").encode(), new_mode=0o600)
