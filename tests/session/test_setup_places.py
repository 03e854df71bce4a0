"""`SetupPlaces`: the one list of places the loaders read, and an installed plugin's parts in it."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_plugin import make_plugin, write
from tui_assist.cli import main
from tui_assist.session.config import Settings
from tui_assist.session.extensions import load_extensions
from tui_assist.session.plugins import read_plugin
from tui_assist.session.setup_places import SetupPlaces, plugin_hooks


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A data dir with the plugin `greet` installed (enabled)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    folder = tmp_path / "data"
    assert (
        main(["plugin", "install", str(make_plugin(tmp_path / "src")), "--yes", "--data-dir", str(folder)])
        == 0
    )
    capsys.readouterr()
    return folder


def test_an_enabled_plugins_agents_skills_hooks_and_commands_load_under_its_name(
    tmp_path: Path, data: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    found = load_extensions(Settings(workdir=work), tmp_path / "config", data)
    root = data / "plugins" / "installed" / "greet"
    assert [p.name for p in found.plugins] == ["greet"]
    assert [a.spec.name for a in found.agents] == ["greet:reviewer"] and not found.agents[0].project
    assert [s.name for s in found.active_skills()] == ["greet:lint"]
    (hook,) = found.active_hooks()  # the user's own: no project trust needed
    assert (hook.event, hook.matcher, hook.plugin_root) == ("PostToolUse", "Edit", root)
    assert found.warnings == [] and found.pending() == []

    assert found.places is not None
    commands = found.places.command_loader().load().commands
    hello, standup = commands["greet:hello"], commands["greet:standup"]
    assert (hello.command.origin, hello.command.description) == ("plugin:greet", "Say hello")
    assert standup.command.origin == "plugin:greet:team" and not hello.project
    assert hello.expand("Ann") == "Say hello to Ann"


def test_a_disabled_plugin_brings_nothing(tmp_path: Path, data: Path) -> None:
    assert main(["plugin", "disable", "greet", "--data-dir", str(data)]) == 0
    places = SetupPlaces.of(Settings(workdir=tmp_path), tmp_path / "config", data)
    assert [p.name for p in places.installed.plugins] == ["greet"] and places.plugins == ()
    found = load_extensions(Settings(workdir=tmp_path), tmp_path / "config", data)
    assert (found.agents, found.skills, found.hooks) == ([], [], [])
    assert not any(name.startswith("greet:") for name in places.command_loader().load().commands)


def test_hooks_listed_inline_in_the_manifest(tmp_path: Path) -> None:
    root = tmp_path / "inline"
    hook = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/check.sh"}
    manifest = {"name": "inline", "hooks": {"hooks": {"Stop": [{"hooks": [hook]}]}}}
    write(root / ".claude-plugin" / "plugin.json", json.dumps(manifest))
    warnings: list[str] = []
    plugin = read_plugin(root, warnings)
    assert plugin.hooks_file == root / ".claude-plugin" / "plugin.json" and warnings == []
    hooks, said = plugin_hooks(plugin, plugin.hooks_file)
    assert [(h.event, h.command, h.plugin_root) for h in hooks] == [("Stop", hook["command"], root)]
    assert said == []
