"""Language-server diagnostics after editor writes, against a real `ruff server`."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import ToolContext, ToolOutput
from tui_assist.tools.files import TextEditorTool
from tui_assist.tools.lsp import LspServers, LspServerSpec, ruff_command

RUFF = ruff_command()
pytestmark = pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
F821 = "LSP: mod.py:1:7: Undefined name `undefined_name` [F821]"


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[LspServers]:
    assert RUFF is not None
    # A generous wait: the machine may be busy; a quick server answers long before it.
    lsp = LspServers([LspServerSpec("ruff", RUFF, (".py", ".pyi"))], tmp_path, wait_seconds=30)
    try:
        yield lsp
    finally:
        await lsp.aclose()


async def edit(editor: TextEditorTool, ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await editor.run(editor.parse(raw), ctx)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _command_lines() -> list[str]:
    lines: list[str] = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit():
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return lines


async def test_an_edit_that_breaks_the_file_reports_the_new_error_and_the_fix_reports_none(
    servers: LspServers, ctx: ToolContext, tmp_path: Path
) -> None:
    editor = TextEditorTool(tmp_path, diagnostics=servers)
    (tmp_path / "mod.py").write_text('print("ok")\n')

    broken = await edit(
        editor, ctx, command="str_replace", path="mod.py", old_str='"ok"', new_str="undefined_name"
    )
    fixed = await edit(
        editor, ctx, command="str_replace", path="mod.py", old_str="undefined_name", new_str="1"
    )

    assert broken.content.splitlines()[-1] == F821
    assert not broken.is_error and broken.diff is not None
    assert "LSP:" not in fixed.content


async def test_errors_the_file_had_before_the_edit_are_not_reported_again(
    servers: LspServers, ctx: ToolContext, tmp_path: Path
) -> None:
    editor = TextEditorTool(tmp_path, diagnostics=servers)
    (tmp_path / "mod.py").write_text("print(undefined_name)\nx = 1\n")

    moved = await edit(editor, ctx, command="insert", path="mod.py", insert_line=0, insert_text="import os\n")
    added = await edit(editor, ctx, command="create", path="other.py", file_text="print(also_undefined)\n")

    assert "LSP:" not in moved.content
    assert added.content.splitlines()[-1] == "LSP: other.py:1:7: Undefined name `also_undefined` [F821]"


async def test_a_server_that_cannot_start_is_one_warning_and_the_results_are_unchanged(
    ctx: ToolContext, tmp_path: Path
) -> None:
    warnings: list[str] = []
    ghost = LspServerSpec("ghost", (str(tmp_path / "no-such-server"), "--stdio"), (".py",))
    servers = LspServers([ghost], tmp_path, notify=warnings.append)
    checked = TextEditorTool(tmp_path, diagnostics=servers)
    plain = TextEditorTool(tmp_path)

    first = await edit(checked, ctx, command="create", path="mod.py", file_text="print(undefined_name)\n")
    second = await edit(checked, ctx, command="create", path="mod.py", file_text="print(undefined_name)\n")
    expected = await edit(plain, ctx, command="create", path="mod.py", file_text="print(undefined_name)\n")
    await servers.aclose()

    assert first.content == "File created: mod.py (1 lines)"
    assert second.content == expected.content == "File overwrote: mod.py (1 lines)"
    assert len(warnings) == 1
    assert warnings[0].startswith("language server ghost could not start")
    assert "no-such-server" in warnings[0]


async def test_a_crashed_server_is_started_again_once(tmp_path: Path) -> None:
    assert RUFF is not None
    warnings: list[str] = []
    servers = LspServers(
        [LspServerSpec("ruff", RUFF, (".py",))], tmp_path, wait_seconds=30, notify=warnings.append
    )
    path = tmp_path / "mod.py"
    try:
        assert await servers.after_write(path, None, "x = 1\n") == []
        first = servers.pids["ruff"]
        os.kill(first, 9)
        again = await servers.after_write(path, None, "print(undefined_name)\n")
        second = servers.pids["ruff"]
        os.kill(second, 9)
        after_two_crashes = await servers.after_write(path, None, "print(other_name)\n")
    finally:
        await servers.aclose()

    assert [d.code for d in again] == ["F821"] and second != first
    assert after_two_crashes == []
    assert warnings == ["language server ruff stopped again; edits are not checked by it"]


async def test_closing_stops_the_server_process(servers: LspServers, tmp_path: Path) -> None:
    await servers.after_write(tmp_path / "mod.py", None, "x = 1\n")
    pid = servers.pids["ruff"]
    assert _alive(pid)

    await servers.aclose()

    assert not _alive(pid)
    assert servers.pids == {}


async def test_files_no_server_checks_are_left_alone(servers: LspServers, tmp_path: Path) -> None:
    assert await servers.after_write(tmp_path / "notes.txt", None, "print(undefined_name)\n") == []
    assert servers.pids == {}


async def test_a_server_gets_no_secrets_and_one_that_exits_at_once_is_one_warning(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("LSP_TEST_PLAIN", "plain")
    dump = "import json, os; open('env.json', 'w').write(json.dumps(dict(os.environ)))"
    warnings: list[str] = []
    servers = LspServers(
        [LspServerSpec("dumper", (sys.executable, "-c", dump), (".py",))], tmp_path, notify=warnings.append
    )
    editor = TextEditorTool(tmp_path, diagnostics=servers)

    created = await edit(editor, ctx, command="create", path="mod.py", file_text="print(undefined_name)\n")
    await edit(editor, ctx, command="create", path="mod.py", file_text="print(undefined_name)\n")
    await servers.aclose()

    env = json.loads((tmp_path / "env.json").read_text())
    assert env["LSP_TEST_PLAIN"] == "plain" and "ANTHROPIC_API_KEY" not in env
    assert created.content == "File created: mod.py (1 lines)"
    assert len(warnings) == 1 and warnings[0].startswith("language server dumper could not start")


async def test_a_server_that_never_reports_leaves_the_result_as_it_is(
    ctx: ToolContext, tmp_path: Path
) -> None:
    silent = Path(__file__).with_name("lsp_silent_server.py")
    warnings: list[str] = []
    servers = LspServers(
        [LspServerSpec("silent", (sys.executable, str(silent)), (".py",))],
        tmp_path,
        wait_seconds=0.2,
        notify=warnings.append,
    )
    editor = TextEditorTool(tmp_path, diagnostics=servers)
    try:
        created = await edit(
            editor, ctx, command="create", path="mod.py", file_text="print(undefined_name)\n"
        )
        pid = servers.pids["silent"]
    finally:
        await servers.aclose()

    assert created.content == "File created: mod.py (1 lines)"
    assert warnings == []
    assert not _alive(pid)


async def test_a_server_that_does_not_answer_initialize_is_given_up_and_killed(
    ctx: ToolContext, tmp_path: Path
) -> None:
    mute = f"import time; time.sleep(600)  # {tmp_path}"
    warnings: list[str] = []
    servers = LspServers(
        [LspServerSpec("mute", (sys.executable, "-c", mute), (".py",))],
        tmp_path,
        start_seconds=1.0,
        notify=warnings.append,
    )
    editor = TextEditorTool(tmp_path, diagnostics=servers)
    try:
        created = await edit(editor, ctx, command="create", path="mod.py", file_text="x = 1\n")
    finally:
        await servers.aclose()

    assert created.content == "File created: mod.py (1 lines)"
    assert len(warnings) == 1 and "no answer within 1 s" in warnings[0]
    assert not [cmdline for cmdline in _command_lines() if str(tmp_path) in cmdline]
