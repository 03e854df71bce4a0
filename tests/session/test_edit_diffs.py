"""Editor writes carry their diff (the tool's own before and after) into the events, the store,
the Markdown export and a resumed session; tool calls are titled as actions."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse
from tests.sdk_session import loaded_session, sdk_workdir
from tui_assist.cli.history import history_export
from tui_assist.core.events import FileDiff, ToolCallFinished
from tui_assist.core.observer import RecordingObserver
from tui_assist.core.tool_labels import diff_counts, tool_title, unified_diff
from tui_assist.session.chat import ChatSession
from tui_assist.session.config_source import ConfigSource

EDITOR = "str_replace_based_edit_tool"


def test_tool_calls_are_titled_as_actions() -> None:
    change = FileDiff("/w/app.py", "a\nb\n", "a\nc\n")
    assert tool_title(EDITOR, {"command": "str_replace", "path": "app.py"}, change) == "edit app.py (+1 −1)"
    assert tool_title(EDITOR, {"command": "view", "path": "app.py"}) == "view app.py"
    assert tool_title(EDITOR, {"command": "create", "path": "notes.md"}) == "create notes.md"
    created = FileDiff("/w/notes.md", None, "x\ny\n")
    assert tool_title(EDITOR, {"command": "create", "path": "notes.md"}, created) == "create notes.md (+2 −0)"
    assert tool_title("bash", {"command": "pytest -q"}) == "bash: pytest -q"
    assert tool_title("bash", {"command": "cd x\nmake"}) == "bash: cd x …"
    assert tool_title("agent", {"description": "reviewer", "prompt": "look"}) == "agent: reviewer"
    assert tool_title("mcp__files__read", {"path": "a.txt"}) == "mcp__files__read a.txt"
    assert diff_counts(change) == (1, 1)
    assert unified_diff(created, "notes.md").startswith("--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@")


@pytest.fixture
def work(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = 'approval = { default = "allow" }\nsandbox = "off"\ncheckpoints = false\n'
    path = sdk_workdir(tmp_path, fake, monkeypatch, config)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    return path


@pytest.fixture
async def session(work: Path, tmp_path: Path) -> AsyncIterator[ChatSession]:
    async with loaded_session(work, tmp_path) as chat:
        yield chat


async def test_an_edit_reports_its_diff_and_the_export_carries_it(
    fake: FakeAnthropic, session: ChatSession, work: Path, tmp_path: Path
) -> None:
    edit = {"command": "str_replace", "path": "app.py", "old_str": "return 41", "new_str": "return 42"}
    fake.add(
        Reply([ToolUse(EDITOR, edit)]),
        Reply([ToolUse(EDITOR, {"command": "create", "path": "notes.md", "file_text": "fixed\n"})]),
        Reply([ToolUse("bash", {"command": "echo changed > other.txt"})]),
        Reply([Text("Fixed.")]),
    )
    observer = RecordingObserver()

    outcome = await session.run_turn("fix it", observer)

    assert outcome.result.outcome == "answered", outcome.result.error
    finished = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert [e.diff is not None for e in finished] == [True, True, False]  # bash is not diffed
    edit_diff, create_diff = finished[0].diff, finished[1].diff
    assert edit_diff == FileDiff(
        str(work / "app.py"), "def answer():\n    return 41\n", "def answer():\n    return 42\n"
    )
    assert create_diff == FileDiff(str(work / "notes.md"), None, "fixed\n")

    assert session.store is not None and session.conversation_id is not None
    out = io.StringIO()
    assert await history_export(session.store, session.conversation_id, out) == 0
    md = out.getvalue()
    assert "`edit app.py (+1 −1)`" in md and "`create notes.md (+1 −0)`" in md
    assert (
        "```diff\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def answer():\n-    return 41\n+    return 42\n```"
        in md
    )
    assert "`bash: echo changed > other.txt`" in md

    resumed = ChatSession(ConfigSource.read({"data_dir": str(tmp_path / "data")}))
    await resumed.load()
    try:
        turns = await resumed.resume(session.conversation_id)
        stored = [e for e in turns[-1].events if isinstance(e, ToolCallFinished)]
        assert [e.diff for e in stored] == [edit_diff, create_diff, None]
    finally:
        await resumed.aclose()
