"""`glob` and `grep`: real files in a real workdir; confined, capped, skipping what nobody searches."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import ToolContext, ToolInputError
from tui_assist.tools.search import GlobTool, GrepTool


async def _no_subagents(description: str, prompt: str, agent: object = None) -> str:
    raise AssertionError("no sub-agents here")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    files = {
        "README.md": "# Project\nTODO: write docs\n",
        "src/app.py": "import os\n\ndef main():\n    return 'todo later'  # TODO\n",
        "src/ui/view.tsx": "export const View = () => null // TODO\n",
        "src/ui/model.ts": "export type M = {}\n",
        ".git/config": "TODO in git data\n",
        "node_modules/pkg/index.js": "// TODO in a dependency\n",
        "env/pyvenv.cfg": "home = /usr\n",
        "env/lib/site.py": "# TODO in a virtualenv\n",
        "data.bin": "TODO\0binary",
    }
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    os.utime(work / "src/ui/model.ts", (1, 1))  # the oldest: listed last
    outside = tmp_path / "secret.txt"
    outside.write_text("TODO outside the workdir\n")
    (work / "link.txt").symlink_to(outside)
    (work / "linked-dir").symlink_to(tmp_path)
    return work


async def run(tool: GlobTool | GrepTool, work: Path, **raw: Any) -> tuple[str, bool]:
    ctx = ToolContext(workdir=work, node_id="n", run_subagent=_no_subagents)
    output = await tool.run(tool.parse(raw), ctx)  # pyright: ignore[reportArgumentType]
    return output.content, output.is_error


async def test_glob_finds_by_pattern_newest_first_and_skips_dependencies(tree: Path) -> None:
    glob = GlobTool(tree)
    text, _ = await run(glob, tree, pattern="**/*.{ts,tsx}")
    assert text.splitlines() == ["src/ui/view.tsx", "src/ui/model.ts"]
    text, _ = await run(glob, tree, pattern="*.py", path="src")
    assert text == "src/app.py"
    text, _ = await run(glob, tree, pattern="**/*")
    names = text.splitlines()
    assert "README.md" in names and "data.bin" in names
    assert not [n for n in names if n.startswith((".git/", "node_modules/", "env/", "link", "linked-dir"))]
    text, error = await run(glob, tree, pattern="**/*.rs")
    assert text == "no files match **/*.rs in ." and not error


async def test_grep_lines_as_path_line_text(tree: Path) -> None:
    grep = GrepTool(tree)
    text, _ = await run(grep, tree, pattern="TODO")
    assert text.splitlines() == [
        "README.md:2: TODO: write docs",
        "src/app.py:4:     return 'todo later'  # TODO",
        "src/ui/view.tsx:1: export const View = () => null // TODO",
    ]  # not .git, node_modules, the virtualenv, the binary file, nor through either symlink
    text, _ = await run(grep, tree, pattern="(?i)todo later", glob="*.py")
    assert text == "src/app.py:4:     return 'todo later'  # TODO"
    text, _ = await run(grep, tree, pattern="export", path="src/ui", glob="*.ts")
    assert text == "src/ui/model.ts:1: export type M = {}"
    text, _ = await run(grep, tree, pattern="import", path="src/app.py")
    assert text == "src/app.py:1: import os"


async def test_grep_caps_its_matches(tree: Path) -> None:
    (tree / "many.txt").write_text("hit\n" * 30)
    text, _ = await run(GrepTool(tree, max_matches=5), tree, pattern="hit", path="many.txt")
    assert text.splitlines()[-1] == "[... 25 more matching lines; use a narrower pattern, path or glob ...]"
    assert len(text.splitlines()) == 6


@pytest.mark.parametrize(
    ("tool", "raw", "why"),
    [
        (GlobTool, {"pattern": "*", "path": ".."}, "outside the working directory"),
        (GrepTool, {"pattern": "x", "path": "/etc"}, "outside the working directory"),
        (GrepTool, {"pattern": "x", "path": "linked-dir"}, "outside the working directory"),
        (GrepTool, {"pattern": "(unclosed"}, "invalid regular expression"),
        (GlobTool, {"pattern": "{a,b"}, "unclosed {"),
        (GlobTool, {}, "pattern"),
    ],
)
def test_bad_input_is_refused_before_running(tree: Path, tool: type, raw: dict[str, Any], why: str) -> None:
    with pytest.raises(ToolInputError, match=why):
        tool(tree).parse(raw)


def test_never_side_effecting_so_never_asked_and_run_in_plan_mode(tree: Path) -> None:
    for tool, raw in ((GlobTool(tree), {"pattern": "*"}), (GrepTool(tree), {"pattern": "x"})):
        assert tool.side_effecting(tool.parse(raw)) is False


async def test_the_workdirs_gitignore_is_honoured(tree: Path) -> None:
    for name in ("dist/bundle.js", "build/out.txt", "src/build/keep.py", "logs/a.log", "logs/keep.log"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("TODO generated\n")
    (tree / ".gitignore").write_text("# build output\ndist/\n/build\n*.log\n!keep.log\n")
    text, _ = await run(GrepTool(tree), tree, pattern="generated")
    assert text.splitlines() == ["logs/keep.log:1: TODO generated", "src/build/keep.py:1: TODO generated"]
    text, _ = await run(GlobTool(tree), tree, pattern="**/*.js")
    assert text == "no files match **/*.js in ."
