"""Every global flag before or after every command: accepted, used where it applies, ignored (never
refused) elsewhere. Most cases run `cli.main` in process (fast); a few run the real entry point in a
subprocess, as a user's alias does."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.session.test_strategy_bench import make_task, text
from tui_assist.cli import main
from tui_assist.cli.parser import GLOBAL_FLAGS, USES, UsageError, _parse, build_parser, parse
from tui_assist.flows.grounded import SAMPLE_CORPUS


@dataclass(frozen=True)
class Home:
    root: Path
    data: Path
    work: Path
    script: Path
    suite: Path
    conversation_id: str
    turn_id: str
    plugin: Path

    def globals(self) -> list[str]:
        """Every global flag, each with a value that works where the flag is used."""
        return [
            "--data-dir", str(self.data), "--workdir", str(self.work),
            "--provider", "scripted", "--script", str(self.script), "--model", "m1",
            "--mode", "plan", "--refine", "--rounds", "2", "--theme", "tui-light",
            "--base-url", "http://127.0.0.1:9", "--trust-project", "--thinking", "off",
            "--max-budget-usd", "5",
        ]  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Home:
    """A data dir holding one conversation of one turn, made in a workdir; a tiny bench suite."""
    data, work = tmp_path / "data-elsewhere", tmp_path / "work"
    work.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([[text("a stored answer")], [text("PASS")]] * 4))
    suite = tmp_path / "suite"
    make_task(
        suite, "tiny", prompt="say hi", check="true", files={"a.txt": "a"}, scripts={"agent": [[text("hi")]]}
    )
    code = main(["ask", "a stored question", "--json", "--provider", "scripted", "--script", str(script),
                 "--data-dir", str(data), "--workdir", str(work)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    answer = json.loads(out)
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "flagged"}')
    return Home(tmp_path, data, work, script, suite, answer["conversation_id"], answer["turn_id"], plugin)


def test_the_flag_list_covers_every_global_flag(home: Home) -> None:
    given = {flag for flag in home.globals() if flag.startswith("--")}
    assert {f"--{name.replace('_', '-')}" for name in GLOBAL_FLAGS} == given


def commands(home: Home) -> dict[str, tuple[list[str], int, str]]:
    """Each command: its words, the exit code, and a word its output holds (proof that it ran)."""
    cid = home.conversation_id
    return {
        "ask": (["ask", "another question", "--json"], 0, '"strategy": "refine"'),
        "history list": (["history", "list", "--json"], 0, cid),
        "history show": (["history", "show", cid, "--json"], 0, "a stored answer"),
        "history search": (["history", "search", "stored", "--json"], 0, "a stored question"),
        "history export": (["history", "export", cid], 0, "a stored answer"),
        "stats": (["stats", "--json"], 0, "answered"),
        "flow grounded": (
            [
                "flow",
                "grounded",
                "How much can I spend on a hotel per night?",
                "--corpus",
                str(SAMPLE_CORPUS),
                "--leaves",
                "rules",
                "--json",
            ],
            0,
            "citations",
        ),  # fmt: skip
        # An unknown run: the command's own error, not one about a flag.
        "flow approve": (["flow", "approve", "no-such-run"], 2, "no flow run with id 'no-such-run'"),
        "bench docs": (["bench", "docs", "--json"], 0, "keyword_route"),
        "bench helpdesk": (["bench", "helpdesk", "--json"], 0, "router"),
        "bench strategies": (
            ["bench", "strategies", "--suite", str(home.suite), "--strategies", "agent", "--json"],
            0,
            '"task": "tiny"',
        ),  # fmt: skip
        "rewind": (["rewind", home.turn_id, "--json"], 0, home.turn_id),
        "plugin install": (["plugin", "install", str(home.plugin), "--yes"], 0, "installed flagged"),
        "plugin list": (["plugin", "list", "--json"], 0, "[]"),
        # No such plugin: the command's own error, not one about a flag.
        "plugin remove": (["plugin", "remove", "nope"], 2, "no plugin 'nope'"),
        "plugin enable": (["plugin", "enable", "nope"], 2, "no plugin 'nope'"),
        "plugin disable": (["plugin", "disable", "nope"], 2, "no plugin 'nope'"),
        "plugin marketplace add": (
            ["plugin", "marketplace", "add", str(home.plugin)],
            2,
            "is not a marketplace",
        ),
        "plugin marketplace list": (["plugin", "marketplace", "list", "--json"], 0, "[]"),
        "doctor": (["doctor", "--json"], 0, '"sources"'),
    }


COMMAND_NAMES = [
    "ask", "history list", "history show", "history search", "history export", "stats",
    "flow grounded", "flow approve", "bench docs", "bench helpdesk", "bench strategies", "rewind",
    "plugin install", "plugin list", "plugin remove", "plugin enable", "plugin disable",
    "plugin marketplace add", "plugin marketplace list", "doctor",
]  # fmt: skip


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("name", COMMAND_NAMES)
def test_every_global_flag_is_accepted_by_every_command(
    home: Home, capsys: pytest.CaptureFixture[str], name: str, where: str
) -> None:
    words, code, proof = commands(home)[name]
    argv = [*home.globals(), *words] if where == "before" else [*words, *home.globals()]
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert "does not apply" not in err and "unrecognized" not in err, err
    assert proof in (out if code == 0 else err), (out, err)


def test_the_ones_a_command_uses_are_used(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    """`--data-dir` after `history list` reads that folder; `--refine` before `ask` refines."""
    assert main(["history", "list", "--json", "--data-dir", str(home.root / "empty")]) == 0
    assert home.conversation_id not in capsys.readouterr().out
    assert main(["--data-dir", str(home.data), "history", "--workdir", ".", "list", "--json"]) == 0
    assert home.conversation_id in capsys.readouterr().out


@pytest.mark.parametrize(
    ("command", "kept"), [("explore", {"theme"}), ("chat", set(GLOBAL_FLAGS)), ("acp", set(USES["acp"]))]
)
def test_the_screens_accept_them_too(home: Home, command: str, kept: set[str]) -> None:
    """The TUI commands and the ACP agent (it serves stdin until the client goes) can't run
    here; their parse keeps what they use and drops the rest."""
    words = [] if command == "chat" else [command]
    for argv in ([*home.globals(), *words], [*words, *home.globals()]):
        args = parse(argv)
        assert {name for name in GLOBAL_FLAGS if name in vars(args)} == kept


def test_an_ignored_flag_is_not_even_validated(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    """`history list` never reads `--workdir`, so a folder that isn't there is no error."""
    argv = ["history", "list", "--json", "--data-dir", str(home.data), "--workdir", str(home.root / "gone")]
    assert main(argv) == 0
    assert home.conversation_id in capsys.readouterr().out


def run(home: Home, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TUI_ASSIST_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "tui_assist", *argv],
        capture_output=True, text=True, env=env, cwd=home.root, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    "name", ["history list", "stats", "rewind", "bench strategies", "plugin marketplace list", "doctor"]
)
def test_an_alias_with_global_flags_runs_every_command(home: Home, name: str) -> None:
    """`alias ta='tui-assist --data-dir ~/work-ai --workdir .'`, then the command, then more flags."""
    words, code, proof = commands(home)[name]
    proc = run(home, *home.globals(), *words, *home.globals())
    assert proc.returncode == code, proc.stderr
    assert proof in proc.stdout and "Traceback" not in proc.stderr


def test_rewind_refuses_another_workdir_naming_the_turns_folder(home: Home) -> None:
    other = home.root / "other"
    other.mkdir()
    proc = run(home, "rewind", home.turn_id, "--data-dir", str(home.data), "--workdir", str(other))
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tui-assist: rewind: "), proc.stderr
    assert f"belongs to {home.work.resolve()}" in lines[0] and str(other) in lines[0]


def test_help_lists_the_ignored_global_flags_apart(home: Home) -> None:
    proc = run(home, "stats", "--help")
    assert proc.returncode == 0
    options, _, globals_ = proc.stdout.partition("global options:")
    assert "--json" in options and "--refine" not in options
    ignored = next(line for line in globals_.splitlines() if "ignored here" in line)
    assert "--refine" in ignored and "--data-dir" not in ignored
    assert "--data-dir DIR" in globals_


CHAT_LINES = (
    [], ["fix the test"], ["--model", "m1"], ["--resume"], ["--resume", "abc"], ["--continue", "go on"],
    ["--refine", "--rounds", "2", "p"], ["p", "--theme", "t"], ["-"],
)  # fmt: skip
"""Chat command lines: no word of them is a command's name."""
CHAT_ERRORS = (["hello", "world"], ["--rounds", "x"], ["--bogus"], ["p", "--workdir"], ["--", "x"])


def test_a_chat_line_is_parsed_without_building_every_commands_parser(monkeypatch) -> None:
    """The chat's grammar alone parses a line that names no command, as the whole grammar does."""
    built: list[str] = []
    add_parser = argparse._SubParsersAction.add_parser

    def counted(self: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        built.append(name)
        return add_parser(self, name, **kwargs)

    whole = {}
    for argv in (*CHAT_LINES, *CHAT_ERRORS):
        try:
            whole[tuple(argv)] = vars(_parse(build_parser(), argv))
        except UsageError as error:
            whole[tuple(argv)] = (error.command, str(error))
    monkeypatch.setattr(argparse._SubParsersAction, "add_parser", counted)
    for argv in CHAT_LINES:
        built.clear()
        assert vars(parse(argv)) == whole[tuple(argv)]
        assert built == [], argv
    for argv in CHAT_ERRORS:  # these fall back to the whole grammar, and so read the same
        with pytest.raises(UsageError) as error:
            parse(argv)
        assert (error.value.command, str(error.value)) == whole[tuple(argv)]
