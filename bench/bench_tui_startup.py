"""Time to first paint: the tui-assist app versus a bare Textual app, measured in the same run.

Each sample is a fresh headless subprocess. The clock starts just before the process is spawned.
Both apps run with the same hook on `App._display`, which Textual calls with each finished frame
(composed, laid out and rendered; headless, it is not written out), installed as `textual.app`
is first imported: the child prints a marker at its first frame, and another at the first frame
of the full screen: the footer's keys (Textual's footer fills them in a few frames after the
first) and, for tui-assist, the side panels (the agent tree's title and the flow panel; the tree
itself mounts with the first turn).

tui-assist runs through its real entry point (`tui_assist.cli.main`: flags, config file,
environment) with the Anthropic provider and a dummy key, so the SDK and the settings' validation
really load, after the first paint, as they would for a user. Goals (issues 5 and 20): the first
paint, side panels included, within 1.3x of the bare app's.

`--tmux` measures it as a user sees it: each app runs in a real terminal (a detached tmux session on
a private socket, 120x40, the server started once beforehand) and the clock stops when the pane
shows the full screen: for tui-assist the footer, the status bar's Refine state and the flow
panel; for the bare apps their text and footer (and header). tmux's own spawning and the polling
(every 5 ms) cost all apps alike. Two bare apps: a line of text and a footer, and the reference of
issue 29's goal, a header, a text area and a footer (tui-assist's prompt is a text area, too).

The full screen (side panels and footer keys) is what the goal is about; the first frame is shown
beside it. Run: `.venv/bin/python bench/bench_tui_startup.py [--runs N] [--tmux [--baseline DIR]]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_long_session import Terminal

ROOT = Path(__file__).resolve().parents[1]

FRAME_HOOK = """
import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import PathFinder

def report_frames(App):
    display, run = App._display, App.run
    frames = []

    def display_and_report(self, screen, renderable):
        display(self, screen, renderable)
        if renderable is None:
            return
        if not frames:
            print("PAINTED", flush=True)
        frames.append(1)
        from textual.widgets import Footer

        footer = screen.query(Footer)
        keys_shown = footer and any(key.region for key in footer.first().children)
        if keys_shown and (not WAIT_FOR_SIDE or screen.query("#side #flow")):
            print("COMPLETE", flush=True)
            self.exit()

    App._display = display_and_report
    App.run = lambda self, **kwargs: run(self, headless=True, size=(120, 40))

class PatchTextualApp(MetaPathFinder):
    # Patches textual.app as it is first imported, so the hook itself imports nothing early.
    def find_spec(self, name, path, target=None):
        if name != "textual.app":
            return None
        spec = PathFinder.find_spec(name, path)
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            report_frames(module.App)

        spec.loader.exec_module = exec_and_patch
        return spec

sys.meta_path.insert(0, PatchTextualApp())
"""

BARE = (
    "WAIT_FOR_SIDE = False\n"
    + FRAME_HOOK
    + """
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    def compose(self):
        yield Static("hello")
        yield Footer()

Bare().run()
"""
)

OURS = (
    "WAIT_FOR_SIDE = True\n"
    + FRAME_HOOK
    + """
from tui_assist.cli import main

main([])
"""
)
"""The real entry point, as `tui-assist` runs it (only the terminal is headless)."""


def sample(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the first frame, and to the first frame of the full screen."""
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
    marks: dict[str, float] = {}
    for line in child.stdout:
        marks[line.strip()] = time.perf_counter() - start
        if "COMPLETE" in marks:
            break
    child.kill()
    child.wait(timeout=60)
    if "PAINTED" not in marks or "COMPLETE" not in marks:
        raise RuntimeError(f"no first paint: {marks} {child.stderr.read() if child.stderr else ''}")
    return marks["PAINTED"], marks["COMPLETE"]


BARE_TERMINAL = """
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    def compose(self):
        yield Static("hello")
        yield Footer()

Bare().run()
"""
EDITOR_TERMINAL = """
from textual.app import App
from textual.widgets import Footer, Header, TextArea

class Editor(App):
    def compose(self):
        yield Header()
        yield TextArea("hello")
        yield Footer()

Editor().run()
"""
"""The reference of issue 29's goal: a bare app with a header, a footer and a text area."""
OURS_TERMINAL = "from tui_assist.cli import main\nmain([])\n"
BARE_SHOWS = ("hello", "palette")
EDITOR_SHOWS = ("Editor", "hello", "palette")
OURS_SHOWS = ("No turn yet", "Refine", "palette")
"""What each full screen shows (the flow panel's placeholder is in the side panel)."""


def main_tmux(env: dict[str, str], runs: int, baseline: Path | None) -> None:
    env = dict(env, TERM="xterm-256color")
    tmux = Terminal(
        {k: v for k, v in env.items() if k.startswith(("XDG_", "TUI_ASSIST_", "ANTHROPIC_", "TERM"))}
    )

    def sample(source: Path, code: str, shows: tuple[str, ...]) -> float:
        name, took = tmux.launch(source, ["-c", code], shows)
        tmux.close_session(name)
        return took

    apps = {
        "bare Textual app (text, footer)": (ROOT, BARE_TERMINAL, BARE_SHOWS),
        "bare Textual app (header, text area, footer)": (ROOT, EDITOR_TERMINAL, EDITOR_SHOWS),
        "tui-assist, side panels included": (ROOT, OURS_TERMINAL, OURS_SHOWS),
    }
    if baseline is not None:
        apps["baseline tui-assist"] = (baseline.resolve(), OURS_TERMINAL, OURS_SHOWS)
    times: dict[str, list[float]] = {label: [] for label in apps}
    try:
        for app in apps.values():  # warm the OS file cache and .pyc files
            sample(*app)
        for _ in range(runs):  # interleaved, so load on the machine hits all alike
            for label, app in apps.items():
                times[label].append(sample(*app))
    finally:
        tmux.close()
    print(
        f"runs: {runs} each, interleaved; time from spawn to the full screen in a real terminal (tmux, 120x40)"
    )
    medians = {label: statistics.median(samples) for label, samples in times.items()}
    for label, samples in times.items():
        print(f"{label:45} median {medians[label] * 1000:4.0f} ms   min {min(samples) * 1000:4.0f} ms")
    for ours in [label for label in apps if "tui-assist" in label]:
        for label in list(apps)[:2]:
            goal = "   (goal, issue 43: <= 1.1x quiet, <= 1.2x loaded)" if "header" in label else ""
            name = ours.removesuffix(", side panels included")
            print(
                f"{name + ' vs ' + label.removeprefix('bare Textual app '):45} "
                f"{medians[ours] / medians[label]:.2f}x{goal}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tmux", action="store_true", help="measure in a real terminal (needs tmux)")
    parser.add_argument("--baseline", type=Path, help="with --tmux: another checkout to sample alike")
    args = parser.parse_args()
    if args.tmux and shutil.which("tmux") is None:
        parser.error("--tmux needs tmux on the PATH")
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        # Users run from compiled bytecode (pip writes it at install; an editable checkout writes it
        # on first run); without this, our modules would be recompiled on every sample.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            env[name] = str(Path(home) / name.lower())
        env["TUI_ASSIST_HOME"] = str(Path(home) / "data")
        env["ANTHROPIC_API_KEY"] = "bench-dummy-key"
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
        env["ANTHROPIC_CONFIG_DIR"] = str(Path(home) / "anthropic")
        if args.tmux:
            main_tmux(env, args.runs, args.baseline)
            return
        for code in (BARE, OURS):  # warm the OS file cache and .pyc files
            sample(code, env)
        samples: dict[str, list[tuple[float, float]]] = {"bare": [], "ours": []}
        for _ in range(args.runs):  # interleaved, so load on the machine hits both alike
            samples["bare"].append(sample(BARE, env))
            samples["ours"].append(sample(OURS, env))
    print(f"runs: {args.runs} each, interleaved; time from spawn to a finished frame (headless, 120x40)")
    medians: dict[str, float] = {}
    for name, label in (("bare", "bare Textual app"), ("ours", "tui-assist")):
        for index, frame in ((0, "first frame"), (1, "full screen")):
            times = [pair[index] for pair in samples[name]]
            medians[f"{name} {frame}"] = statistics.median(times)
            print(
                f"{label + ', ' + frame:37} median {statistics.median(times) * 1000:4.0f} ms"
                f"   min {min(times) * 1000:4.0f} ms"
            )
    for frame in ("first frame", "full screen"):
        ratio = medians[f"ours {frame}"] / medians[f"bare {frame}"]
        print(f"{frame + ' vs bare':37} {ratio:.2f}x   (goal, issue 43: <= 1.1x quiet, <= 1.2x loaded)")


if __name__ == "__main__":
    main()
