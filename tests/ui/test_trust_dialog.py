"""The project trust dialog: it names what would run, and nothing of the project runs before `t`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ui.helpers import FakeToolbox, screen_text, settings, settled, wait_until
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.trust import ProjectTrust
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.trust import TrustScreen
from tui_assist.ui.widgets.prompt import Prompt

AGENT = "---\nname: planner\ndescription: Plans work\n---\nYou plan.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".tui-assist").mkdir(parents=True)
    (work / ".tui-assist" / "settings.toml").write_text('[[hooks.UserPromptSubmit]]\ncommand = "touch ran"\n')
    (work / ".claude" / "agents").mkdir(parents=True)
    (work / ".claude" / "agents" / "planner.md").write_text(AGENT)
    mcp = {
        "mcpServers": {
            "gh": {"command": "npx", "args": ["-y", "server-github"]},
            "web": {"url": "https://x.test/mcp"},
        }
    }
    (work / ".mcp.json").write_text(json.dumps(mcp))
    return work


def app_for(project: Path, tmp_path: Path) -> TuiAssistApp:
    return TuiAssistApp(
        settings(project, data_dir=tmp_path / "data"),
        provider_factory=lambda: ScriptedProvider(["Hello."]),
        toolbox_factory=lambda: FakeToolbox(project),
        use_store=False,
    )


def dialog_shown(app: TuiAssistApp) -> bool:
    return isinstance(app.screen, TrustScreen) and bool(app.screen.query("#not-now"))


async def send(app: TuiAssistApp, pilot, text: str) -> None:
    app.query_one(Prompt).load_text(text)
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_not_now_runs_nothing_of_the_project(project: Path, tmp_path: Path, key: str) -> None:
    app = app_for(project, tmp_path)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: dialog_shown(app), timeout=15)
        dialog = app.screen
        assert isinstance(dialog, TrustScreen)
        assert dialog.items == [
            "hook UserPromptSubmit: touch ran",
            f"agent planner: {project / '.claude' / 'agents' / 'planner.md'}",
            "MCP server gh: npx -y server-github",
            "MCP server web: https://x.test/mcp",
        ]
        shown = str(dialog.query_one("#item-list").render())
        assert "touch ran" in shown and "planner.md" in shown
        await pilot.press(key)
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen))
        await send(app, pilot, "hi")
    assert not (project / "ran").exists()
    files = [project / ".tui-assist" / "settings.toml", project / ".claude" / "agents" / "planner.md"]
    files.append(project / ".mcp.json")
    assert ProjectTrust(tmp_path / "data").status(project, files) == "untrusted"


async def test_trust_runs_the_project_hooks_and_is_remembered(project: Path, tmp_path: Path) -> None:
    app = app_for(project, tmp_path)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: dialog_shown(app), timeout=15)
        await pilot.press("t")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen))
        await send(app, pilot, "hi")
        assert (project / "ran").exists()
        # The hook is a node of its own in the tree, under the turn it ran for.
        records = list(app.screen.log_model.nodes.values())
        (hook,) = [r for r in records if r.kind == "hook"]
        assert hook.label == "hook: UserPromptSubmit touch ran"
        assert next(r for r in records if r.node_id == hook.parent_id).kind == "turn"
    # Remembered: the next start asks nothing.
    again = app_for(project, tmp_path)
    async with again.run_test(size=(110, 32)) as pilot:
        await again.session.wait_ready()
        await again.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(again.screen, TrustScreen)
        assert again.session.extensions is not None and again.session.extensions.trusted


async def test_trusting_after_the_session_loaded_starts_the_projects_mcp_server(tmp_path: Path) -> None:
    from tests.fakes.mcp_http import serving

    work = tmp_path / "repo"
    work.mkdir()
    with serving("http") as url:
        (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"type": "http", "url": url}}}))
        app = TuiAssistApp(  # the session's own tools, so that load starts the MCP servers it may
            settings(work, data_dir=tmp_path / "data", checkpoints=False, sandbox="off"),
            provider_factory=lambda: ScriptedProvider(["Hello."]),
            use_store=False,
        )
        async with app.run_test(size=(110, 32)) as pilot:
            await wait_until(pilot, lambda: dialog_shown(app), timeout=15)
            await app.session.wait_ready()  # load is done while the dialog waits for the user
            assert app.session.mcp is None
            await pilot.press("t")
            await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen))
            await wait_until(pilot, lambda: app.session.mcp is not None, timeout=15)
            mcp = app.session.mcp
            assert mcp is not None
            assert [(s.name, s.state) for s in mcp.status()] == [("proj", "ready")]


async def test_hooks_and_agents_commands_list_them_with_their_origin(project: Path, tmp_path: Path) -> None:
    from tui_assist.ui.widgets.turn_parts import Notice

    app = app_for(project, tmp_path)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: dialog_shown(app), timeout=15)
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen))
        await send(app, pilot, "/hooks")
        hooks = app.query(Notice).last().source
        assert "UserPromptSubmit: touch ran · project" in hooks
        assert "waits for you to trust the project" in hooks
        await send(app, pilot, "/agents")
        agents = app.query(Notice).last().source
        assert "planner: Plans work (all tools)" in agents and "planner.md" in agents


def test_trust_dialog_snapshot(snap_compare, fixed_clock) -> None:
    from tests.ui.helpers import make_app

    async def open_dialog(pilot) -> None:
        app = pilot.app
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        app.query_one(Prompt).cursor_blink = False
        items = [
            "hook PostToolUse [Write|Edit]: jq -r .tool_input.path | xargs ruff format",
            "hook PreToolUse [bash]: ./scripts/guard.sh",
            "agent reviewer: /work/project/.claude/agents/reviewer.md",
            "MCP server github: https://api.githubcopilot.com/mcp/",
            "allow rule bash(npm run test *) (.claude/settings.json)",
            "script scripts/guard.sh",
        ]
        app.push_screen(TrustScreen("/work/project", items, changed=True))
        await settled(pilot)

    assert snap_compare(make_app(), run_before=open_dialog, terminal_size=(100, 30))


async def test_a_refused_prompt_shows_the_hooks_words_and_comes_back(tmp_path: Path) -> None:
    refuse = {"UserPromptSubmit": [{"command": "echo not on a Friday >&2; exit 2"}]}
    work = tmp_path / "w"
    work.mkdir()
    provider = ScriptedProvider(["never sent"])
    app = TuiAssistApp(
        settings(work, data_dir=tmp_path / "data", hooks=refuse),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(work),
        use_store=False,
    )
    async with app.run_test(size=(110, 32)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await send(app, pilot, "deploy it")
        assert "a UserPromptSubmit hook refused the prompt: not on a Friday" in screen_text(app)
        assert app.query_one(Prompt).text == "deploy it"  # given back, to edit or send again
    assert provider.requests == []


async def test_a_file_changed_while_the_dialog_is_open_is_asked_about_again(
    project: Path, tmp_path: Path
) -> None:
    app = app_for(project, tmp_path)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: dialog_shown(app), timeout=15)
        settings_file = project / ".tui-assist" / "settings.toml"
        settings_file.write_text(
            settings_file.read_text() + '\n[[hooks.SessionStart]]\ncommand = "touch sneaked"\n'
        )
        await pilot.press("t")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen))
        await send(app, pilot, "hi")
        assert (project / "ran").exists()  # what the dialog showed runs
    assert not (project / "sneaked").exists()
    # What was trusted is what was shown: the next start sees a changed file and asks again.
    again = app_for(project, tmp_path)
    async with again.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: dialog_shown(again), timeout=15)
        dialog = again.screen
        assert isinstance(dialog, TrustScreen) and dialog.changed
        assert "hook SessionStart: touch sneaked" in dialog.items
        await pilot.press("n")
    assert not (project / "sneaked").exists()


async def test_a_repositorys_allow_rule_waits_for_the_dialog(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))
    app = app_for(work, tmp_path)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: dialog_shown(app), timeout=15)
        dialog = app.screen
        assert isinstance(dialog, TrustScreen)
        assert dialog.items == ["allow rule bash(touch *) (.claude/settings.json)"]
        assert not app.session.approvals.permissions.project_trusted
        await pilot.press("t")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen))
        assert app.session.approvals.permissions.project_trusted
