"""`ask "/NAME ARGS"` expands a custom command as the TUI does: a real subprocess, the real SDK,
the loopback fake, which records what reached the model."""

from __future__ import annotations

import json
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
        ("/nosuch thing", "/nosuch thing"),
    ],
    ids=["project", "user", "a-path", "unknown"],
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
