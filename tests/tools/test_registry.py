from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.core.text import truncate_middle
from tui_assist.core.tooling import Toolbox, ToolContext
from tui_assist.tools.base import PathOutsideWorkdir, confine
from tui_assist.tools.registry import Toolset, default_toolbox, toolbox_factory
from tui_assist.tools.shell import BashTool
from tui_assist.tools.subagent import AgentTool


async def test_default_toolbox_offers_the_built_in_tools_in_order(tmp_path: Path) -> None:
    box: Toolbox = default_toolbox(tmp_path)
    assert [tool.spec.name for tool in box.tools] == [
        "bash",
        "str_replace_based_edit_tool",
        "glob",
        "grep",
        "agent",
        "todo_write",
    ]
    assert [tool.spec.native_type for tool in box.tools] == [
        "bash_20250124",
        "text_editor_20250728",
        None,
        None,
        None,
        None,
    ]
    assert box.workdir == tmp_path.resolve()
    await box.aclose()


async def test_factory_makes_a_fresh_toolset_with_its_own_shell(tmp_path: Path, ctx: ToolContext) -> None:
    make = toolbox_factory(tmp_path, bash_timeout=1.0)
    first, second = make(), make()
    assert first is not second
    try:
        bash1, bash2 = first.tools[0], second.tools[0]
        assert isinstance(bash1, BashTool) and isinstance(bash2, BashTool)
        await bash1.run(bash1.parse({"command": "export ONLY_HERE=1"}), ctx)
        out = await bash2.run(bash2.parse({"command": 'echo "[$ONLY_HERE]"'}), ctx)
        assert out.content == "[]"
        assert bash1.session.pid != bash2.session.pid
    finally:
        await first.aclose()
        await second.aclose()
    assert not bash1.session.running


def test_lookup_by_name_and_duplicate_names(tmp_path: Path) -> None:
    box = default_toolbox(tmp_path)
    assert isinstance(box.get("agent"), AgentTool)
    assert box.get("nope") is None
    with pytest.raises(ValueError, match="duplicate tool names: agent"):
        Toolset(tmp_path, [AgentTool(), AgentTool()])


def test_confine(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path.resolve()
    assert confine(tmp_path, "a/b.txt") == root / "a" / "b.txt"
    assert confine(tmp_path, "a/../b.txt") == root / "b.txt"
    assert confine(tmp_path, str(root / "c")) == root / "c"
    assert confine(tmp_path, ".") == root
    outside = tmp_path_factory.mktemp("elsewhere")
    (tmp_path / "out").symlink_to(outside)
    (tmp_path / "in").symlink_to(tmp_path / "a")
    assert confine(tmp_path, "in/x") == root / "a" / "x"
    for bad in ("..", "../x", "/etc/passwd", "out", "out/new.txt", "", "bad\x00name"):
        with pytest.raises(PathOutsideWorkdir):
            confine(tmp_path, bad)


def test_truncate_middle() -> None:
    assert truncate_middle("short", 10) == "short"
    text = "a" * 50 + "b" * 50
    cut = truncate_middle(text, 10)
    assert cut == "aaaaa\n[... 90 characters truncated ...]\nbbbbb"
