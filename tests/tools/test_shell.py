from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.tools.registry import Toolset, default_toolbox
from tui_assist.tools.shell import BashTool

from .processes import process_alive, wait_for_file, wait_until_dead


def bash_of(box: Toolset) -> BashTool:
    tool = box.get("bash")
    assert isinstance(tool, BashTool)
    return tool


async def run(box: Toolset, ctx: ToolContext, **raw: Any) -> ToolOutput:
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

    assert elapsed < 3
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
