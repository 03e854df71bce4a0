"""bash under the real bubblewrap sandbox: real commands, real namespaces (skipped where they can't exist)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.conversation import Conversation, ToolUseBlock
from tui_assist.core.observer import ApprovalDecision, RecordingObserver
from tui_assist.core.tooling import ToolContext, ToolOutput
from tui_assist.core.turn import TurnDeps
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.tools import sandbox as sandbox_module
from tui_assist.tools.registry import Toolset, default_toolbox, toolbox_factory
from tui_assist.tools.sandbox import Sandbox, choose_sandbox, probe_bwrap
from tui_assist.tools.shell import BashTool
from tui_assist.turns.agent import AgentTurn

PROBE = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not PROBE.works, reason=f"no OS sandbox here: {PROBE.reason}")


@pytest.fixture
def sandbox() -> Sandbox:
    if not PROBE.works or PROBE.path is None:
        pytest.skip(f"no OS sandbox here: {PROBE.reason}")
    return Sandbox(PROBE.path)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def outside() -> Iterator[Path]:
    """A real folder outside both the workdir and /tmp (the sandbox gives /tmp a private tmpfs)."""
    base = next((d for d in (Path("/var/tmp"), Path.home()) if d.is_dir() and os.access(d, os.W_OK)), None)
    if base is None:
        pytest.skip("no writable folder outside /tmp")
    path = Path(tempfile.mkdtemp(prefix="tui-assist-outside-", dir=base))
    (path / "keep.txt").write_text("precious\n")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def box(workdir: Path, sandbox: Sandbox) -> AsyncIterator[Toolset]:
    toolset = default_toolbox(workdir, bash_timeout=20, sandbox=sandbox)
    try:
        yield toolset
    finally:
        await toolset.aclose()


async def _no_subagents(description: str, prompt: str) -> str:
    raise AssertionError("no sub-agents here")


async def run(box: Toolset, **raw: Any) -> ToolOutput:
    tool = box.get("bash")
    assert isinstance(tool, BashTool)
    ctx = ToolContext(workdir=box.workdir, node_id="n", run_subagent=_no_subagents)
    return await tool.run(tool.parse(raw), ctx)


async def test_writing_outside_the_workdir_fails(box: Toolset, outside: Path) -> None:
    out = await run(box, command=f"echo x > {outside}/new.txt; rm -rf {outside}; ls {outside}")
    assert "Read-only file system" in out.content
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "precious\n"
    assert '"sandbox": false' in out.content  # the model learns how to ask for more


async def test_root_cannot_remount_its_way_out(box: Toolset, outside: Path) -> None:
    # As root, file modes stop nothing; the read-only mount and the dropped capabilities do.
    out = await run(box, command=f"mount -o remount,rw / ; chmod 777 {outside}; touch {outside}/x; echo end")
    assert "Read-only file system" in out.content and out.content.splitlines()[-2] == "end"
    assert not (outside / "x").exists()
    assert oct(outside.stat().st_mode & 0o777) != oct(0o777)


async def test_writing_in_the_workdir_works(box: Toolset, workdir: Path) -> None:
    out = await run(box, command="mkdir -p src && echo hello > src/a.txt && cat src/a.txt")
    assert out.content == "hello" and not out.is_error
    assert (workdir / "src" / "a.txt").read_text() == "hello\n"


async def test_tmp_is_private(box: Toolset, tmp_path: Path) -> None:
    marker = Path(tempfile.mkdtemp(prefix="tui-assist-host-")) / "host-only"
    marker.write_text("x")
    try:
        out = await run(
            box, command=f"ls {marker} 2>&1; echo inside > /tmp/from-sandbox && cat /tmp/from-sandbox"
        )
        assert "No such file or directory" in out.content and out.content.endswith("inside")
        assert not Path("/tmp/from-sandbox").exists()
    finally:
        shutil.rmtree(marker.parent)


async def test_programs_under_tmp_still_run_read_only(box: Toolset, monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtualenv or tool under /tmp (a CI clone, say) is not hidden by the private /tmp.
    tools = Path(tempfile.mkdtemp(prefix="tui-assist-tools-"))
    (tools / "hello-tool").write_text("#!/bin/sh\necho hello from /tmp\n")
    (tools / "hello-tool").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    sandbox_module._programs_under_tmp.cache_clear()
    try:
        out = await run(box, command=f"hello-tool && touch {tools}/new 2>&1; ls {tools}")
        assert out.content.startswith("hello from /tmp") and "Read-only file system" in out.content
        assert not (tools / "new").exists()
    finally:
        sandbox_module._programs_under_tmp.cache_clear()
        shutil.rmtree(tools)


async def _serve_once() -> tuple[asyncio.Server, int, list[bytes]]:
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.read(100))
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], seen


async def test_no_network_not_even_loopback_on_the_host(box: Toolset, workdir: Path) -> None:
    server, port, seen = await _serve_once()
    async with server:
        probe = f"(echo ping >/dev/tcp/127.0.0.1/{port}) 2>&1 && echo CONNECTED || echo REFUSED"
        inside = await run(box, command=probe)
        outside_box = default_toolbox(workdir, bash_timeout=20)
        try:
            control = await run(outside_box, command=probe)
        finally:
            await outside_box.aclose()
    assert inside.content.endswith("REFUSED") and control.content.endswith("CONNECTED")
    assert seen == [b"ping\n"]  # only the unsandboxed shell got through


async def test_network_when_allowed(workdir: Path, sandbox: Sandbox) -> None:
    server, port, _ = await _serve_once()
    box = default_toolbox(workdir, bash_timeout=20, sandbox=Sandbox(sandbox.bwrap, network=True))
    try:
        async with server:
            out = await run(box, command=f"(echo ping >/dev/tcp/127.0.0.1/{port}) && echo CONNECTED")
    finally:
        await box.aclose()
    assert out.content.endswith("CONNECTED")


async def test_the_persistent_shell_keeps_its_state(box: Toolset, workdir: Path) -> None:
    (workdir / "sub").mkdir()
    await run(box, command="cd sub && export GREETING=hi && f() { echo fn-$1; }")
    out = await run(box, command='pwd; echo "$GREETING"; f ok')
    assert out.content.splitlines() == [str(workdir / "sub"), "hi", "fn-ok"]


async def test_a_timeout_kills_the_sandbox_and_the_next_command_starts_fresh(
    workdir: Path, sandbox: Sandbox
) -> None:
    box = default_toolbox(workdir, bash_timeout=1, sandbox=sandbox)
    try:
        timed_out = await run(box, command="sleep 30 & sleep 30")
        again = await run(box, command="echo alive; pwd")
    finally:
        await box.aclose()
    assert timed_out.is_error and "timed out" in timed_out.content
    assert again.content.splitlines() == ["alive", str(workdir)]


async def test_the_files_that_decide_what_runs_stay_read_only(box: Toolset, workdir: Path) -> None:
    (workdir / ".tui-assist").mkdir()
    (workdir / ".git" / "hooks").mkdir(parents=True)
    (workdir / ".git" / "config").write_text("[core]\n")
    out = await run(
        box,
        command=(
            "echo '[permissions]' > .tui-assist/settings.toml; echo evil > .git/hooks/pre-commit; "
            "echo x >> .git/config; echo ../planted > .git/commondir; echo done"
        ),
    )
    assert out.content.count("Read-only file system") == 4 and "\ndone\n" in out.content
    assert (
        list((workdir / ".tui-assist").iterdir()) == [] and list((workdir / ".git" / "hooks").iterdir()) == []
    )
    assert (workdir / ".git" / "config").read_text() == "[core]\n"
    assert not (workdir / ".git" / "commondir").exists()  # the whole of .git is read-only


async def test_a_git_file_of_a_worktree_stays_read_only(box: Toolset, workdir: Path) -> None:
    (workdir / ".git").write_text("gitdir: /somewhere/else\n")
    out = await run(box, command="echo 'gitdir: planted' > .git; cat .git")
    assert "Read-only file system" in out.content and "gitdir: /somewhere/else" in out.content


async def test_extra_read_only_paths_in_the_workdir_stay_read_only(
    workdir: Path, sandbox: Sandbox, outside: Path
) -> None:
    """The user's config and data dirs, `~/.claude` and trusted scripts, under a workdir that is `$HOME`."""
    config = workdir / ".config" / "tui-assist"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("# mine\n")
    script = workdir / "scripts" / "hook.sh"
    script.parent.mkdir()
    script.write_text("echo trusted\n")
    claude = workdir / ".claude"
    guarded = Sandbox(sandbox.bwrap, read_only=(config, script, claude, outside))
    toolset = default_toolbox(workdir, bash_timeout=20, sandbox=guarded)
    try:
        out = await run(
            toolset,
            command=(
                "printf '[[hooks.SessionStart]]\\ncommand = \"evil\"\\n' >> .config/tui-assist/config.toml; "
                "echo evil >> scripts/hook.sh; mv scripts/hook.sh scripts/moved.sh; "
                "mkdir -p .claude && echo '{}' > .claude/settings.json; echo other > scripts/other.sh; echo done"
            ),
        )
        assert out.content.count("Read-only file system") == 2, out.content
        assert "the sandbox removed .claude/" in out.content and "done" in out.content
        assert (config / "config.toml").read_text() == "# mine\n"
        assert script.read_text() == "echo trusted\n" and not (workdir / "scripts" / "moved.sh").exists()
        assert not claude.exists()  # created by the command: taken away, it is the user's own
        assert (workdir / "scripts" / "other.sh").exists()  # the rest of the workdir is writable
    finally:
        await toolset.aclose()


def test_choose_sandbox_passes_the_read_only_paths(tmp_path: Path) -> None:
    if not PROBE.works:
        pytest.skip(f"no OS sandbox here: {PROBE.reason}")
    choice = choose_sandbox(None, read_only=[tmp_path / "a"])
    assert choice.sandbox is not None and choice.sandbox.read_only == (tmp_path / "a",)


async def test_a_sandboxed_call_creates_nothing_in_a_fresh_workdir(box: Toolset, workdir: Path) -> None:
    out = await run(box, command="ls -A; echo done")
    assert out.content == "done" and not out.is_error
    assert list(workdir.iterdir()) == []  # no .tui-assist/ (nor anything else) made for the sandbox


async def test_a_project_folder_a_sandboxed_command_creates_is_taken_away(
    box: Toolset, workdir: Path
) -> None:
    out = await run(
        box,
        command="mkdir -p .tui-assist && echo '[permissions]' > .tui-assist/settings.toml && echo made",
    )
    assert out.content.startswith("made") and "the sandbox removed .tui-assist/" in out.content
    assert not (workdir / ".tui-assist").exists()
    assert (await run(box, command="echo still here")).content == "still here"


async def test_a_project_folder_that_appears_between_commands_is_bound_read_only(
    box: Toolset, workdir: Path
) -> None:
    """The app itself creates `.tui-assist/` when `p` saves a rule; the shell then starts afresh."""
    await run(box, command="cd /tmp && export MARK=1")
    (workdir / ".tui-assist").mkdir()
    (workdir / ".tui-assist" / "settings.toml").write_text("# the user's\n")
    out = await run(box, command='pwd; echo "[$MARK]"; echo evil >> .tui-assist/settings.toml; echo done')
    assert out.content.startswith("[the shell was restarted")
    assert str(workdir) in out.content and "[]" in out.content and "Read-only file system" in out.content
    assert (workdir / ".tui-assist" / "settings.toml").read_text() == "# the user's\n"
    assert "restarted" not in (await run(box, command="echo again")).content


async def test_sandbox_false_runs_in_a_separate_unsandboxed_shell(box: Toolset, outside: Path) -> None:
    tool = box.get("bash")
    assert isinstance(tool, BashTool)
    assert tool.sandbox_use(tool.parse({"command": "ls"})) == "sandboxed"
    assert tool.sandbox_use(tool.parse({"command": "ls", "sandbox": False})) == "escape"
    assert "sandbox" in tool.spec.input_schema["properties"]

    await run(box, command="export WHERE=inside")
    out = await run(box, command=f'echo "[$WHERE]" && touch {outside}/made', sandbox=False)
    assert out.content == "[]" and (outside / "made").exists()


async def test_without_a_sandbox_the_tool_offers_no_sandbox_switch(workdir: Path) -> None:
    tool = BashTool(workdir)
    assert tool.sandbox_use(tool.parse({"command": "ls", "sandbox": False})) == "off"
    assert set(tool.spec.input_schema["properties"]) == {"command", "restart"}


def test_choosing_the_sandbox() -> None:
    off = choose_sandbox("off")
    assert off.sandbox is None and off.description == "sandbox: off" and not off.warning
    missing = choose_sandbox(None, bwrap="no-such-bwrap-here")
    assert missing.sandbox is None and missing.description.startswith("sandbox: off (bwrap is not installed")
    assert not missing.warning  # the default falls back quietly
    asked = choose_sandbox("workspace-write", bwrap="no-such-bwrap-here")
    assert asked.sandbox is None and asked.warning.startswith("the bash sandbox is off")


@needs_bwrap
def test_the_default_is_workspace_write_where_bwrap_works() -> None:
    choice = choose_sandbox(None, network=False)
    assert choice.sandbox is not None and choice.description == "sandbox: workspace-write, no network"


# --------------------------------------------------------------------------- through the agent loop


async def test_sandboxed_calls_run_without_a_dialog_and_leaving_the_sandbox_asks(
    workdir: Path, sandbox: Sandbox, outside: Path
) -> None:
    script = [
        [ToolUseBlock("t1", "bash", {"command": f"touch made-here && rm -rf {outside}"})],
        [ToolUseBlock("t2", "bash", {"command": f"touch {outside}/escaped", "sandbox": False})],
        "done",
    ]
    deps = TurnDeps(
        ScriptedProvider(script),
        toolbox_factory(workdir, bash_timeout=20, sandbox=sandbox),
        approvals=ApprovalPolicy(),
    )
    observer = RecordingObserver(decision=ApprovalDecision.deny())

    result = await AgentTurn(deps).run(Conversation(), "work", observer)

    assert [a.input.get("sandbox") for a in observer.approvals] == [False]  # only the escape asked
    assert observer.approvals[0].sandbox == "escape"
    assert (workdir / "made-here").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    first, second = result.evidence
    assert "Read-only file system" in first.output
    assert second.is_error and second.output.startswith("Denied:")


def test_a_session_keeps_the_users_dirs_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_assist.session.config import Settings
    from tui_assist.session.factory import sandbox_read_only_paths

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")  # Claude Code's own default, ~/.claude
    settings = Settings(workdir=tmp_path, data_dir=tmp_path / ".local" / "share" / "tui-assist")
    script = tmp_path / "hooks" / "check.sh"
    paths = sandbox_read_only_paths(settings, [script])
    assert paths == [tmp_path / ".config" / "tui-assist", settings.data_dir, tmp_path / ".claude", script]
    assert paths[0].is_dir() and paths[1].is_dir()  # made, so they are bound rather than removed
