"""`tui-assist acp`: serve the Agent Client Protocol on stdin/stdout for an editor."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tui_assist.cli.errors import EXIT_OK

if TYPE_CHECKING:
    from tui_assist.session.config import Settings


async def acp(args: argparse.Namespace, settings: Settings) -> int:
    """Be an ACP agent until the client closes the connection (logs go to the log file only)."""
    from tui_assist.acp.agent import serve

    await serve(settings)
    return EXIT_OK
