from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import Toolbox, ToolContext, ToolInputError, ToolOutput
from tui_assist.session.config_source import ConfigError, ConfigSource
from tui_assist.tools.registry import Toolset, default_toolbox, toolbox_factory
from tui_assist.tools.shell import BashTool, is_secret_variable

from .processes import process_alive, wait_for_file, wait_until_dead


def bash_of(box: Toolbox) -> BashTool:
    tool = next(tool for tool in box.tools if tool.spec.name == "bash")
    assert isinstance(tool, BashTool)
    return tool


async def run(box: Toolbox, ctx: ToolContext, **raw: Any) -> ToolOutput:
    tool = bash_of(box)
    return await tool.run(tool.parse(raw), ctx)


async def test_spec_uses_the_native_bash_type(toolset: Toolset) -> None:
    spec = bash_of(toolset).spec
    assert spec.name == "bash"
    assert spec.native_type == "bash_20250124"
    assert set(spec.input_schema["properties"]) == {"command", "restart"}


async def test_shell_starts_in_the_workdir(toolset: Toolset, ctx: ToolContext, tmp_path: Path) -> None:
    out = await run(toolset, ctx, command="pwd")
    assert out.content.strip() == str(tmp_path.resolve())
    assert not out.is_error


async def test_cwd_persists_within_a_toolset(toolset: Toolset, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    await run(toolset, ctx, command="cd sub")
    out = await run(toolset, ctx, command="pwd")
    assert out.content.strip() == str((tmp_path / "sub").resolve())


async def test_a_new_toolset_starts_fresh_in_the_workdir(
    toolset: Toolset, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    await run(toolset, ctx, command="cd sub && export ROUND_VAR=one")
    assert (await run(toolset, ctx, command='echo "$ROUND_VAR"')).content.strip() == "one"

    fresh = default_toolbox(tmp_path, bash_timeout=0.5)
    try:
        assert (await run(fresh, ctx, command="pwd")).content.strip() == str(tmp_path.resolve())
        assert (await run(fresh, ctx, command='echo "[$ROUND_VAR]"')).content.strip() == "[]"
    finally:
        await fresh.aclose()


async def test_timeout_kills_the_command_and_the_next_one_works(
    toolset: Toolset, ctx: ToolContext, tmp_path: Path
) -> None:
    started = time.monotonic()
    out = await run(toolset, ctx, command="sleep 30 & echo $! > sleeper.pid; wait")
    elapsed = time.monotonic() - started

    assert elapsed < 20  # a hang guard: the timeout ended it, well before `sleep 30` would
    assert out.is_error
    assert "timed out after 0.5s" in out.content
    assert "restarted" in out.content
    sleeper = int((tmp_path / "sleeper.pid").read_text())
    assert await wait_until_dead(sleeper)

    after = await run(toolset, ctx, command="echo still here")
    assert after.content == "still here"
    assert not after.is_error


async def test_timeout_resets_the_shell_state(toolset: Toolset, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    await run(toolset, ctx, command="cd sub")
    assert (await run(toolset, ctx, command="sleep 5")).is_error
    assert (await run(toolset, ctx, command="pwd")).content == str(tmp_path.resolve())


async def test_long_output_is_truncated_with_a_marker(tmp_path: Path, ctx: ToolContext) -> None:
    box = default_toolbox(tmp_path, bash_timeout=5, max_output_chars=100)
    try:
        out = await run(box, ctx, command="seq 1 10000")
    finally:
        await box.aclose()
    full = "".join(f"{n}\n" for n in range(1, 10_001))
    assert f"[... {len(full) - 100} characters truncated ...]" in out.content
    assert out.content.startswith("1\n2\n3\n")
    assert out.content.endswith("9999\n10000")
    assert len(out.content) < 200


async def test_a_flood_of_output_is_bounded_and_still_ends(tmp_path: Path, ctx: ToolContext) -> None:
    box = default_toolbox(tmp_path, bash_timeout=10, max_output_chars=50)
    try:
        out = await run(box, ctx, command="head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END")
    finally:
        await box.aclose()
    assert "characters truncated" in out.content
    assert out.content.endswith("END")
    assert not out.is_error


async def test_non_zero_exit_status_is_reported(toolset: Toolset, ctx: ToolContext) -> None:
    out = await run(toolset, ctx, command="echo failing; (exit 2)")
    assert out.content == "failing\n[exit status 2]"
    # A failing command is an ordinary result the model reads, not a tool failure.
    assert not out.is_error
    ok = await run(toolset, ctx, command="true")
    assert ok.content == "(no output)"


async def test_stderr_is_merged_and_output_without_newline_is_kept(
    toolset: Toolset, ctx: ToolContext
) -> None:
    out = await run(toolset, ctx, command="echo out; echo err >&2; printf tail")
    assert out.content == "out\nerr\ntail"


async def test_commands_cannot_read_the_tool_stdin(toolset: Toolset, ctx: ToolContext) -> None:
    out = await run(toolset, ctx, command='cat; read -r line; echo "got:[$line]"')
    assert out.content == "got:[]"
    assert not out.is_error


async def test_a_syntax_error_does_not_wedge_the_shell(toolset: Toolset, ctx: ToolContext) -> None:
    out = await run(toolset, ctx, command='echo "unterminated')
    assert out.content.endswith("[exit status 2]")
    assert (await run(toolset, ctx, command="echo fine")).content == "fine"


async def test_multiline_commands_and_heredocs(toolset: Toolset, ctx: ToolContext) -> None:
    out = await run(toolset, ctx, command="x=1\ncat <<'EOF'\nline $x\nEOF\necho $x")
    assert out.content == "line $x\n1"


async def test_environment_is_non_interactive(toolset: Toolset, ctx: ToolContext) -> None:
    out = await run(toolset, ctx, command='echo "$TERM $PAGER $GIT_PAGER"')
    assert out.content == "dumb cat cat"


async def test_exit_ends_the_shell_and_the_next_command_gets_a_fresh_one(
    toolset: Toolset, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    await run(toolset, ctx, command="cd sub")
    out = await run(toolset, ctx, command="exit 3")
    assert "shell exited with status 3" in out.content
    assert (await run(toolset, ctx, command="pwd")).content == str(tmp_path.resolve())


async def test_restart_gives_a_fresh_shell(toolset: Toolset, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    await run(toolset, ctx, command="cd sub; export KEEP=1")
    out = await run(toolset, ctx, restart=True)
    assert "restarted" in out.content
    assert not out.is_error
    assert (await run(toolset, ctx, command='pwd; echo "[$KEEP]"')).content == f"{tmp_path.resolve()}\n[]"


async def test_restart_with_a_command_runs_it_in_the_fresh_shell(
    toolset: Toolset, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    await run(toolset, ctx, command="cd sub")
    out = await run(toolset, ctx, command="pwd", restart=True)
    assert out.content == str(tmp_path.resolve())


async def test_cancellation_kills_the_running_command(
    toolset: Toolset, ctx: ToolContext, tmp_path: Path
) -> None:
    task = asyncio.create_task(
        run(toolset, ctx, command="sleep 30 & echo $! > sleeper.pid; echo $$ > shell.pid; wait")
    )
    sleeper = int(await wait_for_file(tmp_path / "sleeper.pid"))
    shell = int(await wait_for_file(tmp_path / "shell.pid"))
    assert process_alive(sleeper)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await wait_until_dead(sleeper)
    assert await wait_until_dead(shell)
    assert (await run(toolset, ctx, command="echo next")).content == "next"


async def test_aclose_kills_background_jobs(tmp_path: Path, ctx: ToolContext) -> None:
    box = default_toolbox(tmp_path, bash_timeout=2)
    out = await run(box, ctx, command="sleep 30 >/dev/null 2>&1 & echo $!")
    sleeper = int(out.content)
    assert process_alive(sleeper)
    await box.aclose()
    assert await wait_until_dead(sleeper)


async def test_missing_workdir_is_an_error_result(tmp_path: Path, ctx: ToolContext) -> None:
    box = default_toolbox(tmp_path / "gone")
    try:
        out = await run(box, ctx, command="pwd")
    finally:
        await box.aclose()
    assert out.is_error
    assert "could not start bash" in out.content


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "command is required"),
        ({"command": 5}, "command"),
        ({"command": ["ls"]}, "command"),
        ({"command": "   "}, "must not be empty"),
        ({"command": "ls", "restart": "yes"}, "restart"),
        ({"restart": False}, "command is required"),
    ],
)
def test_invalid_input_is_refused(tmp_path: Path, raw: dict[str, Any], message: str) -> None:
    tool = BashTool(tmp_path)
    with pytest.raises(ToolInputError, match=message):
        tool.parse(raw)


def test_summary_is_the_exact_command_and_always_side_effecting(tmp_path: Path) -> None:
    tool = BashTool(tmp_path)
    command = "rm -rf build && make  -j4 # 'quoted'"
    args = tool.parse({"command": command})
    assert tool.summary(args) == command
    assert tool.side_effecting(args)
    restart = tool.parse({"restart": True})
    assert "restart" in tool.summary(restart)
    assert tool.side_effecting(restart)


def test_no_process_starts_before_the_first_command(tmp_path: Path) -> None:
    tool = BashTool(tmp_path)
    assert not tool.session.running
    assert tool.session.pid is None


# --- secrets stay out of the shell's environment -----------------------------------------------

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-leak",
    "ANTHROPIC_BASE_URL": "http://leak.invalid",
    "OPENAI_ORG": "org-leak",
    "AWS_SECRET_ACCESS_KEY": "aws-leak",
    "GITHUB_TOKEN": "ghp-leak",
    "db_password": "hunter2",
    "MyApiKey": "mixed-case-leak",
}


def shell_environment(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


async def test_secrets_are_left_out_of_the_shell_environment(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    box = default_toolbox(tmp_path, bash_timeout=5)
    try:
        out = await run(box, ctx, command="env")
        echoed = await run(box, ctx, command='echo "[$ANTHROPIC_API_KEY]"')
    finally:
        await box.aclose()

    env = shell_environment(out.content)
    assert not set(SECRETS) & set(env)
    assert not any(value in out.content for value in SECRETS.values())
    assert echoed.content == "[]"
    assert env["HARMLESS_SETTING"] == "kept"
    assert env["PATH"] == os.environ["PATH"]


async def test_pass_env_lets_listed_variables_through(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    box = toolbox_factory(tmp_path, bash_timeout=5, pass_env=["GITHUB_TOKEN", "db_password"])()
    try:
        env = shell_environment((await run(box, ctx, command="env")).content)
    finally:
        await box.aclose()
    assert {name for name in SECRETS if name in env} == {"GITHUB_TOKEN", "db_password"}
    assert env["GITHUB_TOKEN"] == "ghp-leak"


async def test_the_pass_env_setting_is_read_from_the_tools_bash_table(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    config = tmp_path / "config.toml"
    config.write_text('[tools.bash]\npass_env = ["OPENAI_ORG"]\n', encoding="utf-8")
    settings = ConfigSource.read({"workdir": str(tmp_path)}, path=config).settings()
    assert settings.tools.bash.pass_env == ["OPENAI_ORG"]
    assert ConfigSource.read(path=tmp_path / "none.toml").settings().tools.bash.pass_env == []

    box = toolbox_factory(settings.workdir, bash_timeout=5, pass_env=settings.tools.bash.pass_env)()
    try:
        env = shell_environment((await run(box, ctx, command="env")).content)
    finally:
        await box.aclose()
    assert {name for name in SECRETS if name in env} == {"OPENAI_ORG"}

    config.write_text('[tools.bash]\npass_envs = ["OPENAI_ORG"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tools\.bash\.pass_envs"):
        ConfigSource.read(path=config).settings()


def test_secret_names_are_recognised_case_insensitively() -> None:
    for name in (*SECRETS, "openai_api_base", "Anthropic_Model", "SSH_KEY_PATH", "npm_token"):
        assert is_secret_variable(name), name
    for name in ("PATH", "HOME", "LANG", "TERM", "PYTHONPATH", "MY_ANTHROPIC_NOTES"):
        assert not is_secret_variable(name), name


# --- the shell dies with the program ------------------------------------------------------------

CHILD_PROGRAM = """
import asyncio, sys
from pathlib import Path
from tui_assist.core.tooling import ToolContext
from tui_assist.tools.shell import BashTool

async def no_subagents(description: str, prompt: str) -> str:
    raise AssertionError

async def main() -> None:
    workdir = Path(sys.argv[1])
    tool = BashTool(workdir, timeout=600)
    ctx = ToolContext(workdir=workdir, node_id="tool-1", run_subagent=no_subagents)
    command = "echo $$ > shell.pid; sh -c 'echo $$ > sleep.pid; exec sleep 1000'"
    await tool.run(tool.parse({"command": command}), ctx)

asyncio.run(main())
"""


async def test_sigkill_of_the_program_kills_the_shell_and_its_running_command(tmp_path: Path) -> None:
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", CHILD_PROGRAM, str(tmp_path))
    try:
        sleeper = int(await wait_for_file(tmp_path / "sleep.pid", timeout=30))
        shell = int(await wait_for_file(tmp_path / "shell.pid"))
        assert process_alive(sleeper)
        child.kill()
        await child.wait()
        assert await wait_until_dead(sleeper, timeout=5)
        assert await wait_until_dead(shell, timeout=5)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        for name in ("sleep.pid", "shell.pid"):
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                os.kill(int((tmp_path / name).read_text()), signal.SIGKILL)


async def test_the_lifeline_is_invisible_to_commands(toolset: Toolset, ctx: ToolContext) -> None:
    # `wait` and `jobs` do not see the watcher, and the command inherits no extra descriptor.
    out = await run(toolset, ctx, command="wait; jobs; ls /proc/self/fd")
    assert not out.is_error
    assert out.content.split() == ["0", "1", "2", "3"]  # 3: the directory `ls` is reading


async def test_closing_the_toolset_kills_the_watcher_too(tmp_path: Path, ctx: ToolContext) -> None:
    box = default_toolbox(tmp_path, bash_timeout=5)
    out = await run(box, ctx, command="echo $$")
    shell = int(out.content)
    group = [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _pgid(int(pid)) == shell]
    assert len(group) == 2  # bash and its watcher
    await box.aclose()
    for pid in group:
        assert await wait_until_dead(pid)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None
