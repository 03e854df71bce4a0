"""`ask --refine` with the built-in `ruff server`: an edit's new error is the critic's evidence."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse
from tui_assist.cli import main
from tui_assist.tools.lsp import ruff_command

pytestmark = pytest.mark.skipif(ruff_command() is None, reason="ruff is not installed")
LSP_LINE = "LSP: mod.py:1:7: Undefined name `undefined_name` [F821]"


def _processes_in(folder: Path) -> list[str]:
    """The command lines of the processes working in `folder` (the language server's cwd)."""
    found: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue  # gone, or not ours to read
    return found


def test_the_critic_reads_the_language_servers_error_and_the_server_ends_with_the_session(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "xdg_config_home" / "tui-assist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("lsp_wait_ms = 30000\n")  # a busy machine; a quick server answers far sooner
    fake.add(
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "mod.py", "file_text": "print(undefined_name)\n"},
                )
            ]
        ),
        Reply("Created mod.py."),
        Reply("REVISE\nmod.py uses a name it never defines."),
        Reply("Done."),
        Reply("**PASS**"),
    )

    code = main(
        ["ask", "--json", "--refine", "--rounds", "2", "--yes", "write mod.py", "--workdir", str(work)]
    )

    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["outcome"] == "answered"
    tool_result = fake.requests[1].messages[-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["content"].splitlines()[-1] == LSP_LINE
    critic = fake.requests[2]
    assert LSP_LINE in critic.all_text()
    assert _processes_in(work.resolve()) == []
