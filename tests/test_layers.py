"""The layering in pyproject.toml ([tool.importlinter]) holds: `lint-imports` keeps every contract."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_keeps_every_contract() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def _sources(*packages: str) -> list[Path]:
    return [p for package in packages for p in sorted((ROOT / "tui_assist" / package).rglob("*.py"))]


def test_the_store_and_the_flows_return_data_and_never_print() -> None:
    # Presentation lives above them (cli/ renders rows and results): no print, no text stream.
    offending = [
        f"{path.relative_to(ROOT)}: {word}"
        for path in _sources("store", "flows")
        for word in ("print(", "TextIO", "sys.stdout", "sys.stderr")
        if word in path.read_text(encoding="utf-8")
    ]
    assert offending == []


def test_one_module_replaces_files_and_the_core_does_no_file_io() -> None:
    replacing = [p for p in _sources("") if "os.replace(" in p.read_text(encoding="utf-8")]
    assert [p.relative_to(ROOT).as_posix() for p in replacing] == ["tui_assist/tools/safe_io.py"]
    core_io = [
        f"{path.relative_to(ROOT)}: {word}"
        for path in _sources("core")
        for word in ("tempfile", "os.fsync", "write_text(", "import tomlkit")
        if word in path.read_text(encoding="utf-8")
    ]
    assert core_io == []


def _string_constants(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_the_session_layer_holds_no_key_spelling_or_screen_action() -> None:
    # Keys, binding ids and Textual actions are the TUI's (ui/command_bindings.py); the command
    # table in session/ names the commands only.
    from tui_assist.session.commands import COMMANDS
    from tui_assist.ui.command_bindings import BOUND

    tui_words = {bound.action for bound in BOUND.values()} | {
        word for bound in BOUND.values() for key in bound.keys for word in (key.key, key.id)
    }
    tui_words -= {command.name for command in COMMANDS}  # a command's name is the session's word
    key_spelling = re.compile(r"((ctrl|shift|alt|super|meta)\+)+\S+|f\d{1,2}")
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in _sources("session")
        for line, text in _string_constants(path)
        if key_spelling.fullmatch(text) or text in tui_words
    ]
    assert offending == []


def test_widgets_are_given_what_they_show_and_never_reach_for_the_session() -> None:
    # A widget gets the session's parts from its parent (the screen sets `Prompt.workdir`, gives
    # the conversation its log...), not by reaching up to the app or the screen.
    reaching = re.compile(
        r"getattr\(\s*self\.(app|screen)\b|\b(app|screen)\.(session|controller|main_screen)\b"
    )
    offending = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources("ui/widgets")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if reaching.search(line)
    ]
    assert offending == []
