"""No module of the package grows past 650 lines (issue 39): a longer one has several reasons to
change, and is split by them."""

from pathlib import Path

import tui_assist

MAX_LINES = 650


def test_no_module_is_over_650_lines() -> None:
    package = Path(tui_assist.__file__).parent
    too_long = {
        str(path.relative_to(package)): count
        for path in package.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}, f"split these by reason to change: {too_long}"
