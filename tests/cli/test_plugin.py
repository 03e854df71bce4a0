"""`tui-assist plugin ...` as a user runs it: Claude Code plugins installed from a folder, a real
local git repository and a marketplace, listed, disabled, enabled and removed; and an enabled
plugin's MCP server started for real."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.mcp_http import SERVER
from tui_assist.cli import main
from tui_assist.core.tooling import ToolContext
from tui_assist.session.config import Settings
from tui_assist.session.mcp_config import plugin_mcp_servers, session_mcp_servers
from tui_assist.session.plugins import installed_plugins, load_plugins
from tui_assist.tools.mcp import McpManager


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_plugin(root: Path, name: str = "greet", version: str = "1.2.0") -> Path:
    """A Claude Code plugin with one of each part; its `.mcp.json` is flat, as plugins write it."""
    manifest = {"name": name, "version": version, "description": "Says hello"}
    write(root / ".claude-plugin" / "plugin.json", json.dumps(manifest))
    write(root / "commands" / "hello.md", "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS\n")
    write(root / "commands" / "team" / "standup.md", "Write the standup\n")
    write(root / "agents" / "reviewer.md", "---\nname: reviewer\ndescription: Reviews\n---\nReview it.\n")
    write(root / "skills" / "lint" / "SKILL.md", "---\nname: lint\ndescription: Lints\n---\nRun ruff.\n")
    hook = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/fmt.sh"}
    write(
        root / "hooks" / "hooks.json",
        json.dumps({"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [hook]}]}}),
    )
    shutil.copy(SERVER, root / "server.py")
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}
    write(root / ".mcp.json", json.dumps({"tools": server}))
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # no terminal to ask on
    return tmp_path / "data"


def test_install_from_a_folder_lists_what_it_brings_then_list_disable_enable_remove(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_plugin(tmp_path / "src" / "greet")
    code, out, err = run(capsys, "plugin", "install", str(source), "--data-dir", str(data))
    assert code == 2 and out == ""
    assert err.startswith("tui-assist: plugin install: nothing installed: say --yes") and err.count("\n") == 1
    assert installed_plugins(data) == []

    code, out, err = run(capsys, "plugin", "install", str(source), "--yes", "--data-dir", str(data))
    assert code == 0, err
    root = data / "plugins" / "installed" / "greet"
    assert out.splitlines() == [
        f"Plugin greet 1.2.0 from {source}: Says hello",
        "  command /greet:hello",
        "  command /greet:standup",
        "  agent greet:reviewer: ${CLAUDE_PLUGIN_ROOT}/agents/reviewer.md",
        "  skill greet:lint",
        "  hook PostToolUse [Edit]: ${CLAUDE_PLUGIN_ROOT}/fmt.sh",
        f"  MCP server plugin_greet_tools: {sys.executable} ${{CLAUDE_PLUGIN_ROOT}}/server.py",
        "installed greet 1.2.0 (enabled)",
    ]
    [plugin] = installed_plugins(data)
    assert (plugin.name, plugin.version, plugin.enabled, plugin.root) == ("greet", "1.2.0", True, root)
    assert plugin.commands_dir == root / "commands" and plugin.agents_dir == root / "agents"
    assert plugin.skills_dir == root / "skills" and plugin.hooks_file == root / "hooks" / "hooks.json"
    assert plugin.mcp_file == root / ".mcp.json"

    code, out, _ = run(capsys, "--data-dir", str(data), "plugin", "list", "--json")
    [row] = json.loads(out)
    assert (code, row["name"], row["version"], row["source"], row["enabled"]) == (
        0, "greet", "1.2.0", str(source), True
    )  # fmt: skip

    assert run(capsys, "plugin", "disable", "greet", "--data-dir", str(data))[:2] == (0, "greet disabled\n")
    assert installed_plugins(data)[0].enabled is False
    assert plugin_mcp_servers(installed_plugins(data)).servers == {}
    assert run(capsys, "plugin", "list", "--data-dir", str(data))[1] == f"greet 1.2.0  disabled  {source}\n"
    assert run(capsys, "plugin", "enable", "greet", "--data-dir", str(data))[:2] == (0, "greet enabled\n")
    assert installed_plugins(data)[0].enabled is True

    code, _, err = run(capsys, "plugin", "remove", "nope", "--data-dir", str(data))
    assert code == 2 and err == "tui-assist: plugin remove: no plugin 'nope' (greet)\n"
    assert run(capsys, "plugin", "remove", "greet", "--data-dir", str(data))[:2] == (
        0,
        "removed greet 1.2.0\n",
    )
    assert installed_plugins(data) == [] and not root.exists()


def git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def git_repo(folder: Path) -> Path:
    git("init", "-q", cwd=folder)
    git("add", ".", cwd=folder)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plugin", cwd=folder)
    return folder


def test_install_from_a_git_repository_runs_none_of_the_users_git_hooks(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = git_repo(make_plugin(tmp_path / "repo"))
    # A post-checkout hook that a plain `git clone` would run, set up the way a user's config can.
    marker = tmp_path / "hook-ran"
    write(tmp_path / "hooks" / "post-checkout", f"#!/bin/sh\ntouch {marker}\n").chmod(0o755)
    home = tmp_path / "home"
    write(home / ".gitconfig", f"[core]\n\thooksPath = {tmp_path / 'hooks'}\n")
    monkeypatch.setenv("HOME", str(home))
    url = f"file://{repo}"
    code, out, err = run(capsys, "plugin", "install", url, "--yes", "--data-dir", str(data))
    assert code == 0, err
    assert "installed greet 1.2.0 (enabled)" in out and "  command /greet:hello" in out
    assert not marker.exists()
    root = data / "plugins" / "installed" / "greet"
    assert (root / "commands" / "hello.md").is_file() and not (root / ".git").exists()
    assert installed_plugins(data)[0].source == url
    # The repository's own folder works too (copied, without its .git).
    assert run(capsys, "plugin", "install", str(repo), "--yes", "--data-dir", str(data))[0] == 0
    assert installed_plugins(data)[0].source == str(repo) and not (root / ".git").exists()

    code, _, err = run(
        capsys, "plugin", "install", f"file://{tmp_path}/missing", "--yes", "--data-dir", str(data)
    )
    assert (
        code == 2 and err.startswith("tui-assist: plugin install: git clone file://") and err.count("\n") == 1
    )


def test_marketplace_add_list_and_install_name_at_marketplace(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    market = tmp_path / "market"
    make_plugin(market / "plugins" / "greet")
    remote = git_repo(make_plugin(tmp_path / "remote-plugin", name="remote", version="0.1.0"))
    git("tag", "v0.1.0", cwd=remote)
    manifest = remote / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace("0.1.0", "0.2.0-dev"))
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "next", cwd=remote)
    listing = {
        "name": "team-tools",
        "owner": {"name": "Team"},
        "metadata": {"pluginRoot": "./plugins"},
        "plugins": [
            {"name": "greet", "source": "greet", "description": "Says hello", "version": "1.2.0"},
            {"name": "remote", "source": {"source": "url", "url": f"file://{remote}", "ref": "v0.1.0"}},
            {"name": "escape", "source": "../remote-plugin"},
            {"name": "packaged", "source": {"source": "npm", "package": "@team/packaged"}},
        ],
    }
    write(market / ".claude-plugin" / "marketplace.json", json.dumps(listing))

    code, out, err = run(capsys, "plugin", "marketplace", "add", str(market), "--data-dir", str(data))
    assert code == 0, err
    assert out.splitlines()[0] == "added marketplace team-tools (4 plugins)"
    code, out, _ = run(capsys, "--data-dir", str(data), "plugin", "marketplace", "list", "--json")
    [row] = json.loads(out)
    assert row["name"] == "team-tools"
    assert [p["name"] for p in row["plugins"]] == ["greet", "remote", "escape", "packaged"]

    code, out, err = run(capsys, "plugin", "install", "greet@team-tools", "--yes", "--data-dir", str(data))
    assert code == 0, err
    assert out.startswith("Plugin greet 1.2.0 from greet@team-tools: Says hello\n")
    code, out, err = run(capsys, "plugin", "install", "remote@team-tools", "--yes", "--data-dir", str(data))
    assert code == 0, err
    found = {p.name: p for p in installed_plugins(data)}
    assert (found["greet"].marketplace, found["greet"].source) == ("team-tools", "greet@team-tools")
    assert found["remote"].version == "0.1.0"  # the tag the entry names, not the branch's tip

    for spec, why in (
        (
            "nope@team-tools",
            "marketplace team-tools lists no plugin 'nope' (it lists: greet, remote, escape, packaged)",
        ),
        (
            "packaged@team-tools",
            "marketplace team-tools: plugin packaged: its source (npm) is not supported here",
        ),
        (
            "greet@elsewhere",
            "no marketplace 'elsewhere' (team-tools; add one with tui-assist plugin marketplace add)",
        ),
        (
            "escape@team-tools",
            "marketplace team-tools: plugin escape's source ../remote-plugin is not a folder in it",
        ),
    ):
        code, _, err = run(capsys, "plugin", "install", spec, "--yes", "--data-dir", str(data))
        assert (code, err) == (2, f"tui-assist: plugin install: {why}\n")
    code, _, err = run(
        capsys, "plugin", "marketplace", "add", str(tmp_path / "remote-plugin"), "--data-dir", str(data)
    )
    assert code == 2 and "is not a marketplace: it has no .claude-plugin/marketplace.json" in err


async def test_an_enabled_plugins_flat_mcp_json_server_starts_in_the_session(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_plugin(tmp_path / "greet")
    assert run(capsys, "plugin", "install", str(source), "--yes", "--data-dir", str(data))[0] == 0
    found = load_plugins(data)
    assert found.warnings == ()
    plugins = plugin_mcp_servers(found.plugins)
    assert plugins.warnings == () and list(plugins.servers) == ["plugin_greet_tools"]
    assert plugins.servers["plugin_greet_tools"].origin == "plugin"
    servers, notes = session_mcp_servers(Settings(workdir=tmp_path), None, plugins)
    assert notes == [] and list(servers) == ["plugin_greet_tools"]
    async with McpManager(servers, cwd=tmp_path) as manager:
        await manager.start()
        assert manager.status()[0].state == "ready", manager.status()[0].error
        [where] = [t for t in manager.current_tools() if t.spec.name == "plugin_greet_tools__where"]

        async def no_subagents(description: str, prompt: str, agent: object = None) -> str:
            raise AssertionError

        out = await where.run({}, ToolContext(workdir=tmp_path, node_id="n", run_subagent=no_subagents))
    assert out.content == str(tmp_path)


def test_a_broken_manifest_and_a_missing_copy_are_warnings_naming_the_file(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_plugin(tmp_path / "greet")
    manifest = source / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps({"name": "greet", "commands": "./nowhere", "lspServers": {}}))
    assert run(capsys, "plugin", "install", str(source), "--yes", "--data-dir", str(data))[0] == 0
    installed = data / "plugins" / "installed" / "greet" / ".claude-plugin" / "plugin.json"
    assert load_plugins(data).warnings == (
        f"{installed}: lspServers not supported; ignored",
        f"{installed}: ./nowhere is not there; ignored",
    )
    shutil.rmtree(data / "plugins" / "installed" / "greet")
    [warning] = load_plugins(data).warnings
    assert warning.startswith(f"{data / 'plugins' / 'state.json'}: plugin 'greet' is recorded but")


class Terminal(io.StringIO):
    """Typed answers on a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("answer", "code", "installed"), [("n\n", 1, False), ("", 1, False), ("y\n", 0, True)]
)
def test_on_a_terminal_the_install_asks_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    answer: str, code: int, installed: bool,
) -> None:  # fmt: skip
    monkeypatch.setattr(sys, "stdin", Terminal(answer))
    data = tmp_path / "data"
    result, out, _ = run(
        capsys, "plugin", "install", str(make_plugin(tmp_path / "greet")), "--data-dir", str(data)
    )
    assert result == code
    assert "  command /greet:hello" in out and "Install greet? [y/N] " in out
    assert (installed_plugins(data) != []) is installed
    assert sorted(p.name for p in (data / "plugins").iterdir()) == (
        ["installed", "state.json"] if installed else ["installed"]
    )


def test_a_link_out_of_the_plugin_is_not_copied(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_plugin(tmp_path / "greet")
    secret = write(tmp_path / "secret.txt", "private key")
    (source / "commands" / "leak.md").symlink_to(secret)
    (source / "commands" / "same.md").symlink_to(source / "commands" / "hello.md")
    code, out, err = run(capsys, "plugin", "install", str(source), "--yes", "--data-dir", str(data))
    assert code == 0
    copied = data / "plugins" / "installed" / "greet" / "commands"
    assert not (copied / "leak.md").exists() and not (copied / "same.md").is_symlink()
    assert (copied / "same.md").read_text() == (source / "commands" / "hello.md").read_text()
    assert "/greet:leak" not in out
    assert err == (
        f"tui-assist: plugin install: warning: {source / 'commands' / 'leak.md'}: a link to {secret}, "
        "outside the plugin; not copied\n"
    )
