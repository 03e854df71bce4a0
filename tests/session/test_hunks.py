"""Hunk review logic: hunks of a diff, reverting some of them, the critic's remarks, on real files,
real git checkpoints and a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.session.checkpoints import Checkpoints
from tui_assist.session.checkpoints.hunks import (
    HunkConflict,
    TurnChanges,
    diff_hunks,
    file_hunks,
    find_remarks,
    load_changes,
    reasons_prompt,
    remarks_from_edit,
    remarks_on,
    revert_file,
    revert_hunks,
    revert_text,
)
from tui_assist.session.history import History
from tui_assist.session.rewind import apply_rewind, plan_rewind
from tui_assist.store.db import Store

OLD = "".join(f"line {i}\n" for i in range(1, 21))
NEW = OLD.replace("line 3\n", "line three\n").replace("line 17\n", "line 17\nline 17b\n")


def test_changes_far_apart_are_two_hunks_with_context() -> None:
    first, second = diff_hunks("a.txt", OLD, NEW)
    assert first.header == "@@ -1,6 +1,6 @@"
    assert first.lines == (" line 1", " line 2", "-line 3", "+line three", " line 4", " line 5", " line 6")
    assert second.header == "@@ -15,6 +15,7 @@"
    assert "+line 17b" in second.lines
    assert second.span == (15, 21) and second.changed == (18, 18) and first.changed == (3, 3)
    assert diff_hunks("a.txt", OLD, OLD) == ()


def test_reverting_one_hunk_keeps_the_other_and_the_bytes() -> None:
    assert revert_text(OLD, NEW, {0}) == OLD.replace("line 17\n", "line 17\nline 17b\n")
    assert revert_text(OLD, NEW, {1}) == OLD.replace("line 3\n", "line three\n")
    assert revert_text(OLD, NEW, {0, 1}) == OLD
    assert revert_text(OLD, NEW, set()) == NEW
    # CRLF line ends and a last line without one survive.
    old, new = "a\r\nb\r\nc", "a\r\nB\r\nc\r\nd"
    (hunk,) = diff_hunks("w.txt", old, new)
    assert revert_text(old, new, {hunk.index}) == old


def test_a_file_changed_since_the_turn_is_reverted_where_the_hunk_now_is() -> None:
    file = file_hunks("a.txt", "modified", OLD.encode(), NEW.encode())
    moved = "a header the user added\n" + NEW
    assert (
        revert_file(file, {1}, moved.encode())
        == ("a header the user added\n" + OLD.replace("line 3\n", "line three\n")).encode()
    )
    edited = NEW.replace("line 17b", "line 17 by the user")
    with pytest.raises(HunkConflict):
        revert_file(file, {1}, edited.encode())
    assert revert_file(file, {0}, edited.encode()) == edited.replace("line three", "line 3").encode()
    # Found by whole lines only: the same text inside a longer line is not the hunk.
    prefixed = NEW.replace("line 15\n", "xline 15\n")
    with pytest.raises(HunkConflict):
        revert_file(file, {1}, prefixed.encode())


def test_created_deleted_and_binary_files_revert_whole() -> None:
    created = file_hunks("new.txt", "added", None, b"hello\n")
    assert len(created.hunks) == 1 and revert_file(created, {0}, b"hello\n") is None
    deleted = file_hunks("gone.txt", "deleted", b"bye\n", None)
    assert revert_file(deleted, {0}, None) == b"bye\n"
    blob = file_hunks("img.bin", "modified", b"\x00\x01", b"\x00\x02")
    assert blob.whole and blob.hunks[0].lines == ()
    assert (
        reasons_prompt([(blob.hunks[0], "")]).splitlines()[1] == "- img.bin the whole file: no reason given"
    )
    assert revert_file(blob, {0}, b"\x00\x02") == b"\x00\x01"


def test_the_critics_remarks_find_the_hunks_they_name() -> None:
    paths = ["src/app.py", "README.md"]
    feedback = (
        "REVISE. The rename at `src/app.py:3` breaks the import. "
        "app.py lines 16-18 add a line nobody asked for. "
        "See line 2 of README.md too. "
        "The README.md is fine otherwise."
    )
    remarks = find_remarks(feedback, paths)
    assert [(r.path, r.lines) for r in remarks] == [
        ("src/app.py", (3, 3)),
        ("src/app.py", (16, 18)),
        ("README.md", (2, 2)),
        ("README.md", None),
    ]
    first, second = diff_hunks("src/app.py", OLD, NEW)
    assert remarks_on(first, remarks) == ["The rename at `src/app.py:3` breaks the import."]
    assert remarks_on(second, remarks) == ["app.py lines 16-18 add a line nobody asked for."]
    assert find_remarks("myapp.py:3 and app.pyc:4", paths) == []
    assert [r.lines for r in find_remarks("README.md (line 4) and README.md, lines 7 to 9", paths)] == [
        (4, 4),
        (7, 9),
    ]


def test_a_sentence_citing_an_edit_is_about_the_lines_it_wrote() -> None:
    file = file_hunks("a.txt", "modified", OLD.encode(), NEW.encode())
    last_edit = remarks_from_edit(
        ["[2] spells line 3 out."], file, OLD.replace("line 17\n", "line 17\nline 17b\n"), NEW
    )
    assert [r.lines for r in last_edit] == [(3, 3)]  # the file holds what it wrote: its lines
    assert remarks_on(file.hunks[0], last_edit) == ["[2] spells line 3 out."] and not remarks_on(
        file.hunks[1], last_edit
    )
    earlier = remarks_from_edit(
        ["[1] adds line 17b."], file, OLD, OLD.replace("line 17\n", "line 17\nline 17b\n")
    )
    assert [(r.path, r.lines) for r in earlier] == [("a.txt", None)]  # changed again since: the file


def test_the_reasons_become_a_prompt() -> None:
    first, second = diff_hunks("a.txt", OLD, NEW)
    text = reasons_prompt([(first, "keep the digit"), (second, "")])
    assert text.splitlines() == [
        "I reverted these hunks of your change:",
        "- a.txt line 3 (@@ -1,6 +1,6 @@): keep the digit",
        "- a.txt line 18 (@@ -15,6 +15,7 @@): no reason given",
    ]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "a.txt").write_text(OLD)
    (path / "old.txt").write_text("to be deleted\n")
    return path


async def _turn(workdir: Path, checkpoints: Checkpoints) -> TurnChanges:
    """A turn that edits a.txt in two places, creates b.txt and deletes old.txt (as bash would)."""
    before = await checkpoints.snapshot("before:t1")
    (workdir / "a.txt").write_text(NEW)
    (workdir / "b.txt").write_text("made by the turn\n")
    (workdir / "old.txt").unlink()
    after = await checkpoints.snapshot("after")
    changes = await load_changes(checkpoints, before.commit, after.commit)
    assert changes.more == 0 and changes.reverted == frozenset()
    assert changes.workdir == str(workdir.resolve())
    return changes


async def test_changes_come_from_the_checkpoints_and_a_subset_reverts_on_disk(
    tmp_path: Path, workdir: Path
) -> None:
    checkpoints = Checkpoints(tmp_path / "data", workdir)
    changes = await _turn(workdir, checkpoints)
    assert [(f.path, f.kind, len(f.hunks)) for f in changes.files] == [
        ("a.txt", "modified", 2),
        ("b.txt", "added", 1),
        ("old.txt", "deleted", 1),
    ]
    done = await revert_hunks(checkpoints, changes, {("a.txt", 0), ("b.txt", 0), ("old.txt", 0)})
    assert done.reverted == (("a.txt", 0), ("b.txt", 0), ("old.txt", 0)) and done.conflicts == ()
    assert (workdir / "a.txt").read_text() == OLD.replace("line 17\n", "line 17\nline 17b\n")
    assert not (workdir / "b.txt").exists()
    assert (workdir / "old.txt").read_text() == "to be deleted\n"
    assert done.before != done.after
    again = await load_changes(checkpoints, changes.before, changes.after)  # the review opened again
    assert again.reverted == {("a.txt", 0), ("b.txt", 0), ("old.txt", 0)}


async def test_rewind_after_a_partial_revert_still_restores_the_turn(tmp_path: Path, workdir: Path) -> None:
    data_dir = tmp_path / "data"
    store = await Store.open(data_dir)
    try:
        conversation = await store.create_conversation(title="t", model="m", workdir=str(workdir))
        await store.begin_turn(conversation_id=conversation, turn_id="t1", strategy="agent", prompt="edit")
        checkpoints = Checkpoints(data_dir, workdir)
        before = await checkpoints.snapshot("before:t1")
        row = await store.record_checkpoint(
            workdir=str(workdir.resolve()), before=before.commit, turn_id="t1"
        )
        (workdir / "a.txt").write_text(NEW)
        (workdir / "b.txt").write_text("made by the turn\n")
        await store.finish_checkpoint(row, (await checkpoints.snapshot("after")).commit)

        history = History(store, data_dir)
        changes = await history.turn_hunks("t1")
        assert changes is not None and [h.key for h in changes.hunks] == [
            ("a.txt", 0),
            ("a.txt", 1),
            ("b.txt", 0),
        ]
        await history.revert_hunks(changes, {("a.txt", 1)})
        assert (workdir / "a.txt").read_text() == OLD.replace("line 3\n", "line three\n")

        plan = await plan_rewind(store, data_dir, "t1", "files")
        assert plan.files is not None and plan.files.user_changed == ()  # the revert is not the user's
        assert plan.files.restore == ("a.txt",) and plan.files.delete == ("b.txt",)
        await apply_rewind(store, data_dir, plan)
        assert (workdir / "a.txt").read_text() == OLD and not (workdir / "b.txt").exists()
    finally:
        await store.close()


async def test_read_files_takes_many_files_of_a_snapshot_in_one_call(tmp_path: Path, workdir: Path) -> None:
    (workdir / "empty.txt").write_bytes(b"")
    (workdir / "with space.bin").write_bytes(b"\x00\n\x01")
    (workdir / "sub").mkdir()
    (workdir / "sub" / "x.txt").write_text("x\n")
    checkpoints = Checkpoints(tmp_path / "data", workdir)
    commit = (await checkpoints.snapshot("s")).commit
    found = await checkpoints.read_files(
        commit, ["a.txt", "missing.txt", "sub", "empty.txt", "with space.bin", "sub/x.txt"]
    )
    assert found == {
        "a.txt": OLD.encode(),
        "empty.txt": b"",
        "with space.bin": b"\x00\n\x01",
        "sub/x.txt": b"x\n",
    }


async def test_a_file_changed_since_in_a_rejected_hunk_is_left_alone(tmp_path: Path, workdir: Path) -> None:
    checkpoints = Checkpoints(tmp_path / "data", workdir)
    changes = await _turn(workdir, checkpoints)
    edited = NEW.replace("line 17b", "line 17 by the user")
    (workdir / "a.txt").write_text(edited)
    done = await revert_hunks(checkpoints, changes, {("a.txt", 1), ("b.txt", 0)})
    assert done.conflicts == ("a.txt",) and done.reverted == (("b.txt", 0),)
    assert (workdir / "a.txt").read_text() == edited and not (workdir / "b.txt").exists()
