"""The user's status line in the chat: its first line in the bar, runs spaced by 300 ms at least
however fast the state changes, and a failing command reported once."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.ui.helpers import BlockingProvider, make_app, screen_text, wait_until
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.status_line import PERIOD
from tui_assist.ui.widgets.prompt import Prompt


def line_script(tmp_path: Path) -> tuple[str, Path]:
    log = tmp_path / "runs.jsonl"
    path = tmp_path / "line.py"
    path.write_text(
        "import json, sys, time\n"
        "s = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(json.dumps({{'at': time.monotonic(), 'state': s['state']}}) + '\\n')\n"
        "print(f\"my line: {s['state']} on {s['model']['id']}\")\n"
    )
    return f"{sys.executable} {path}", log


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_the_line_shows_and_follows_the_state_at_most_every_300_ms(tmp_path: Path) -> None:
    command, log = line_script(tmp_path)
    provider = BlockingProvider("An answer")
    app = make_app(provider=provider, workdir=tmp_path, status_line={"command": command})
    async with app.run_test(size=(160, 30)) as pilot:
        await _settle(app, pilot)
        await wait_until(pilot, lambda: "my line: idle on blocking" in screen_text(app), timeout=10)
        app.query_one(Prompt).load_text("hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "my line: running on blocking" in screen_text(app), timeout=10)
        provider.release.set()
        await _settle(app, pilot)
        await wait_until(pilot, lambda: "my line: idle on blocking" in screen_text(app), timeout=10)
        glue = app.main_screen.status_line
        assert glue is not None
        await wait_until(pilot, lambda: glue.idle)
        before = glue.runs
        for fill in range(20):  # a burst of changes: one run sees the last of them
            app.main_screen.status.context = fill / 100
        await wait_until(pilot, lambda: glue.runs == before + 1, timeout=10)
        await wait_until(pilot, lambda: glue.idle)  # the look after that run found nothing new
        assert glue.runs == before + 1
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    gaps = [b["at"] - a["at"] for a, b in zip(runs, runs[1:], strict=False)]
    assert all(gap >= PERIOD - 0.02 for gap in gaps), gaps


async def test_a_failing_command_is_reported_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    told: list[str] = []
    shown = MainScreen.notify

    def notify(self: MainScreen, message: str, **options: Any) -> None:
        told.append(message)
        shown(self, message, **options)

    monkeypatch.setattr(MainScreen, "notify", notify)
    app = make_app([], workdir=tmp_path, status_line={"command": "exit 7"})
    async with app.run_test(size=(160, 30)) as pilot:
        await _settle(app, pilot)
        screen = app.main_screen
        glue = screen.status_line
        assert glue is not None
        await wait_until(pilot, lambda: glue.runs == 1, timeout=10)
        screen.status.refine = True  # a new state: the command runs, and fails, again
        await wait_until(pilot, lambda: glue.runs == 2, timeout=10)
        await pilot.pause()
    failures = [line for line in told if "status line" in line]
    assert len(failures) == 1 and "exit status 7" in failures[0]
