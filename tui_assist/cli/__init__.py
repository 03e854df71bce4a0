"""The command line: the grammar (`parser`), `ask`, the other headless commands, and `main`.

Only `tui_assist.__main__` (and the `tui-assist` console script) import it.
"""

from __future__ import annotations

from tui_assist.cli.errors import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from tui_assist.cli.main import main
from tui_assist.cli.parser import build_parser

__all__ = ["EXIT_CANCELLED", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]
