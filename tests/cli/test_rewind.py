"""Checkpoints and rewind as a user runs them: `ask` through the real SDK against the loopback fake,
real tools (the editor and bash), a real store, then `tui-assist rewind`."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse


def tui_assist(*args: str, fake: FakeAnthropic, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ) | env | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
    return subprocess.run(
        [sys.executable, "-m", "tui_assist", *args], capture_output=True, text=True, env=full, timeout=120
    )


def git_tree_digest(git_dir: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(git_dir)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(git_dir.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    work.mkdir()
    (work / "b.txt").write_text("original b\n")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return work


def test_rewind_undoes_a_turns_editor_and_bash_changes_and_keeps_the_users_own(
    fake: FakeAnthropic, repo: Path, tmp_path: Path
) -> None:
    env = {"TUI_ASSIST_HOME": str(tmp_path / "data")}
    user_git = git_tree_digest(repo / ".git")
    fake.add(
        Reply(
            [
                ToolUse(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "a.txt", "file_text": "new a\n"},
                ),
                ToolUse("bash", {"command": "echo changed by bash > b.txt"}),
            ]
        ),
        Reply("Created a.txt and changed b.txt."),
    )
    turn = tui_assist(
        "ask", "--yes", "--json", "--workdir", str(repo), "make the changes", fake=fake, env=env
    )
    assert turn.returncode == 0, turn.stderr
    turn_id = json.loads(turn.stdout)["turn_id"]
    assert (repo / "a.txt").read_text() == "new a\n" and (repo / "b.txt").read_text() == "changed by bash\n"
    (repo / "mine.txt").write_text("the user's own work\n")  # made after the turn, by hand

    dry = tui_assist("rewind", turn_id[:8], "--json", fake=fake, env=env)
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert (plan["restore"], plan["delete"], plan["applied"]) == (["b.txt"], ["a.txt"], False)
    assert {"path": "mine.txt", "reason": "created_by_user"} in plan["kept"]
    assert (repo / "a.txt").exists()  # a dry run changes nothing

    done = tui_assist("rewind", turn_id, "--yes", fake=fake, env=env)
    assert done.returncode == 0, done.stderr
    assert "mine.txt" in done.stdout and "Rewound" in done.stdout
    assert not (repo / "a.txt").exists()
    assert (repo / "b.txt").read_text() == "original b\n"
    assert (repo / "mine.txt").read_text() == "the user's own work\n"
    assert git_tree_digest(repo / ".git") == user_git

    shown = tui_assist(
        "history", "show", json.loads(turn.stdout)["conversation_id"], "--json", fake=fake, env=env
    )
    assert shown.returncode == 0 and json.loads(shown.stdout)["turns"] == []  # the conversation, too
    stats = tui_assist("stats", fake=fake, env=env)
    assert stats.returncode == 0 and "File checkpoints (for rewind):" in stats.stdout


def test_rewind_errors_are_one_line(fake: FakeAnthropic, tmp_path: Path) -> None:
    env = {"TUI_ASSIST_HOME": str(tmp_path / "data")}
    (tmp_path / "data").mkdir()
    fake.add(Reply("hi"))
    assert tui_assist("ask", "--workdir", str(tmp_path), "hello", fake=fake, env=env).returncode == 0
    proc = tui_assist("rewind", "no-such-turn", fake=fake, env=env)
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("tui-assist: rewind: no turn with id") and len(proc.stderr.splitlines()) == 1
    )


def test_an_ask_that_changes_nothing_exits_without_its_snapshot_and_the_next_ask_and_rewind_work(
    fake: FakeAnthropic, repo: Path, tmp_path: Path
) -> None:
    # git stalls mid-write while the stall flag exists, holding the shadow repository's locks:
    # an `ask` exiting kills it there, as a slow snapshot of a big repository would be.
    real_git = shutil.which("git")
    bin_dir, stall = tmp_path / "bin", tmp_path / "stall"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        f'if [ -e "{stall}" ] && [ -n "$GIT_DIR" ]; then\n'
        '  case " $* " in *" update-index "*) touch "$GIT_DIR/index.lock" "$GIT_DIR/HEAD.lock"; exec sleep 600;; esac\n'
        "fi\n"
        f'exec "{real_git}" "$@"\n'
    )
    (bin_dir / "git").chmod(0o755)
    stall.touch()
    env = {"TUI_ASSIST_HOME": str(tmp_path / "data"), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    fake.add(Reply("Just an answer."))
    first = tui_assist("ask", "--yes", "--json", "--workdir", str(repo), "what is b.txt?", fake=fake, env=env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["answer"] == "Just an answer."
    [shadow] = (tmp_path / "data" / "checkpoints").glob("*.git")
    assert (shadow / "index.lock").exists()  # what the killed git left
    stall.unlink()

    # The next ask's snapshot recovers; its change is rewound, and so is it from the first turn.
    fake.add(Reply([ToolUse("bash", {"command": "echo changed > b.txt"})]), Reply("Changed."))
    second = tui_assist("ask", "--yes", "--json", "--workdir", str(repo), "change b.txt", fake=fake, env=env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["warnings"] == []
    assert (repo / "b.txt").read_text() == "changed\n"
    plan = tui_assist("rewind", json.loads(first.stdout)["turn_id"], "--files", "--json", fake=fake, env=env)
    assert plan.returncode == 0, plan.stderr
    assert (json.loads(plan.stdout)["restore"], json.loads(plan.stdout)["problem"]) == (["b.txt"], None)
    done = tui_assist("rewind", json.loads(second.stdout)["turn_id"], "--yes", fake=fake, env=env)
    assert done.returncode == 0, done.stderr
    assert (repo / "b.txt").read_text() == "original b\n"
