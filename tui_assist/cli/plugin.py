"""`tui-assist plugin ...`: install, list, enable, disable and remove Claude Code plugins, and add
marketplaces (the work is in `session/plugins.py`; this turns it into text and asks)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from tui_assist.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error_line
from tui_assist.session.config_source import ConfigError

if TYPE_CHECKING:
    from tui_assist.session.config import Settings
    from tui_assist.session.plugins import PendingInstall, Plugin


def plugin(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `plugin` subcommand; a `PluginError` becomes a one-line usage error."""
    from tui_assist.paths import data_dir
    from tui_assist.session import plugins as found
    from tui_assist.session.plugins import PluginError

    folder = data_dir(settings.data_dir)
    action = args.plugin_command
    try:
        match action:
            case "install":
                return _install(args, folder)
            case "list":
                loaded = found.load_plugins(folder)
                _print_list(list(loaded.plugins), as_json=args.json)
                _warn("plugin list", loaded.warnings)
            case "remove":
                gone = found.remove_plugin(folder, args.name)
                print(f"removed {gone.name}{_version(gone)}")
            case "enable" | "disable":
                changed = found.set_enabled(folder, args.name, action == "enable")
                state = "enabled" if action == "enable" else "disabled"
                print(f"{args.name} {state}" if changed else f"{args.name} was already {state}")
            case _:
                return _marketplace(args, folder)
    except PluginError as exc:
        raise ConfigError(str(exc)) from None
    return EXIT_OK


def _install(args: argparse.Namespace, folder: Path) -> int:
    from tui_assist.session.plugins import prepare_install

    if not args.yes and not sys.stdin.isatty():
        print(
            error_line(
                "plugin install",
                "nothing installed: say --yes to install without being asked (no terminal to ask on)",
            ),
            file=sys.stderr,
        )
        return EXIT_USAGE
    with prepare_install(folder, args.source) as pending:
        print("\n".join(_preview(pending)))
        if not args.yes and not _agreed(f"Install {pending.plugin.name}? [y/N] "):
            print("nothing installed")
            return EXIT_FAILED
        installed = pending.complete()
    _warn("plugin install", pending.warnings)
    print(f"installed {installed.name}{_version(installed)} (enabled)")
    return EXIT_OK


def _preview(pending: PendingInstall) -> list[str]:
    plugin = pending.plugin
    title = f"Plugin {plugin.name}{_version(plugin)} from {pending.source}"
    lines = [title + (f": {plugin.description}" if plugin.description else "")]
    if pending.replaces is not None:
        lines.append(
            f"  replaces the installed {plugin.name}{' ' + pending.replaces if pending.replaces else ''}"
        )
    brings = pending.brings()
    lines += [f"  {line}" for line in brings] or ["  nothing this program can use"]
    return lines


def _agreed(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _print_list(plugins: list[Plugin], *, as_json: bool) -> None:
    if as_json:
        rows = [
            {
                "name": p.name,
                "version": p.version,
                "source": p.source,
                "marketplace": p.marketplace,
                "enabled": p.enabled,
                "root": str(p.root),
                "description": p.description,
            }
            for p in plugins
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not plugins:
        print("no plugins installed (tui-assist plugin install PATH|GIT_URL|NAME@MARKETPLACE)")
    for p in plugins:
        state = "enabled" if p.enabled else "disabled"
        print(f"{p.name}{_version(p)}  {state}  {p.source}")


def _marketplace(args: argparse.Namespace, folder: Path) -> int:
    from tui_assist.session.plugins import add_marketplace, load_marketplaces

    if args.marketplace_command == "add":
        market = add_marketplace(folder, args.source)
        print(f"added marketplace {market.name} ({len(market.plugins)} plugins)")
        print("\n".join(f"  {e.name}@{market.name}" + (f": {e.description}" if e.description else "")
                        for e in market.plugins))  # fmt: skip
        return EXIT_OK
    markets, warnings = load_marketplaces(folder)
    if args.json:
        rows = [
            {"name": m.name, "source": m.source, "plugins": [asdict(e) for e in m.plugins]} for m in markets
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif not markets:
        print("no marketplaces added (tui-assist plugin marketplace add PATH|GIT_URL)")
    for m in [] if args.json else markets:
        print(f"{m.name}  {m.source}")
        for e in m.plugins:
            note = f" (not installable: {e.unsupported})" if e.unsupported else ""
            print(f"  {e.name}{' ' + e.version if e.version else ''}{note}")
    _warn("plugin marketplace list", warnings)
    return EXIT_OK


def _version(plugin: Plugin) -> str:
    return f" {plugin.version}" if plugin.version else ""


def _warn(command: str, warnings: list[str] | tuple[str, ...]) -> None:
    for line in warnings:
        print(error_line(command, f"warning: {line}"), file=sys.stderr)
