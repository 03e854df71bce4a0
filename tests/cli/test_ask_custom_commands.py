"""`ask "/NAME ARGS"` expands a custom command as the TUI does: a real subprocess, the real SDK,
the loopback fake, which records what reached the model."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_ask import ask
from tests.fakes.anthropic import FakeAnthropic, Reply


@pytest.fixture
def commands(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A workdir with a project command, and a user config dir with a user command."""
    work, config = tmp_path / "work", tmp_path / "config"
    (work / ".tui-assist" / "commands").mkdir(parents=True)
    (work / ".tui-assist" / "commands" / "review.md").write_text(
        "# Review a file\nReview $ARGUMENTS carefully.\n"
    )
    (config / "tui-assist" / "commands").mkdir(parents=True)
    (config / "tui-assist" / "commands" / "standup.md").write_text("Write my standup notes.\n")
    return work, {"XDG_CONFIG_HOME": str(config)}


def sent(fake: FakeAnthropic) -> str:
    return fake.requests[0].messages[-1]["content"][0]["text"]


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("/review src/app.py", "# Review a file\nReview src/app.py carefully."),
        ("/standup for Tuesday", "Write my standup notes.\n\nfor Tuesday"),
        ("/etc/hosts has a wrong entry", "/etc/hosts has a wrong entry"),  # not a command: as typed
    ],
    ids=["project", "user", "a-path"],
)
def test_ask_expands_a_custom_command(
    fake: FakeAnthropic, commands: tuple[Path, dict[str, str]], prompt: str, expected: str
) -> None:
    work, env = commands
    fake.add(Reply("Done."))
    proc = ask("--json", prompt, fake=fake, cwd=work, env=env)
    assert proc.returncode == 0, proc.stderr
    assert sent(fake) == expected
    assert json.loads(proc.stdout)["answer"] == "Done."


def test_a_command_read_from_stdin_expands_too(
    fake: FakeAnthropic, commands: tuple[Path, dict[str, str]]
) -> None:
    work, env = commands
    fake.add(Reply("Done."))
    proc = ask("-", fake=fake, cwd=work, env=env, stdin="/review README.md\n")
    assert proc.returncode == 0, proc.stderr
    assert sent(fake) == "# Review a file\nReview README.md carefully."


def test_an_unknown_command_is_an_error_and_nothing_is_sent(
    fake: FakeAnthropic, commands: tuple[Path, dict[str, str]]
) -> None:
    work, env = commands
    proc = ask("/prime the context", fake=fake, cwd=work, env=env)
    assert proc.returncode == 2
    # The one line every host says (the TUI and ACP too): the closest known name, never sent.
    assert "unknown command /prime: did you mean /resume? (/help lists the commands)" in proc.stderr
    assert not [r for r in fake.requests if r.path == "/v1/messages"]


# A Claude Code command as public setups write them: front matter, `$1`, a !`command` line that
# its `allowed-tools` allow, a model alias.
COMMIT = """---
description: Create a commit
argument-hint: [message]
allowed-tools: Bash(echo:*)
model: haiku
---
Status: !`echo working tree clean`

Commit with the message "$1".
"""


def _titles(data_dir: Path) -> list[str]:
    with sqlite3.connect(data_dir / "tui_assist.db") as db:
        return [row[0] for row in db.execute("SELECT title FROM conversations")]


def test_a_claude_code_command_expands_its_front_matter_arguments_and_shell_lines(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / ".claude" / "commands" / "git").mkdir(parents=True)
    (work / ".claude" / "commands" / "git" / "commit.md").write_text(COMMIT)
    data = tmp_path / "data"
    fake.add(Reply("Committed."))
    proc = ask(
        "--json",
        "--trust-project",
        '/commit "fix the parser" extra',
        fake=fake,
        cwd=work,
        env={"TUI_ASSIST_HOME": str(data)},
    )
    assert proc.returncode == 0, proc.stderr
    (request,) = [r for r in fake.requests if r.path == "/v1/messages"]
    assert sent(fake) == 'Status: working tree clean\n\nCommit with the message "fix the parser".'
    assert request.body["model"] == "claude-haiku-4-5"
    (trusting,) = json.loads(proc.stdout)["warnings"]  # --trust-project lists what it trusts
    assert trusting.startswith("trusting the project: command /commit: ")
    assert _titles(data) == ["Status: working tree clean"]  # never `---`


def test_an_untrusted_project_command_leaves_its_shell_lines_out(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    marker = tmp_path / "ran"
    (work / ".claude" / "commands").mkdir(parents=True)
    (work / ".claude" / "commands" / "commit.md").write_text(
        COMMIT.replace("echo working tree clean", f"touch {marker}").replace("Bash(echo:*)", "Bash")
    )
    fake.add(Reply("Committed."))
    proc = ask("--json", "/commit wip", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert sent(fake) == 'Commit with the message "wip".'
    assert not marker.exists()
    (warning,) = [w for w in json.loads(proc.stdout)["warnings"] if "left out" in w]
    assert "1 line(s) with a !`command` left out: the project is not trusted" in warning


def test_a_shell_line_no_rule_allows_is_refused_headless(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    marker = tmp_path / "ran"
    (work / ".claude" / "commands").mkdir(parents=True)
    (work / ".claude" / "commands" / "commit.md").write_text(
        COMMIT.replace("echo working tree clean", f"touch {marker}")
    )
    fake.add(Reply("Committed."))
    proc = ask("--json", "--trust-project", "/commit wip", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert "needs approval" in sent(fake)
    assert any(w.startswith("/commit: !`touch") for w in json.loads(proc.stdout)["warnings"])


def test_the_users_claude_command_wins_over_the_projects(fake: FakeAnthropic, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".claude" / "commands").mkdir(parents=True)
    (work / ".claude" / "commands" / "prime.md").write_text("The project's prime.")
    user = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "commands"
    user.mkdir(parents=True)
    (user / "prime.md").write_text("---\ndescription: Prime\n---\nThe user's prime.")
    fake.add(Reply("Primed."))
    proc = ask("--json", "/prime", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert sent(fake) == "The user's prime."
    assert json.loads(proc.stdout)["warnings"] == [
        f"{work / '.claude' / 'commands' / 'prime.md'}: your command /prime ({user / 'prime.md'}) is used instead"
    ]


def test_a_commands_mentions_attach_and_its_unused_entries_are_warnings(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / ".claude" / "commands").mkdir(parents=True)
    (work / ".claude" / "commands" / "explain.md").write_text(
        "---\nallowed-tools: Read, Grep\n---\nExplain @notes.txt to me."
    )
    (work / "notes.txt").write_text("NOTES-CONTENT\n")
    fake.add(Reply("Explained."))
    proc = ask("--json", "/explain", fake=fake, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "NOTES-CONTENT" in json.dumps(fake.requests[0].messages[-1]["content"])
    (warning,) = json.loads(proc.stdout)["warnings"]
    assert warning.startswith(f"{work / '.claude' / 'commands' / 'explain.md'}: allowed-tools Read, Grep:")
