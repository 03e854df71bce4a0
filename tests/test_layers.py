"""The layering in pyproject.toml ([tool.importlinter]) holds: `lint-imports` keeps every contract."""

from __future__ import annotations

import subprocess
import sys
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
