"""Checkpoints on real git and real files: snapshots, plans, restores, prune."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import ToolContext
from tui_assist.session.checkpoints import (
    CheckpointError,
    Checkpoints,
    FileChange,
    KeptFile,
    SkippedFile,
    TurnSnapshots,
)
from tui_assist.tools.registry import default_toolbox

LIMIT = 1024


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def cps(tmp_path: Path, workdir: Path) -> Checkpoints:
    return Checkpoints(tmp_path / "data", workdir, max_file_bytes=LIMIT)


def user_git(repo: Path, *args: str) -> str:
    """The user's own git, isolated from this machine's config."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "User",
        "GIT_AUTHOR_EMAIL": "user@example.com",
        "GIT_COMMITTER_NAME": "User",
        "GIT_COMMITTER_EMAIL": "user@example.com",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def init_user_repo(repo: Path, files: dict[str, str]) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    user_git(repo, "init", "-q", "-b", "main")
    user_git(repo, "add", "-A")
    user_git(repo, "commit", "-q", "-m", "initial")


def fingerprint(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under `root`: kind, mode, mtime and content digest (or link target)."""
    seen: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                seen[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                seen[rel] = ("dir", info.st_mode)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                seen[rel] = ("file", info.st_mode, info.st_mtime_ns, digest)
    return seen


async def run_turn(workdir: Path, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Run tool calls through the real tools, as a turn would."""

    async def no_subagents(description: str, prompt: str) -> str:
        raise AssertionError("no sub-agents here")

    ctx = ToolContext(workdir=workdir, node_id="tool-1", run_subagent=no_subagents)
    async with default_toolbox(workdir, bash_timeout=10) as box:
        for name, raw in calls:
            tool = box.get(name)
            assert tool is not None
            output = await tool.run(tool.parse(raw), ctx)
            assert not output.is_error, output.content


async def turn(cps: Checkpoints, turn_id: str, change: Any) -> TurnSnapshots:
    before = await cps.snapshot(f"before:{turn_id}")
    result = change()
    if asyncio.iscoroutine(result):
        await result
    after = await cps.snapshot(f"after:{turn_id}")
    return TurnSnapshots(before.commit, after.commit)


async def test_a_turn_is_undone_while_the_users_own_files_and_git_stay(
    cps: Checkpoints, workdir: Path
) -> None:
    init_user_repo(workdir, {"b.txt": "original\n", "src/keep.py": "x = 1\n"})
    git_before = fingerprint(workdir / ".git")

    before = await cps.snapshot("before:t1")
    await run_turn(
        workdir,
        [
            ("str_replace_based_edit_tool", {"command": "create", "path": "a.txt", "file_text": "new\n"}),
            ("bash", {"command": "printf 'changed by bash\\n' > b.txt"}),
        ],
    )
    after = await cps.snapshot("after:t1")
    assert await cps.changed_files(before.commit, after.commit) == [
        FileChange("a.txt", "added"),
        FileChange("b.txt", "modified"),
    ]

    (workdir / "notes.txt").write_text("my own notes\n")
    plan = await cps.plan_restore(before.commit, [TurnSnapshots(before.commit, after.commit)])
    assert plan.restore == ("b.txt",)
    assert plan.delete == ("a.txt",)
    assert plan.user_changed == ()
    assert plan.kept == (KeptFile("notes.txt", "created_by_user"),)
    assert (workdir / "a.txt").exists(), "planning changes nothing"

    result = await cps.restore(plan)
    assert not (workdir / "a.txt").exists()
    assert (workdir / "b.txt").read_text() == "original\n"
    assert (workdir / "notes.txt").read_text() == "my own notes\n"
    assert result.restored == ("b.txt",)
    assert result.deleted == ("a.txt",)
    assert result.kept == (KeptFile("notes.txt", "created_by_user"),)
    assert fingerprint(workdir / ".git") == git_before
    assert user_git(workdir, "status", "--porcelain") == "?? notes.txt\n"


async def test_a_file_the_user_changed_after_the_turn_is_a_warning_not_overwritten(
    cps: Checkpoints, workdir: Path
) -> None:
    (workdir / "b.txt").write_text("v1\n")
    (workdir / "c.txt").write_text("c1\n")
    t1 = await turn(cps, "t1", lambda: (workdir / "b.txt").write_text("v2 by the turn\n"))
    (workdir / "b.txt").write_text("v3 by the user\n")
    (workdir / "c.txt").write_text("c2 by the user\n")

    plan = await cps.plan_restore(t1.before, [t1])
    assert plan.restore == () and plan.delete == ()
    assert plan.user_changed == (FileChange("b.txt", "modified"), FileChange("c.txt", "modified"))

    kept = await cps.restore(plan)
    assert (workdir / "b.txt").read_text() == "v3 by the user\n"
    assert kept.kept == (KeptFile("b.txt", "changed_by_user"), KeptFile("c.txt", "changed_by_user"))

    again = await cps.plan_restore(t1.before, [t1, TurnSnapshots(kept.before, kept.after)])
    await cps.restore(again, overwrite_user_changes=True, paths=["b.txt"])
    assert (workdir / "b.txt").read_text() == "v1\n"
    assert (workdir / "c.txt").read_text() == "c2 by the user\n"


async def test_rewinding_an_earlier_turn_undoes_later_turns_but_not_the_user_in_between(
    cps: Checkpoints, workdir: Path
) -> None:
    (workdir / "b.txt").write_text("b1\n")
    t1 = await turn(cps, "t1", lambda: (workdir / "b.txt").write_text("b2\n"))
    (workdir / "mine.txt").write_text("between turns\n")
    t2 = await turn(cps, "t2", lambda: (workdir / "d.txt").write_text("by turn 2\n"))
    t3 = await turn(cps, "t3", lambda: (workdir / "b.txt").unlink())

    plan = await cps.plan_restore(t1.before, [t1, t2, t3])
    assert plan.restore == ("b.txt",)
    assert plan.delete == ("d.txt",)
    assert plan.kept == (KeptFile("mine.txt", "created_by_user"),)
    await cps.restore(plan)
    assert sorted(p.name for p in workdir.iterdir()) == ["b.txt", "mine.txt"]
    assert (workdir / "b.txt").read_text() == "b1\n"


async def test_a_turn_that_ended_without_an_after_snapshot_owns_changes_up_to_the_next_one(
    cps: Checkpoints, workdir: Path
) -> None:
    before = await cps.snapshot("before:t1")
    (workdir / "half.txt").write_text("written before the crash\n")
    plan = await cps.plan_restore(before.commit, [TurnSnapshots(before.commit, None)])
    assert plan.delete == ("half.txt",)


async def test_ignored_files_are_neither_snapshotted_nor_touched(cps: Checkpoints, workdir: Path) -> None:
    (workdir / ".gitignore").write_text("*.log\nbuild/\n")
    (workdir / "app.log").write_text("old log\n")

    def change() -> None:
        (workdir / "app.log").write_text("new log\n")
        (workdir / "build").mkdir()
        (workdir / "build" / "out.o").write_text("object\n")
        (workdir / "kept.txt").write_text("tracked\n")

    t1 = await turn(cps, "t1", change)
    assert await cps.changed_files(t1.before, t1.after or "") == [FileChange("kept.txt", "added")]
    await cps.restore(await cps.plan_restore(t1.before, [t1]))
    assert not (workdir / "kept.txt").exists()
    assert (workdir / "app.log").read_text() == "new log\n"
    assert (workdir / "build" / "out.o").read_text() == "object\n"


async def test_a_tracked_file_that_becomes_ignored_leaves_the_snapshot(
    cps: Checkpoints, workdir: Path
) -> None:
    (workdir / "secret.env").write_text("KEY=1\n")
    first = await cps.snapshot("one")
    (workdir / ".gitignore").write_text("*.env\n")
    second = await cps.snapshot("two")
    assert await cps.changed_files(first.commit, second.commit) == [
        FileChange(".gitignore", "added"),
        FileChange("secret.env", "deleted"),
    ]


async def test_an_ignored_file_a_turn_unignores_is_not_deleted(cps: Checkpoints, workdir: Path) -> None:
    (workdir / ".gitignore").write_text(".env\n")
    (workdir / ".env").write_text("TOKEN=mine\n")
    await asyncio.sleep(0.1)  # the file's ctime must precede the snapshot's start by more than a clock tick
    t1 = await turn(cps, "t1", lambda: (workdir / ".gitignore").write_text("# nothing ignored\n"))
    assert FileChange(".env", "added") in await cps.changed_files(t1.before, t1.after or "")

    plan = await cps.plan_restore(t1.before, [t1])
    assert plan.restore == (".gitignore",)
    assert plan.delete == ()
    assert plan.kept == (KeptFile(".env", "predates_snapshot"),)
    await cps.restore(plan)
    assert (workdir / ".env").read_text() == "TOKEN=mine\n"
    assert (workdir / ".gitignore").read_text() == ".env\n"


async def test_large_files_are_skipped_reported_and_never_deleted(cps: Checkpoints, workdir: Path) -> None:
    (workdir / "small.txt").write_text("s\n")
    (workdir / "big.bin").write_bytes(b"x" * (LIMIT + 1))
    before = await cps.snapshot("before:t1")
    assert before.skipped == (SkippedFile("big.bin", "too_large", LIMIT + 1),)

    (workdir / "huge.bin").write_bytes(b"y" * (LIMIT * 3))
    (workdir / "small.txt").write_bytes(b"z" * (LIMIT * 2))  # a tracked file that grew too large
    after = await cps.snapshot("after:t1")
    assert [s.path for s in after.skipped] == ["big.bin", "huge.bin", "small.txt"]
    assert await cps.changed_files(before.commit, after.commit) == [FileChange("small.txt", "deleted")]

    plan = await cps.plan_restore(before.commit, [TurnSnapshots(before.commit, after.commit)])
    assert plan.restore == () and plan.delete == ()
    assert plan.kept == (KeptFile("huge.bin", "too_large"), KeptFile("small.txt", "too_large"))
    await cps.restore(plan)
    assert (workdir / "huge.bin").stat().st_size == LIMIT * 3
    assert (workdir / "small.txt").stat().st_size == LIMIT * 2

    (workdir / "big.bin").write_bytes(b"now small\n")
    shrunk = await cps.snapshot("shrunk")
    assert "big.bin" not in [s.path for s in shrunk.skipped]
    assert FileChange("big.bin", "added") in await cps.changed_files(after.commit, shrunk.commit)


async def test_an_unchanged_workdir_reuses_the_previous_snapshot(cps: Checkpoints, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a\n")
    first = await cps.snapshot("before:t1")
    second = await cps.snapshot("after:t1")
    assert first.changed and not second.changed
    assert second.commit == first.commit
    assert len(await cps.snapshots()) == 1

    (workdir / "a.txt").touch()  # new stat data, same bytes
    third = await cps.snapshot("before:t2")
    assert third.commit == first.commit and not third.changed


async def test_nested_repositories_are_snapshotted_as_plain_files(cps: Checkpoints, workdir: Path) -> None:
    init_user_repo(workdir / "vendor" / "lib", {"lib.py": "v = 1\n", ".gitignore": "*.tmp\n"})
    (workdir / "vendor" / "lib" / "scratch.tmp").write_text("ignored inside the nested repo\n")
    nested_git = fingerprint(workdir / "vendor" / "lib" / ".git")

    def change() -> None:
        (workdir / "vendor" / "lib" / "lib.py").write_text("v = 2\n")
        (workdir / "vendor" / "lib" / "added.py").write_text("new\n")

    t1 = await turn(cps, "t1", change)
    assert await cps.changed_files(t1.before, t1.after or "") == [
        FileChange("vendor/lib/added.py", "added"),
        FileChange("vendor/lib/lib.py", "modified"),
    ]
    await cps.restore(await cps.plan_restore(t1.before, [t1]))
    assert (workdir / "vendor" / "lib" / "lib.py").read_text() == "v = 1\n"
    assert not (workdir / "vendor" / "lib" / "added.py").exists()
    assert (workdir / "vendor" / "lib" / "scratch.tmp").exists()
    assert fingerprint(workdir / "vendor" / "lib" / ".git") == nested_git


async def test_restore_gives_back_exact_bytes_modes_and_links(cps: Checkpoints, workdir: Path) -> None:
    (workdir / ".gitattributes").write_text("* text eol=crlf\n")
    mixed = b"crlf\r\nlf\nlone cr\rend"
    (workdir / "mixed.txt").write_bytes(mixed)
    (workdir / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (workdir / "run.sh").chmod(0o755)
    (workdir / "link").symlink_to("mixed.txt")
    (workdir / "we*ird [name].txt").write_text("glob characters\n")

    def change() -> None:
        (workdir / "mixed.txt").write_bytes(b"rewritten\n")
        (workdir / "run.sh").chmod(0o644)
        (workdir / "link").unlink()
        (workdir / "link").symlink_to("elsewhere")
        (workdir / "we*ird [name].txt").unlink()
        (workdir / "dir").mkdir()
        (workdir / "dir" / "inner.txt").write_text("inner\n")

    t1 = await turn(cps, "t1", change)
    await cps.restore(await cps.plan_restore(t1.before, [t1]))
    assert (workdir / "mixed.txt").read_bytes() == mixed
    assert (workdir / "run.sh").stat().st_mode & 0o111
    assert os.readlink(workdir / "link") == "mixed.txt"
    assert (workdir / "we*ird [name].txt").read_text() == "glob characters\n"
    assert not (workdir / "dir").exists(), "a directory emptied by the restore goes too"


async def test_a_file_replaced_by_a_directory_comes_back(cps: Checkpoints, workdir: Path) -> None:
    (workdir / "thing").write_text("a file\n")

    def change() -> None:
        (workdir / "thing").unlink()
        (workdir / "thing").mkdir()
        (workdir / "thing" / "child.txt").write_text("child\n")

    t1 = await turn(cps, "t1", change)
    await cps.restore(await cps.plan_restore(t1.before, [t1]))
    assert (workdir / "thing").read_text() == "a file\n"


async def test_restore_refuses_when_the_workdir_changed_since_the_plan(
    cps: Checkpoints, workdir: Path
) -> None:
    t1 = await turn(cps, "t1", lambda: (workdir / "a.txt").write_text("a\n"))
    plan = await cps.plan_restore(t1.before, [t1])
    (workdir / "late.txt").write_text("after the plan\n")
    with pytest.raises(CheckpointError, match="changed since the rewind was planned"):
        await cps.restore(plan)
    assert (workdir / "a.txt").exists()


async def test_the_data_dir_inside_the_workdir_is_not_snapshotted(tmp_path: Path, workdir: Path) -> None:
    cps = Checkpoints(workdir / ".data", workdir)
    (workdir / "a.txt").write_text("a\n")
    first = await cps.snapshot("one")
    (workdir / "b.txt").write_text("b\n")
    second = await cps.snapshot("two")
    assert await cps.changed_files(first.commit, second.commit) == [FileChange("b.txt", "added")]


async def test_concurrent_calls_are_serialized(cps: Checkpoints, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a\n")
    first, second = await asyncio.gather(cps.snapshot("one"), cps.snapshot("two"))
    assert first.commit == second.commit


async def test_prune_by_count_and_age_keeps_the_latest(cps: Checkpoints, workdir: Path) -> None:
    commits = []
    for i in range(5):
        (workdir / "f.txt").write_text(f"{i}\n")
        commits.append((await cps.snapshot(f"s{i}")).commit)
    size = await cps.size_bytes()
    assert size > 0
    assert await Checkpoints.total_size_bytes(cps.data_dir) >= size

    result = await cps.prune(max_age=timedelta(days=30), max_count=2)
    assert (result.removed, result.remaining) == (3, 2)
    assert [s.commit for s in await cps.snapshots()] == commits[:1:-1][:2]
    assert not await cps.has(commits[0])
    with pytest.raises(CheckpointError, match="no longer exists"):
        await cps.plan_restore(commits[0])
    with pytest.raises(CheckpointError, match="no longer exists"):
        await cps.changed_files(commits[0], commits[-1])

    result = await cps.prune(max_age=timedelta(0), max_count=100)
    assert (result.removed, result.remaining) == (1, 1)
    assert [s.commit for s in await cps.snapshots()] == [commits[-1]]
    assert await cps.has(commits[-1])


async def test_a_pruned_snapshot_inside_the_chain_counts_as_the_users_span(
    cps: Checkpoints, workdir: Path
) -> None:
    (workdir / "b.txt").write_text("b1\n")
    t1 = await turn(cps, "t1", lambda: (workdir / "b.txt").write_text("b2\n"))
    plan = await cps.plan_restore(t1.before, [TurnSnapshots(t1.before, "0" * 40)])
    assert plan.restore == ()
    assert plan.user_changed == (FileChange("b.txt", "modified"),)


async def test_errors_are_one_line_checkpoint_errors(tmp_path: Path, workdir: Path) -> None:
    no_git = Checkpoints(tmp_path / "data", workdir, git="/nonexistent/git")
    with pytest.raises(CheckpointError, match=r"^git is not installed \(install git"):
        await no_git.snapshot("x")
    assert list(no_git.root.iterdir()) == [], "no half-made repository is left behind"

    missing = Checkpoints(tmp_path / "data", tmp_path / "absent")
    with pytest.raises(CheckpointError, match="cannot read the workdir"):
        await missing.snapshot("x")

    cps = Checkpoints(tmp_path / "data", workdir)
    with pytest.raises(CheckpointError, match="not a snapshot id"):
        await cps.changed_files("HEAD", "main")


async def test_too_many_files_is_refused(tmp_path: Path, workdir: Path) -> None:
    for i in range(5):
        (workdir / f"f{i}.txt").write_text("x\n")
    cps = Checkpoints(tmp_path / "data", workdir, max_files=3)
    with pytest.raises(CheckpointError, match="more than the 3 a checkpoint takes"):
        await cps.snapshot("x")


async def test_the_users_git_config_and_environment_have_no_say(
    cps: Checkpoints, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[core]\n\tautocrlf = true\n\thooksPath = /nonexistent\n"
        "[commit]\n\tgpgSign = true\n[user]\n\tuseConfigOnly = true\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "not-a-repo"))  # as inside a git hook
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "elsewhere"))
    (workdir / "dos.txt").write_bytes(b"a\r\nb\n")
    t1 = await turn(cps, "t1", lambda: (workdir / "dos.txt").write_bytes(b"changed\n"))
    await cps.restore(await cps.plan_restore(t1.before, [t1]))
    assert (workdir / "dos.txt").read_bytes() == b"a\r\nb\n"


async def test_the_user_repositorys_info_exclude_is_honoured(cps: Checkpoints, workdir: Path) -> None:
    init_user_repo(workdir, {"tracked.txt": "t\n"})
    (workdir / ".git" / "info").mkdir(exist_ok=True)
    (workdir / ".git" / "info" / "exclude").write_text("local-only/\n")
    t1 = await turn(
        cps,
        "t1",
        lambda: [(workdir / "local-only").mkdir(), (workdir / "local-only" / "x").write_text("x\n")],
    )
    assert await cps.changed_files(t1.before, t1.after or "") == []


async def test_a_lock_left_by_a_killed_git_does_not_block_snapshots(cps: Checkpoints, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a\n")
    first = await cps.snapshot("one")
    (cps.git_dir / "index.lock").write_text("")
    (workdir / "a.txt").write_text("b\n")
    second = await cps.snapshot("two")
    assert second.changed and second.commit != first.commit


async def test_a_plan_with_nothing_to_do_is_empty(cps: Checkpoints, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a\n")
    t1 = await turn(cps, "t1", lambda: None)
    plan = await cps.plan_restore(t1.before, [t1])
    assert plan.is_empty and plan.current == t1.before


async def test_two_instances_on_one_workdir_take_turns(tmp_path: Path, workdir: Path) -> None:
    first, second = Checkpoints(tmp_path / "data", workdir), Checkpoints(tmp_path / "data", workdir)
    assert first.git_dir == second.git_dir
    (workdir / "a.txt").write_text("a\n")
    results = await asyncio.gather(*(cps.snapshot(f"s{i}") for i in range(3) for cps in (first, second)))
    assert len({r.commit for r in results}) == 1
    assert [s.label for s in await first.snapshots()] == ["s0"]
