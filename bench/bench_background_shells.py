"""What ten background shells printing constantly cost the idle TUI, in % of one core.

The real app (`TuiAssistApp`, headless through Textual's test driver, the Anthropic provider with a
dummy key: no request is made) starts with its session's real `BackgroundShells`; ten shells are
started through them, as `bash` with `run_in_background` does, and the app then sits idle while
they print. The figure is this process's CPU time (the app: reading the shells' output, the tasks
view's redraws; not the shells' own CPU, which is theirs) over a window of wall time.

Cases: no shell (the idle app's own cost); ten shells printing a line every 10 ms; ten shells
printing as fast as bash can (a flood); the flood with the `/tasks` view open (it redraws once a
second). Goal (issue 41): under 5% of a core with ten shells printing.

    .venv/bin/python bench/bench_background_shells.py [--seconds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import print_rows  # noqa: E402

SHELLS = 10
STEADY = 'i=0; while true; do echo "tick $i from a dev server"; i=$((i+1)); sleep 0.01; done'
FLOOD = 'i=0; while true; do echo "line $i of a flood"; i=$((i+1)); done'


async def measure(
    command: str | None, seconds: float, *, tasks_view: bool, workdir: Path
) -> tuple[float, int]:
    """CPU % of one core over `seconds`, and the bytes the shells printed meanwhile."""
    from tui_assist.session.config import Settings
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.tasks import TasksScreen

    app = TuiAssistApp(Settings(provider="anthropic", workdir=workdir, sandbox="off"))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        shells = app.session.shells
        assert shells is not None
        if command is not None:
            for _ in range(SHELLS):
                await shells.start(command)
        if tasks_view:
            app.push_screen(TasksScreen(shells))
        await asyncio.sleep(1.0)  # past the start-up's own work
        await pilot.pause()
        before = sum(shell.output.total for shell in shells.shells)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        printed = sum(shell.output.total for shell in shells.shells) - before
        await shells.aclose()
    return 100 * cpu / wall, printed


async def main(seconds: float) -> None:
    cases = [
        ("idle, no shell", None, False),
        (f"{SHELLS} shells, a line each 10 ms", STEADY, False),
        (f"{SHELLS} shells flooding", FLOOD, False),
        (f"{SHELLS} shells flooding, /tasks open", FLOOD, True),
    ]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-shells-") as tmp:
        os.environ.update(
            TUI_ASSIST_HOME=str(Path(tmp) / "data"),
            XDG_CONFIG_HOME=str(Path(tmp) / "config"),
            ANTHROPIC_API_KEY="bench-dummy-key",
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        )
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        for name, command, tasks_view in cases:
            percent, printed = await measure(command, seconds, tasks_view=tasks_view, workdir=workdir)
            rows.append((f"{name}: CPU", f"{percent:5.1f}% of a core over {seconds:g} s"))
            if command is not None:
                rows.append((f"{name}: read", f"{printed / seconds / 1e6:6.2f} MB/s from the shells"))
    print_rows(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The idle TUI's CPU with ten background shells printing.")
    parser.add_argument("--seconds", type=float, default=10.0, help="the measured window (10)")
    asyncio.run(main(parser.parse_args().seconds))
