from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.tools.files import CreateArgs, InsertArgs, StrReplaceArgs, TextEditorTool, ViewArgs


@pytest.fixture
def editor(tmp_path: Path) -> TextEditorTool:
    return TextEditorTool(tmp_path, max_output_chars=2_000)


async def edit(editor: TextEditorTool, ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await editor.run(editor.parse(raw), ctx)


def test_spec_uses_the_native_text_editor_type(editor: TextEditorTool) -> None:
    assert editor.spec.name == "str_replace_based_edit_tool"
    assert editor.spec.native_type == "text_editor_20250728"
    assert editor.spec.input_schema["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
    ]


async def test_create_view_replace_insert_round_trip(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    created = await edit(editor, ctx, command="create", path="pkg/mod.py", file_text="a = 1\nb = 2\n")
    assert not created.is_error
    assert (tmp_path / "pkg" / "mod.py").read_text() == "a = 1\nb = 2\n"

    view = await edit(editor, ctx, command="view", path="pkg/mod.py")
    assert view.content == "     1\ta = 1\n     2\tb = 2"

    replaced = await edit(
        editor, ctx, command="str_replace", path="pkg/mod.py", old_str="b = 2", new_str="b = 3"
    )
    assert not replaced.is_error
    assert "b = 3" in replaced.content

    inserted = await edit(
        editor, ctx, command="insert", path="pkg/mod.py", insert_line=1, insert_text="c = 4"
    )
    assert not inserted.is_error
    top = await edit(editor, ctx, command="insert", path="pkg/mod.py", insert_line=0, insert_text="# head\n")
    assert not top.is_error
    end = await edit(editor, ctx, command="insert", path="pkg/mod.py", insert_line=4, insert_text="d = 5\n")
    assert not end.is_error

    assert (tmp_path / "pkg" / "mod.py").read_text() == "# head\na = 1\nc = 4\nb = 3\nd = 5\n"


async def test_view_range(editor: TextEditorTool, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    out = await edit(editor, ctx, command="view", path="f.txt", view_range=[3, 4])
    assert out.content == "     3\tline 3\n     4\tline 4"
    out = await edit(editor, ctx, command="view", path="f.txt", view_range=[9, -1])
    assert out.content == "     9\tline 9\n    10\tline 10"
    out = await edit(editor, ctx, command="view", path="f.txt", view_range=[11, 12])
    assert out.is_error
    assert "has 10 lines" in out.content


async def test_view_of_a_large_file_is_truncated_with_a_marker(tmp_path: Path, ctx: ToolContext) -> None:
    editor = TextEditorTool(tmp_path, max_output_chars=300)
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    out = await edit(editor, ctx, command="view", path="big.txt")
    assert len(out.content) < 500
    assert out.content.startswith("     1\tline 1\n")
    assert "characters truncated" in out.content
    assert "of 1000 in big.txt not shown; use view_range" in out.content


async def test_view_cuts_a_single_huge_line_with_a_marker(tmp_path: Path, ctx: ToolContext) -> None:
    editor = TextEditorTool(tmp_path, max_output_chars=300)
    (tmp_path / "min.js").write_text("x" * 5000 + "\nsecond\n")
    out = await edit(editor, ctx, command="view", path="min.js")
    assert "line cut: 4707 characters truncated" in out.content
    assert "second" not in out.content


async def test_view_of_a_directory_lists_two_levels_without_hidden_items(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "src" / "deep" / "deeper").mkdir(parents=True)
    (tmp_path / "src" / "deep" / "deeper" / "too_deep.py").write_text("")
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "README.md").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    (tmp_path / ".env").write_text("")

    out = await edit(editor, ctx, command="view", path=".")
    listing = out.content.splitlines()[1:]
    assert listing == ["README.md", "src/", "src/deep/", "src/main.py"]
    assert not out.is_error


async def test_create_overwrites_and_says_so(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    args = editor.parse({"command": "create", "path": "f.txt", "file_text": "new\n"})
    assert editor.summary(args) == "create f.txt (overwrites the existing file)\nnew\n"
    out = await editor.run(args, ctx)
    assert "overwrote" in out.content
    assert (tmp_path / "f.txt").read_text() == "new\n"


async def test_str_replace_with_no_match_is_an_error(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    out = await edit(editor, ctx, command="str_replace", path="f.txt", old_str="gamma", new_str="x")
    assert out.is_error
    assert "old_str was not found in f.txt" in out.content
    assert (tmp_path / "f.txt").read_text() == "alpha\nbeta\n"


async def test_str_replace_with_two_matches_is_an_error(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("x = 1\ny = 2\nx = 1\n")
    out = await edit(editor, ctx, command="str_replace", path="f.txt", old_str="x = 1", new_str="x = 9")
    assert out.is_error
    assert "occurs 2 times in f.txt (at lines 1, 3)" in out.content
    assert (tmp_path / "f.txt").read_text() == "x = 1\ny = 2\nx = 1\n"


async def test_str_replace_preserves_crlf_and_missing_final_newline(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree")
    out = await edit(editor, ctx, command="str_replace", path="w.txt", old_str="two", new_str="TWO")
    assert not out.is_error
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\nTWO\r\nthree"


async def test_insert_out_of_range_and_legacy_new_str(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("a\nb")
    out = await edit(editor, ctx, command="insert", path="f.txt", insert_line=5, insert_text="z")
    assert out.is_error
    assert "has 2 lines" in out.content
    out = await edit(editor, ctx, command="insert", path="f.txt", insert_line=2, new_str="c")
    assert not out.is_error
    assert (tmp_path / "f.txt").read_text() == "a\nb\nc\n"


async def test_missing_and_binary_files_are_error_results(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    out = await edit(editor, ctx, command="view", path="nope.txt")
    assert out.is_error
    assert "does not exist" in out.content
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    out = await edit(editor, ctx, command="str_replace", path="blob.bin", old_str="a", new_str="b")
    assert out.is_error
    assert "binary" in out.content


def test_summaries_show_a_unified_diff(editor: TextEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    replace = editor.parse(
        {"command": "str_replace", "path": "f.py", "old_str": "return 1", "new_str": "return 2"}
    )
    assert editor.summary(replace) == (
        "str_replace f.py\n--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"
    )
    insert = editor.parse({"command": "insert", "path": "f.py", "insert_line": 0, "insert_text": "import os"})
    summary = editor.summary(insert)
    assert summary.startswith("insert f.py after line 0\n--- a/f.py\n+++ b/f.py\n")
    assert "+import os\n def f():" in summary
    assert (tmp_path / "f.py").read_text() == "def f():\n    return 1\n"  # summaries change nothing

    failing = editor.parse({"command": "str_replace", "path": "f.py", "old_str": "nope", "new_str": ""})
    assert "this call will fail" in editor.summary(failing)
    assert editor.summary(editor.parse({"command": "view", "path": "f.py"})) == "view f.py"
    create = editor.parse({"command": "create", "path": "g.py", "file_text": "x = 1\n"})
    assert editor.summary(create) == "create g.py\nx = 1\n"


def test_only_view_is_not_side_effecting(editor: TextEditorTool, tmp_path: Path) -> None:
    assert not editor.side_effecting(editor.parse({"command": "view", "path": "."}))
    assert editor.side_effecting(editor.parse({"command": "create", "path": "a", "file_text": ""}))
    assert editor.side_effecting(editor.parse({"command": "str_replace", "path": "a", "old_str": "x"}))
    assert editor.side_effecting(
        editor.parse({"command": "insert", "path": "a", "insert_line": 0, "insert_text": ""})
    )


# --- confinement ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "sub/../../x", "/", ".."])
@pytest.mark.parametrize("command", ["view", "create"])
def test_paths_outside_the_workdir_are_refused(editor: TextEditorTool, path: str, command: str) -> None:
    raw: dict[str, Any] = {"command": command, "path": path, "file_text": "x"}
    with pytest.raises(ToolInputError, match="outside the working directory"):
        editor.parse(raw)


async def test_an_absolute_path_inside_the_workdir_is_accepted(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    target = tmp_path / "inside.txt"
    out = await edit(editor, ctx, command="create", path=str(target), file_text="ok\n")
    assert not out.is_error
    assert target.read_text() == "ok\n"
    args = editor.parse({"command": "view", "path": str(target)})
    assert isinstance(args, ViewArgs)
    assert args.display == "inside.txt"


@pytest.mark.parametrize("command", ["view", "create"])
def test_a_symlink_pointing_outside_is_refused(
    editor: TextEditorTool, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, command: str
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("secret\n")
    (tmp_path / "link").symlink_to(outside)
    (tmp_path / "filelink").symlink_to(outside / "secret.txt")
    for path in ("link/secret.txt", "filelink", "link/new.txt"):
        with pytest.raises(ToolInputError, match="outside the working directory"):
            editor.parse({"command": command, "path": path, "file_text": "x"})


async def test_a_symlink_swapped_in_after_parse_is_refused_at_run(
    editor: TextEditorTool,
    ctx: ToolContext,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (tmp_path / "sub").mkdir()
    args = editor.parse({"command": "create", "path": "sub/f.txt", "file_text": "x"})
    (tmp_path / "sub").rmdir()
    (tmp_path / "sub").symlink_to(outside)
    out = await editor.run(args, ctx)
    assert out.is_error
    assert "outside the working directory" in out.content
    assert os.listdir(outside) == []


# --- invalid input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"path": "f.txt"}, "command is required"),
        ({"command": "delete", "path": "f.txt"}, "unknown command 'delete'"),
        ({"command": 3, "path": "f.txt"}, "unknown command 3"),
        ({"command": "view"}, "path: is required"),
        ({"command": "view", "path": ""}, "path"),
        ({"command": "view", "path": 7}, "path: Input should be a valid string"),
        ({"command": "create", "path": "f.txt"}, "file_text: is required"),
        ({"command": "str_replace", "path": "f.txt"}, "old_str: is required"),
        ({"command": "str_replace", "path": "f.txt", "old_str": ""}, "old_str"),
        ({"command": "insert", "path": "f.txt", "insert_line": "3", "insert_text": "x"}, "insert_line"),
        ({"command": "insert", "path": "f.txt", "insert_line": -1, "insert_text": "x"}, "insert_line"),
        ({"command": "insert", "path": "f.txt", "insert_line": 1}, "insert_text is required"),
        ({"command": "view", "path": "f.txt", "view_range": [1, 2, 3]}, "view_range"),
        ({"command": "view", "path": "f.txt", "view_range": [0, 5]}, "invalid view_range"),
        ({"command": "view", "path": "f.txt", "view_range": [5, 2]}, "invalid view_range"),
        ({"command": "view", "path": "f.txt", "view_range": ["1", "2"]}, "view_range"),
    ],
)
def test_invalid_input_is_refused(editor: TextEditorTool, raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        editor.parse(raw)


def test_parse_returns_typed_arguments(editor: TextEditorTool, tmp_path: Path) -> None:
    root = tmp_path.resolve()
    assert editor.parse({"command": "view", "path": "a", "view_range": [1, -1]}) == ViewArgs(
        root / "a", "a", (1, -1)
    )
    assert editor.parse({"command": "create", "path": "a", "file_text": "t"}) == CreateArgs(
        root / "a", "a", "t"
    )
    assert editor.parse({"command": "str_replace", "path": "a", "old_str": "o"}) == StrReplaceArgs(
        root / "a", "a", "o", ""
    )
    assert editor.parse(
        {"command": "insert", "path": "a", "insert_line": 2, "insert_text": "t"}
    ) == InsertArgs(root / "a", "a", 2, "t")


# --- special files, sizes, long paths, hard links (issue 15) -----------------------------------


async def call(editor: TextEditorTool, ctx: ToolContext, **raw: Any) -> tuple[str | None, ToolOutput]:
    """What the agent loop does with a call: parse, the approval summary if needed, then run."""
    try:
        args = editor.parse(raw)
    except ToolInputError as error:
        return None, ToolOutput(str(error), is_error=True)
    summary = editor.summary(args) if editor.side_effecting(args) else None
    return summary, await asyncio.wait_for(editor.run(args, ctx), 5)


@contextlib.contextmanager
def unblocking(fifo: Path, after: float = 5.0) -> Iterator[None]:
    """Fail (rather than hang the suite) if the editor opens `fifo` and blocks in it.

    After `after` seconds a thread keeps opening the other end of the FIFO, which releases an
    `open()` blocked on either side, even one running on the event loop itself.
    """
    done = threading.Event()
    released: list[bool] = []

    def release() -> None:
        if done.wait(after):
            return
        released.append(True)
        while not done.is_set():
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, flags))
            time.sleep(0.01)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
    assert not released, f"the editor blocked on the FIFO {fifo.name}"


@pytest.mark.parametrize(
    "raw",
    [
        {"command": "view", "path": "fifo"},
        {"command": "view", "path": "fifo", "view_range": [1, 2]},
        {"command": "create", "path": "fifo", "file_text": "x\n"},
        {"command": "str_replace", "path": "fifo", "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": "fifo", "insert_line": 0, "insert_text": "x"},
    ],
    ids=lambda raw: "-".join(str(value) for value in raw.values())[:30],
)
async def test_a_fifo_is_refused_without_being_opened(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path, raw: dict[str, Any]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with unblocking(fifo):
        summary, out = await call(editor, ctx, **raw)
    assert out.is_error
    assert out.content == (
        "fifo is a FIFO (named pipe), not a regular file; "
        "the editor only handles regular files and did not open it"
    )
    if summary is not None:
        assert "this call will fail: fifo is a FIFO (named pipe)" in summary
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def make_device(path: Path, major: int, minor: int) -> None:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("creating a device node is not permitted here")


@pytest.mark.parametrize("command", ["view", "str_replace", "create"])
async def test_a_character_device_is_refused_without_being_read(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path, command: str
) -> None:
    make_device(tmp_path / "zerodev", 1, 5)  # /dev/zero: reading it never ends
    raw = {"command": command, "path": "zerodev", "old_str": "a", "file_text": "x"}
    summary, out = await call(editor, ctx, **raw)
    assert out.is_error
    assert "zerodev is a character device, not a regular file" in out.content
    assert summary is None or "this call will fail" in summary
    assert stat.S_ISCHR(os.lstat(tmp_path / "zerodev").st_mode)


async def test_a_socket_is_refused(editor: TextEditorTool, ctx: ToolContext, tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        _, out = await call(editor, ctx, command="view", path="sock")
    assert out.content.startswith("sock is a socket, not a regular file")


async def test_files_above_the_size_limit_are_refused_before_reading(
    tmp_path: Path, ctx: ToolContext
) -> None:
    editor = TextEditorTool(tmp_path, max_file_bytes=1_000)
    (tmp_path / "big.txt").write_text("x" * 1_001)
    (tmp_path / "fits.txt").write_text("x" * 1_000)
    for command in ("view", "str_replace", "insert"):
        raw = {"command": command, "path": "big.txt", "old_str": "x", "insert_line": 0, "insert_text": "y"}
        summary, out = await call(editor, ctx, **raw)
        assert out.is_error
        assert "big.txt is 1,001 bytes; the editor handles files up to 1,000 bytes" in out.content
        assert summary is None or "this call will fail" in summary
    assert not (await call(editor, ctx, command="view", path="fits.txt"))[1].is_error
    assert (tmp_path / "big.txt").read_text() == "x" * 1_001


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("n" * 300 + ".txt", "a name in the path is too long: 304 bytes (it starts 'nnnnnnnnnnnnnnnnnnnn')"),
        ("x" * 5_000, "path is too long"),
        ("abc/" * 1_250 + "f.txt", "path is too long"),
        ("dir/" * 2_000 + "f.txt", "path is too long"),
    ],
    ids=["300-char-name", "5000-char-name", "5000-char-path", "2000-levels"],
)
@pytest.mark.parametrize("command", ["create", "view", "str_replace"])
async def test_an_over_long_path_is_an_input_error(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path, path: str, message: str, command: str
) -> None:
    summary, out = await call(editor, ctx, command=command, path=path, file_text="x\n", old_str="x")
    assert summary is None  # refused before anyone is asked to approve it
    assert out.is_error
    assert message in out.content
    assert len(out.content) < 300
    assert os.listdir(tmp_path) == []


async def test_a_deep_path_within_the_limits_is_created_without_recursion(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    levels = 1_500  # past Python's recursion limit, within PATH_MAX
    path = "d/" * levels + "f.txt"
    summary, out = await call(editor, ctx, command="create", path=path, file_text="deep\n")
    assert summary == f"create {path}\ndeep\n"
    assert not out.is_error, out.content
    try:
        assert (tmp_path / path).read_text() == "deep\n"
    finally:
        # pytest removes old temp folders recursively: a tree this deep would crash that cleanup.
        subprocess.run(["rm", "-rf", str(tmp_path / "d")], check=True)


async def test_text_that_is_not_valid_unicode_is_an_input_error(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    _, out = await call(editor, ctx, command="create", path="f.txt", file_text="a\ud800b")
    assert out.is_error
    assert "file_text is not valid Unicode" in out.content
    assert not (tmp_path / "f.txt").exists()


@pytest.mark.parametrize(
    "raw",
    [
        {"command": "create", "path": "hardlink", "file_text": "changed\n"},
        {"command": "str_replace", "path": "hardlink", "old_str": "original", "new_str": "changed"},
        {"command": "insert", "path": "hardlink", "insert_line": 0, "insert_text": "changed"},
    ],
    ids=lambda raw: raw["command"],
)
async def test_writes_never_go_through_a_hard_link(
    editor: TextEditorTool,
    ctx: ToolContext,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    raw: dict[str, Any],
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "x"
    outside.write_text("original\n")
    os.link(outside, tmp_path / "hardlink")  # what `ln ../outside/x hardlink` in bash does

    _, out = await call(editor, ctx, **raw)

    assert not out.is_error, out.content
    assert "changed" in (tmp_path / "hardlink").read_text()
    assert outside.read_text() == "original\n"
    assert os.stat(outside).st_nlink == 1
    assert os.listdir(tmp_path) == ["hardlink"]  # no temporary file left behind


async def test_a_replaced_file_keeps_its_permissions(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o750)
    _, out = await call(editor, ctx, command="str_replace", path="run.sh", old_str="one", new_str="two")
    assert not out.is_error
    assert script.read_text() == "echo two\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


async def test_create_under_a_file_is_an_error(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "plain").write_text("")
    _, out = await call(editor, ctx, command="create", path="plain/f.txt", file_text="x")
    assert out.is_error
    assert (tmp_path / "plain").read_text() == ""
    (tmp_path / "dir").mkdir()
    summary, out = await call(editor, ctx, command="create", path="dir", file_text="x")
    assert summary == "create dir (this call will fail: dir is a directory; cannot write a file there)"
    assert out.is_error


async def test_every_write_reports_the_files_text_before_and_after(
    editor: TextEditorTool, ctx: ToolContext, tmp_path: Path
) -> None:
    from tui_assist.core.events import FileDiff

    path = str(tmp_path / "a.txt")
    created = await edit(editor, ctx, command="create", path="a.txt", file_text="one\n")
    assert created.diff == FileDiff(path, None, "one\n")
    inserted = await edit(editor, ctx, command="insert", path="a.txt", insert_line=1, insert_text="two\n")
    assert inserted.diff == FileDiff(path, "one\n", "one\ntwo\n")
    replaced = await edit(editor, ctx, command="str_replace", path="a.txt", old_str="two", new_str="2")
    assert replaced.diff == FileDiff(path, "one\ntwo\n", "one\n2\n")
    overwritten = await edit(editor, ctx, command="create", path="a.txt", file_text="new\n")
    assert overwritten.diff == FileDiff(path, "one\n2\n", "new\n")
    assert (await edit(editor, ctx, command="view", path="a.txt")).diff is None
    failed = await edit(editor, ctx, command="str_replace", path="a.txt", old_str="absent", new_str="x")
    assert failed.is_error and failed.diff is None
