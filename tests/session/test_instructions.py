"""Project instructions: which AGENTS.md / CLAUDE.md files are read, in what order, bounded, and
re-read only when they change; and that a real turn's system prompt carries them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic, Reply
from tui_assist.session.instructions import InstructionsLoader, candidate_files


def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A git repo with AGENTS.md at its root, a folder with only CLAUDE.md, and the workdir below."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("root rules")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "CLAUDE.md").write_text("pkg rules")
    work = repo / "pkg" / "sub"
    work.mkdir()
    (work / "AGENTS.md").write_text("sub rules")
    (work / "CLAUDE.md").write_text("never read: AGENTS.md wins in its folder")
    user = tmp_path / "config"
    user.mkdir()
    (user / "AGENTS.md").write_text("user rules")
    return work, user


def test_files_are_read_from_the_user_then_the_git_root_down_to_the_workdir(tmp_path: Path) -> None:
    work, user = tree(tmp_path)
    names = [str(p.relative_to(tmp_path)) for p in candidate_files(work, user)]
    assert names == ["config/AGENTS.md", "repo/AGENTS.md", "repo/pkg/CLAUDE.md", "repo/pkg/sub/AGENTS.md"]
    text = InstructionsLoader(work, user).load().text
    assert (
        text.index("user rules")
        < text.index("root rules")
        < text.index("pkg rules")
        < text.index("sub rules")
    )
    assert f'<instructions path="{work / "AGENTS.md"}">' in text
    assert "never read" not in text


def test_outside_git_only_the_workdir_is_read(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("above, not read")
    work = tmp_path / "work"
    work.mkdir()
    (work / "CLAUDE.md").write_text("here")
    assert candidate_files(work, tmp_path / "no-config") == [work / "CLAUDE.md"]


def test_they_are_bounded_with_a_marker(tmp_path: Path) -> None:
    work, user = tree(tmp_path)
    (work / "AGENTS.md").write_text("x" * 5_000)
    loaded = InstructionsLoader(work, user, max_chars=1_000).load()
    assert len(loaded.text) < 2_000
    assert "truncated" in loaded.text or "omitted" in loaded.text or "cut" in loaded.text
    assert loaded.files[-1].truncated


def test_they_are_re_read_only_when_a_file_changes(tmp_path: Path) -> None:
    work, user = tree(tmp_path)
    loader = InstructionsLoader(work, user)
    first = loader.load()
    assert loader.load() is first
    (work / "AGENTS.md").write_text("sub rules, changed")
    os.utime(work / "AGENTS.md", ns=(1, 1))  # a change the stat can't miss, even in the same tick
    assert "changed" in loader.load().text
    (tmp_path / "repo" / "AGENTS.md").unlink()
    assert "root rules" not in loader.load().text


def test_a_real_turn_sends_them_in_the_system_prompt_and_ask_json_lists_them(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    work, _ = tree(tmp_path)
    config = tmp_path / "xdg-config" / "tui-assist"
    config.mkdir(parents=True)
    (config / "AGENTS.md").write_text("user rules")
    fake.add(Reply("done"))
    env = dict(os.environ) | {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "tui_assist", "ask", "hi", "--json", "--workdir", str(work)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)["instructions"]
    assert listed == [
        str(config / "AGENTS.md"),
        str(tmp_path / "repo" / "AGENTS.md"),
        str(tmp_path / "repo" / "pkg" / "CLAUDE.md"),
        str(work / "AGENTS.md"),
    ]
    system = json.dumps(fake.requests[-1].system)
    assert system.index("user rules") < system.index("root rules") < system.index("sub rules")
