"""Bad input and broken local state, as a new user meets them: one line, the right exit code, no
traceback, and the user's files byte-for-byte as they were. Each case runs the real entry point in
a subprocess."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_assist.store.db import DB_FILENAME


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The user's folders: config, data, a workdir, and a script for the offline provider."""
    for name in ("config/tui-assist", "data", "work"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "script.json").write_text(json.dumps([[{"type": "text", "text": "an answer"}]] * 3))
    return tmp_path


def run(home: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "TUI_ASSIST_", "OPENAI_", "XDG_"))
    }
    env |= {
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "TUI_ASSIST_HOME": str(home / "data"),
        "ANTHROPIC_CONFIG_DIR": str(home / "anthropic"),
    }
    return subprocess.run(
        [sys.executable, "-m", "tui_assist", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=home / "work",
        timeout=timeout,
    )


def offline(home: Path) -> list[str]:
    return ["--provider", "scripted", "--script", str(home / "script.json")]


def digest(path: Path) -> dict[str, str]:
    """Every file under `path` (or `path` itself) by its hash."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def assert_one_line(proc: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("tui-assist: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


COMMANDS = [("stats",), ("history", "list"), ("ask", "hi")]


def _config(home: Path) -> Path:
    return home / "config" / "tui-assist" / "config.toml"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_config_file_that_is_not_utf8(home: Path, command: tuple[str, ...]) -> None:
    _config(home).write_bytes(b'model = "caf\xe9"\n')
    before = digest(_config(home))
    proc = run(home, *command, *(offline(home) if command[0] == "ask" else []))
    assert_one_line(
        proc, 2, f"tui-assist: {' '.join(command[:2]) if command[0] == 'history' else command[0]}:", "UTF-8"
    )
    assert digest(_config(home)) == before


def test_a_config_file_that_is_a_folder(home: Path) -> None:
    _config(home).mkdir()
    assert_one_line(run(home, "stats"), 2, "is a folder")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_data_dir_that_is_a_file(home: Path, command: tuple[str, ...]) -> None:
    target = home / "data-file"
    target.write_text("mine")
    proc = run(home, *command, "--data-dir", str(target), *(offline(home) if command[0] == "ask" else []))
    assert_one_line(proc, 2, "is a file, not a folder", "--data-dir")
    assert target.read_text() == "mine"


def test_a_data_dir_that_cannot_be_created(home: Path) -> None:
    proc = run(home, "ask", "hi", *offline(home), "--data-dir", "/proc/tui-assist-data")
    assert_one_line(proc, 2, "/proc/tui-assist-data")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_database_file_holding_garbage(home: Path, command: tuple[str, ...]) -> None:
    (home / "data" / DB_FILENAME).write_bytes(b"this is not a database" * 100)
    before = digest(home / "data")
    proc = run(home, *command, *(offline(home) if command[0] == "ask" else []))
    assert_one_line(proc, 2, "not a tui-assist history database")
    assert {k: v for k, v in digest(home / "data").items() if "/locks/" not in k} == before


def test_a_database_from_a_newer_version_is_refused_untouched(home: Path) -> None:
    database = home / "data" / DB_FILENAME
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("CREATE TABLE future (x)")
        db.execute("PRAGMA user_version = 999")
        db.commit()
    before = digest(database)
    assert_one_line(run(home, "ask", "hi", *offline(home)), 2, "newer", "upgrade tui-assist")
    assert_one_line(run(home, "history", "list"), 2, "newer")
    assert digest(database) == before


@contextlib.contextmanager
def tmpfs(path: Path, *options: str) -> Iterator[Path]:
    """A small tmpfs at `path` (root only): as root, chmod can't make a folder read-only or full."""
    path.mkdir(exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(("size=1m", *options)), "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_a_read_only_data_dir(home: Path) -> None:
    with tmpfs(home / "ro", "ro") as folder:
        proc = run(home, "ask", "hi", *offline(home), "--data-dir", str(folder))
        assert_one_line(proc, 2, str(folder))


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """`path` made immutable with chattr (root only), and mutable again afterwards."""
    path.mkdir(exist_ok=True)
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a folder immutable here: {made.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_an_immutable_data_dir_with_a_history(home: Path, command: tuple[str, ...]) -> None:
    folder = home / "frozen"
    assert run(home, "ask", "kept", *offline(home), "--data-dir", str(folder)).returncode == 0
    before = digest(folder)
    with immutable(folder):
        proc = run(home, *command, "--data-dir", str(folder), *(offline(home) if command[0] == "ask" else []))
        assert_one_line(proc, 2, str(folder))
    assert digest(folder) == before


def test_a_full_disk_at_commit_prints_the_answer_and_keeps_earlier_turns(home: Path) -> None:
    big = "x" * 600_000
    script = home / "big.json"
    script.write_text(
        json.dumps([[{"type": "text", "text": "a small answer"}], [{"type": "text", "text": big}]])
    )
    with tmpfs(home / "small") as folder:
        flags = ["--provider", "scripted", "--script", str(script), "--data-dir", str(folder), "--json"]
        first = run(home, "ask", "first", *flags)
        assert first.returncode == 0, first.stderr
        # The script replays from its start each run: the second run's answer is the big one.
        script.write_text(json.dumps([[{"type": "text", "text": big}]]))
        filler = folder / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as handle:
            handle.write(b"\0" * 2_000_000)  # fill the disk but leave the database as it is
        # Leave room to open the store and begin the turn, not to commit a 600 KB answer.
        os.truncate(filler, filler.stat().st_size - 256_000)
        proc = run(home, "ask", "second", "--continue", *flags)
        assert proc.returncode == 1, proc.stderr
        assert json.loads(proc.stdout)["answer"] == big
        assert "could not be saved" in proc.stderr and "Traceback" not in proc.stderr
        filler.unlink()
        listed = run(
            home,
            "history",
            "show",
            json.loads(first.stdout)["conversation_id"],
            "--json",
            "--data-dir",
            str(folder),
        )
        assert listed.returncode == 0, listed.stderr
        assert "a small answer" in listed.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ("history", "list", "--data-dir", "{data}"),
        ("--data-dir", "{data}", "history", "list"),
        ("history", "--data-dir", "{data}", "list"),
        ("stats", "--data-dir", "{data}"),
        ("--data-dir", "{data}", "stats"),
    ],
    ids=" ".join,
)
def test_global_flags_work_before_or_after_the_command(home: Path, argv: tuple[str, ...]) -> None:
    data = home / "elsewhere"
    assert run(home, "ask", "stored here", *offline(home), "--data-dir", str(data)).returncode == 0
    proc = run(home, *(a.format(data=data) for a in argv), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "stored here" in proc.stdout or "answered" in proc.stdout


def test_each_help_lists_the_flags_its_command_uses_and_names_the_others_apart(home: Path) -> None:
    stats = run(home, "stats", "--help")
    assert stats.returncode == 0
    assert "--data-dir DIR" in stats.stdout
    for unused in ("--refine", "--theme", "--script", "--model"):
        assert f"  {unused} " not in stats.stdout  # not listed as an option of its own
        assert unused in stats.stdout.partition("ignored here:")[2]
    ask = run(home, "ask", "--help").stdout
    assert "--refine" in ask and "--theme NAME" not in ask


def test_a_global_flag_a_command_does_not_use_is_ignored(home: Path) -> None:
    for argv in (
        ("stats", "--refine"),
        ("--refine", "stats"),
        ("--theme", "x", "stats", "--workdir", "/nowhere"),
    ):
        proc = run(home, *argv)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize(
    "command", [("stats",), ("history", "list"), ("history", "search", "x")], ids=" ".join
)
def test_read_only_commands_on_an_empty_folder_say_so_and_create_nothing(
    home: Path, command: tuple[str, ...]
) -> None:
    empty = home / "empty"
    empty.mkdir()
    proc = run(home, *command, "--data-dir", str(empty))
    assert proc.returncode == 0, proc.stderr
    assert "No conversations" in proc.stdout and str(empty) in proc.stdout
    assert list(empty.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("history", "list", "--limit", "0"), ("--limit",)),
        (("history", "search", ""), ("empty",)),
        (("history", "list", "--limit", "many"), ("--limit", "--help")),
        (("ask", "hi", "--rounds", "0"), ("(fix --rounds)",)),
        (("ask", "   "), ("empty",)),
        (("stats", "--bogus"), ("--bogus",)),
        (("history", "show", "nope"), ("no conversation",)),
    ],
    ids=lambda v: (
        " ".join(v)
        if isinstance(v, tuple)
        and all(isinstance(x, str) for x in v)
        and v
        and v[0] in ("history", "ask", "stats")
        else ""
    ),
)
def test_usage_errors_are_one_line_with_exit_2(
    home: Path, argv: tuple[str, ...], words: tuple[str, ...]
) -> None:
    assert run(home, "ask", "seed", *offline(home)).returncode == 0
    extra = offline(home) if argv[0] == "ask" else []
    assert_one_line(run(home, *argv, *extra), 2, *words)


def test_an_mcp_server_that_does_not_start_is_reported_and_the_turn_still_runs(home: Path) -> None:
    _config(home).write_text('[mcpServers.broken]\ncommand = "/no/such/mcp-server"\n')
    proc = run(home, "ask", "hi", *offline(home), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "an answer"
    assert any("MCP server broken did not start" in w for w in data["warnings"]), data["warnings"]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tui-assist: ask: warning: MCP server broken"), lines


def test_flow_errors_use_the_one_format(home: Path) -> None:
    proc = run(home, "flow", "grounded", "--corpus", str(home / "missing"), "what?")
    assert_one_line(proc, 2, "tui-assist: flow grounded: corpus", "is not a directory")
    assert_one_line(run(home, "flow", "approve", "nope"), 2, "tui-assist: flow approve: ")
    assert_one_line(
        run(home, "bench", "docs", "--fixtures", str(home / "missing")), 2, "tui-assist: bench docs: "
    )


def test_the_readme_grounded_example_answers_from_the_shipped_handbook(home: Path) -> None:
    proc = run(home, "flow", "grounded", "How much can I spend on a hotel per night in London?")
    assert proc.returncode == 0, proc.stderr
    assert "180 GBP" in proc.stdout and "Sources:" in proc.stdout
    notes = proc.stderr.splitlines()
    assert any("sample handbook" in n for n in notes) and any("leaves: rules" in n for n in notes), notes
    assert all(n.startswith("tui-assist: flow grounded: ") for n in notes), notes


def test_the_approve_hint_repeats_the_data_dir_the_run_used(home: Path) -> None:
    data = home / "elsewhere"
    question = "Draft an email to my manager asking for approval of my business travel"
    proc = run(home, "flow", "grounded", "--data-dir", str(data), "--leaves", "rules", question)
    assert proc.returncode == 0, proc.stderr
    hint = next(line for line in proc.stdout.splitlines() if line.startswith("Approve with:"))
    assert hint.endswith(f"--data-dir {data}")
    approve = hint.removeprefix("Approve with: tui-assist ").split()
    assert run(home, *approve).returncode == 0


def test_a_denied_call_is_reported_on_stderr_and_in_json_and_nothing_runs(home: Path) -> None:
    script = home / "calls.json"
    call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "touch made-it"}}
    script.write_text(json.dumps([[call], [{"type": "text", "text": "done"}]]))
    proc = run(home, "ask", "go", "--json", "--provider", "scripted", "--script", str(script))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["denied_calls"] == [{"tool": "bash", "summary": "touch made-it"}]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tui-assist: ask: denied bash") and "--yes" in lines[0]
    assert not (home / "work" / "made-it").exists()  # sandboxed or not, headless without --yes runs nothing

    yes = run(home, "ask", "go", "--json", "--yes", "--provider", "scripted", "--script", str(script))
    assert yes.returncode == 0 and json.loads(yes.stdout)["denied_calls"] == []
    assert (home / "work" / "made-it").exists()

    (home / "work" / "made-it").unlink()
    plan = run(
        home, "ask", "go", "--json", "--mode", "plan", "--provider", "scripted", "--script", str(script)
    )
    assert plan.returncode == 0 and json.loads(plan.stdout)["denied_calls"][0]["tool"] == "bash"
    assert not (home / "work" / "made-it").exists()
    both = run(
        home, "ask", "go", "--yes", "--mode", "plan", "--provider", "scripted", "--script", str(script)
    )
    assert_one_line(both, 2, "contradicts --mode plan")
