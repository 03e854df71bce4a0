"""The program's own git on a workdir runs no program the repository names (real git, real bwrap)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tui_assist.core.tooling import ToolContext
from tui_assist.session.checkpoints import Checkpoints
from tui_assist.session.mentions.listing import list_candidates
from tui_assist.tools.registry import default_toolbox
from tui_assist.tools.safe_git import SAFE_CONFIG, git_argv, git_environment, redirect_problem
from tui_assist.tools.sandbox import Sandbox, probe_bwrap
from tui_assist.tools.shell import BashTool

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def _clean_git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def planted_program(where: Path, marker: Path) -> Path:
    """A script that leaves `marker` behind if anything runs it."""
    script = where / "planted.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(0o755)
    return script


def hostile_repo(workdir: Path, marker: Path) -> Path:
    """A repository whose config names a program for everything the program's git might run."""
    workdir.mkdir()
    git(workdir, "init", "-q")
    (workdir / "kept.txt").write_text("x\n")
    git(workdir, "add", "kept.txt")
    script = planted_program(workdir.parent, marker)
    for key in ("core.fsmonitor", "core.pager", "core.sshCommand", "gpg.program", "diff.external"):
        git(workdir, "config", key, str(script))
    hooks = workdir / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("post-index-change", "post-checkout", "pre-commit"):
        (hooks / name).write_text(f"#!/bin/sh\necho ran >> {marker}\n")
        (hooks / name).chmod(0o755)
    git(workdir, "config", "core.hooksPath", str(hooks))
    return script


def test_the_listing_never_runs_the_repositorys_fsmonitor(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    workdir = tmp_path / "repo"
    hostile_repo(workdir, marker)
    (workdir / "new.txt").write_text("y\n")

    listing = list_candidates(workdir)

    assert listing.source == "git" and set(listing.paths) == {"kept.txt", "new.txt"}
    assert not marker.exists()
    # The control: git as it would run without these settings does run the planted program.
    git(workdir, "ls-files", "--cached", "--others", "--exclude-standard")
    assert marker.exists()


def test_inherited_git_variables_do_not_redirect_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    elsewhere = tmp_path / "elsewhere"
    hostile_repo(elsewhere, marker)
    workdir = tmp_path / "plain"
    workdir.mkdir()
    (workdir / "a.txt").write_text("a\n")
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{elsewhere.parent / 'planted.sh'}'")

    listing = list_candidates(workdir)

    assert listing.source == "walk" and listing.paths == ("a.txt",)
    assert not marker.exists()


def test_a_commondir_redirect_falls_back_to_the_walk(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    planted = tmp_path / "planted-common"
    hostile_repo(planted, marker)
    workdir = tmp_path / "repo"
    workdir.mkdir()
    git(workdir, "init", "-q")
    (workdir / "a.txt").write_text("a\n")
    (workdir / ".git" / "commondir").write_text(f"{planted / '.git'}\n")

    assert redirect_problem(workdir) is not None
    listing = list_candidates(workdir)

    assert listing.source == "walk" and listing.paths == ("a.txt",)
    assert not marker.exists()


def test_a_gitdir_file_pointing_into_the_workdir_is_refused(tmp_path: Path) -> None:
    workdir = tmp_path / "repo"
    workdir.mkdir()
    (workdir / "hidden").mkdir()
    git(workdir / "hidden", "init", "-q")
    (workdir / ".git").write_text("gitdir: hidden/.git\n")
    assert "inside the folder" in (redirect_problem(workdir) or "")


def test_a_linked_worktree_is_listed_by_git(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    (main / "a.txt").write_text("a\n")
    git(main, "add", "a.txt")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))

    assert redirect_problem(tmp_path / "linked") is None
    listing = list_candidates(tmp_path / "linked")
    assert listing.source == "git" and listing.paths == ("a.txt",)


def test_a_caller_cannot_undo_the_safe_settings() -> None:
    argv = git_argv("git", "status", config=["core.fsmonitor=/x", "core.quotePath=false"])
    options = argv[argv.index("--no-pager") + 1 : argv.index("status")]
    settings = options[1::2]
    assert settings[-len(SAFE_CONFIG) :] == list(SAFE_CONFIG)  # last: they win
    env = git_environment({"GIT_DIR": "/shadow"})
    assert env["GIT_DIR"] == "/shadow" and env["GIT_CONFIG_NOSYSTEM"] == "1"


async def test_checkpoints_never_run_the_repositorys_programs(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    workdir = tmp_path / "repo"
    hostile_repo(workdir, marker)
    (workdir / ".gitattributes").write_text("* filter=planted diff=planted\n")
    git(workdir, "config", "filter.planted.clean", str(tmp_path / "planted.sh"))
    checkpoints = Checkpoints(tmp_path / "data", workdir)
    first = await checkpoints.snapshot("one")
    (workdir / "kept.txt").write_text("changed\n")
    second = await checkpoints.snapshot("two")
    assert [change.path for change in await checkpoints.changed_files(first.commit, second.commit)] == [
        "kept.txt"
    ]
    assert not marker.exists()


PROBE = probe_bwrap()


async def _no_subagents(description: str, prompt: str, agent: object = None) -> str:
    raise AssertionError("no sub-agents here")


@pytest.mark.skipif(not PROBE.works, reason=f"no OS sandbox here: {PROBE.reason}")
async def test_a_repository_planted_from_the_sandbox_runs_nothing_on_the_host(tmp_path: Path) -> None:
    """`git init` + `core.fsmonitor` from inside the sandbox, then the host's `@` listing."""
    assert PROBE.path is not None
    workdir = tmp_path / "plain"
    workdir.mkdir()
    marker = tmp_path / "marker"
    toolset = default_toolbox(workdir, bash_timeout=20, sandbox=Sandbox(PROBE.path))
    try:
        tool = toolset.get("bash")
        assert isinstance(tool, BashTool)
        ctx = ToolContext(workdir=workdir, node_id="n", run_subagent=_no_subagents)
        command = (
            "git init -q && printf '#!/bin/sh\\necho ran >> %s\\n' \"$PWD/../marker\" > fsm.sh && "
            'chmod +x fsm.sh && git config core.fsmonitor "$PWD/fsm.sh" && touch a.txt && '
            "git add a.txt && echo planted"
        )
        out = await tool.run(tool.parse({"command": command}), ctx)
        assert out.content.strip().endswith("planted"), out.content
        # The sandbox can no longer change what it planted once `.git` is bound read-only (restart).
        await tool.session.restart()
        again = await tool.run(tool.parse({"command": "echo x >> .git/config; echo done"}), ctx)
        assert "Read-only file system" in again.content
    finally:
        await toolset.aclose()

    listing = list_candidates(workdir)

    assert listing.source == "git" and set(listing.paths) == {"a.txt", "fsm.sh"}
    assert not marker.exists()


def test_a_workdir_turned_into_a_bare_repository_is_not_used(tmp_path: Path) -> None:
    """A sandboxed command can write `HEAD`, `config` and `objects/` into the workdir itself."""
    marker = tmp_path / "marker"
    workdir = tmp_path / "plain"
    workdir.mkdir()
    git(workdir, "init", "-q", "--bare", ".")
    git(workdir, "config", "core.bare", "false")
    git(workdir, "config", "core.worktree", str(workdir))
    git(workdir, "config", "core.fsmonitor", str(planted_program(tmp_path, marker)))
    (workdir / "a.txt").write_text("a\n")

    listing = list_candidates(workdir)

    assert listing.source == "walk" and "a.txt" in listing.paths
    assert not marker.exists()
    git(workdir, "ls-files", "--others")  # the control: git's own discovery runs it
    assert marker.exists()


def test_the_users_global_ignore_list_still_applies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ignore = tmp_path / "my-global-ignore"
    ignore.write_text("*.swp\n")
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[core]\n\texcludesFile = {ignore}\n\tfsmonitor = {tmp_path / 'nothing.sh'}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    workdir = tmp_path / "repo"
    workdir.mkdir()
    git(workdir, "init", "-q")
    (workdir / "a.txt").write_text("a\n")
    (workdir / "a.txt.swp").write_text("swap\n")

    assert list_candidates(workdir).paths == ("a.txt",)
