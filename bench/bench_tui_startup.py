"""Time to first paint: the tui-assist app versus a bare Textual app, measured in the same run.

Each sample is a fresh headless subprocess. The clock starts just before the process is spawned
and stops when the child prints a marker from a callback scheduled (in `on_mount`) to run after
the first refresh, i.e. once the first frame has been composed and written. The tui-assist app
runs with the Anthropic provider and a (dummy) key, so the SDK is really loaded, in the background
after the first paint, as it would be for a user. Goal (issue 5): within 1.3x of the bare app.

Run: `.venv/bin/python bench/bench_tui_startup.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE = """
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    def compose(self):
        yield Static("hello")
        yield Footer()

    def on_mount(self):
        self.call_after_refresh(self.painted)

    def painted(self):
        print("PAINTED", flush=True)
        self.exit()

Bare().run(headless=True, size=(120, 40))
"""

BARE_WITH_SETTINGS = "import tui_assist.config\n" + BARE
"""The bare app plus the settings module every entry point loads first (pydantic)."""

OURS = """
from pathlib import Path
from tui_assist.config import Settings
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.main import MainScreen

original = MainScreen._start_loading

def start_loading(self):
    # Runs after the main screen's first refresh: the first frame is on screen.
    print("PAINTED", flush=True)
    original(self)
    self.app.exit()

MainScreen._start_loading = start_loading
app = TuiAssistApp(Settings(provider="anthropic", workdir=Path.cwd()), use_store=False)
app.run(headless=True, size=(120, 40))
"""


def first_paint(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    elapsed = time.perf_counter() - start
    child.wait(timeout=60)
    if "PAINTED" not in line:
        raise RuntimeError(f"no first paint: {line!r} {child.stderr.read() if child.stderr else ''}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            env[name] = str(Path(home) / name.lower())
        env["TUI_ASSIST_HOME"] = str(Path(home) / "data")
        env["ANTHROPIC_API_KEY"] = "bench-dummy-key"
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
        env["ANTHROPIC_CONFIG_DIR"] = str(Path(home) / "anthropic")
        for code in (BARE, BARE_WITH_SETTINGS, OURS):  # warm the OS file cache and .pyc files
            first_paint(code, env)
        bare: list[float] = []
        bare_settings: list[float] = []
        ours: list[float] = []
        for _ in range(args.runs):  # interleaved, so load on the machine hits all alike
            bare.append(first_paint(BARE, env))
            bare_settings.append(first_paint(BARE_WITH_SETTINGS, env))
            ours.append(first_paint(OURS, env))
    b, bs, o = statistics.median(bare), statistics.median(bare_settings), statistics.median(ours)
    print(f"runs: {args.runs} each, interleaved; time from spawn to first painted frame (headless, 120x40)")
    print(f"bare Textual app              median {b * 1000:6.0f} ms   min {min(bare) * 1000:6.0f} ms")
    print(
        f"bare app + tui_assist.config  median {bs * 1000:6.0f} ms   min {min(bare_settings) * 1000:6.0f} ms"
    )
    print(f"tui-assist app                median {o * 1000:6.0f} ms   min {min(ours) * 1000:6.0f} ms")
    print(f"ratio vs bare                 {o / b:.2f}x   (goal: <= 1.3x)")
    print(f"ratio vs bare + settings      {o / bs:.2f}x")


if __name__ == "__main__":
    main()
