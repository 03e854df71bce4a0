"""Slash commands without a UI: parsing, the registry, matching, custom command files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.session.slash_commands import (
    CommandRegistry,
    CustomCommandLoader,
    SlashCommand,
    SlashInput,
    closest,
    matching,
    parse_slash,
    shell_lines,
)


@pytest.mark.parametrize(
    ("prompt", "parsed"),
    [
        ("hello /help", None),
        ("/help", SlashInput("help", "")),
        ("  /rounds   5  ", SlashInput("rounds", "5")),
        ("/resume rebase the branch", SlashInput("resume", "rebase the branch")),
        ("/review\nline one\nline two", SlashInput("review", "line one\nline two")),
        ("/", SlashInput("", "")),
    ],
)
def test_parse_slash(prompt: str, parsed: SlashInput | None) -> None:
    assert parse_slash(prompt) == parsed


def test_registry_keeps_order_and_handlers() -> None:
    registry: CommandRegistry[str] = CommandRegistry()
    registry.register(SlashCommand("help", "", "Commands and keys"), "help-handler")
    registry.register(SlashCommand("rounds", "N", "Round budget"), "rounds-handler")
    assert registry.names == ["help", "rounds"]
    assert "rounds" in registry and "nope" not in registry
    found = registry.get("rounds")
    assert found is not None and found[1] == "rounds-handler"
    command = found[0]
    assert command.usage == "/rounds N" and command.needs_arguments
    assert not SlashCommand("resume", "[QUERY]").needs_arguments


def test_closest_names_the_command_a_typo_meant() -> None:
    names = ["help", "new", "resume", "model", "rounds", "export", "theme", "quit"]
    assert closest("he", names) == "help"
    assert closest("modle", names) == "model"
    assert closest("expotr", names) == "export"
    assert closest("zzzzzz", names) is None
    assert closest("", names) is None


def test_matching_puts_prefixes_first_then_substrings_then_scattered() -> None:
    commands = [SlashCommand(n) for n in ("help", "theme", "export", "memory", "model", "rounds")]
    assert [c.name for c in matching("m", commands)] == ["memory", "model", "theme"]
    assert [c.name for c in matching("e", commands)] == ["export", "help", "theme", "memory", "model"]
    assert [c.name for c in matching("mdl", commands)] == ["model"]
    assert len(matching("", commands)) == len(commands)


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_custom_commands_from_the_project_and_the_user(tmp_path: Path) -> None:
    workdir, config = tmp_path / "work", tmp_path / "config"
    project = workdir / ".tui-assist" / "commands"
    user = config / "commands"
    _write(project, "review.md", "# Review a file\nReview $ARGUMENTS for bugs.\nThen list $ARGUMENTS tests.")
    _write(project, "standup.md", "# The project's standup\nshadowed by the user's")
    _write(user, "standup.md", "Summarize what changed today.")
    _write(user, "help.md", "# clashes with a built-in")
    _write(user, "notes.txt", "not a command")
    loader = CustomCommandLoader(workdir, config, reserved=["help"])
    loaded = loader.load()
    assert sorted(loaded.commands) == ["review", "standup"]
    review = loaded.commands["review"]
    assert review.command.description == "Review a file"
    assert review.command.source == "project"
    assert review.expand("app.py") == ("# Review a file\nReview app.py for bugs.\nThen list app.py tests.")
    standup = loaded.commands["standup"]
    # No description: the first line is, as in Claude Code.
    assert standup.command.description == "Summarize what changed today." and standup.command.source == "user"
    # Without $ARGUMENTS, arguments are not lost: they follow the text.
    assert standup.expand("") == "Summarize what changed today."
    assert standup.expand("only the backend") == "Summarize what changed today.\n\nonly the backend"
    assert any("/help is a built-in" in p for p in loaded.problems)
    # A project command never shadows the user's: one line says which file is used instead.
    assert f"{project / 'standup.md'}: your command /standup ({user / 'standup.md'}) is used instead" in (
        loaded.problems
    )


# The shapes of public Claude Code commands: front matter with a hint, rules, a model alias.
COMMIT = """---
description: Create a git commit
argument-hint: [message] [scope]
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*), Read
model: haiku
---
## Context

- Current status: !`git status`

Commit with the message "$1" in scope $2 (all: $ARGUMENTS).
"""


def test_claude_code_commands_front_matter_positional_arguments_and_namespaces(tmp_path: Path) -> None:
    workdir, config, claude = tmp_path / "work", tmp_path / "config", tmp_path / "claude"
    _write(workdir / ".claude" / "commands", "commit.md", COMMIT)
    _write(workdir / ".claude" / "commands" / "frontend", "component.md", "Make a component $ARGUMENTS")
    _write(
        claude / "commands", "prime.md", "---\ndescription: >-\n  Load the\n  context\n---\nRead the README."
    )
    loaded = CustomCommandLoader(workdir, config, claude_user=claude).load()
    assert sorted(loaded.commands) == ["commit", "component", "prime"]
    commit = loaded.commands["commit"]
    assert commit.command.description == "Create a git commit"
    assert commit.command.args == "[message] [scope]"
    assert commit.model == "claude-haiku-4-5"
    assert commit.text.startswith("## Context")  # the front matter is never sent
    expanded = commit.expand('"fix the parser" core')
    assert 'with the message "fix the parser" in scope core (all: "fix the parser" core).' in expanded
    assert shell_lines(expanded) == ["git status"]
    assert commit.bash_rules() == ["bash(git add *)", "bash(git status *)", "bash(git commit *)"]
    assert loaded.commands["prime"].command.description == "Load the context"
    assert loaded.commands["prime"].command.source == "user"
    component = loaded.commands["component"].command
    assert (component.origin, component.usage) == ("project:frontend", "/component [ARGS]")
    # Read is not a rule for a !`command`: said once, naming the file; the command still loads.
    assert loaded.problems == (
        f"{workdir / '.claude' / 'commands' / 'commit.md'}: allowed-tools Read: only Bash(...) entries are"
        " used here (they allow the file's !`command` lines); the turn's own tool calls follow the usual"
        " rules (the rest loads)",
    )
    # `$2` with one word is empty; `$1` with none too.
    assert commit.expand("one").count('"one" in scope  (all: one)') == 1


def test_a_command_file_with_broken_front_matter_is_skipped_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "work" / ".claude" / "commands"
    _write(folder, "bad.md", "---\ndescription: fine\nno colon here\n---\nbody")
    _write(folder, "good.md", "---\nunknown-key: 1\n---\nbody")
    loaded = CustomCommandLoader(tmp_path / "work", tmp_path / "config").load()
    assert list(loaded.commands) == ["good"]
    assert any(
        p.startswith(f"{folder / 'bad.md'}: its front matter is not valid YAML") for p in loaded.problems
    )
    assert f"{folder / 'good.md'}: unknown-key: not read here (the rest loads)" in loaded.problems


def test_custom_commands_are_read_again_when_a_file_changes(tmp_path: Path) -> None:
    workdir, config = tmp_path / "work", tmp_path / "config"
    loader = CustomCommandLoader(workdir, config)
    assert loader.load().commands == {}
    path = _write(workdir / ".tui-assist" / "commands", "fix.md", "# Fix\nFix $ARGUMENTS")
    assert list(loader.load().commands) == ["fix"]
    first = loader.load()
    assert loader.load() is first  # nothing changed: the cached result
    path.write_text("# Fix it properly\nFix $ARGUMENTS, with a test", encoding="utf-8")
    assert loader.load().commands["fix"].command.description == "Fix it properly"
    path.unlink()
    assert loader.load().commands == {}


def test_bad_command_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    folder = workdir / ".tui-assist" / "commands"
    _write(folder, "ok.md", "fine")
    folder.joinpath("latin1.md").write_bytes(b"caf\xe9")
    _write(folder, "big.md", "x" * 100_001)
    _write(folder, "-dash.md", "bad name")
    loaded = CustomCommandLoader(workdir, tmp_path / "config").load()
    assert list(loaded.commands) == ["ok"]
    reasons = " | ".join(loaded.problems)
    assert "not UTF-8" in reasons and "bigger than" in reasons and "not a command name" in reasons
