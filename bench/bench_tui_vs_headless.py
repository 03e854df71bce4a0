"""What the screen costs: the TUI's CPU for one streamed answer vs the same stream through `ask`,
and the layouts of the screen per streamed answer.

Both run the real program (`python -m tui_assist`, the real SDK) against the loopback fake
(`tests/fakes/anthropic.py`), which streams the same 20 KB Markdown answer in 1,000 deltas,
`--delay` seconds apart (`bench_streaming_tmux.long_answer`):

- TUI: a fresh app in a detached tmux session (120x40, `bench_long_session.Terminal`), idle; the
  prompt is typed and sent;
- headless: a fresh `ask --yes PROMPT` subprocess (text output: the answer is printed when the
  turn has ended and been stored).

The fake holds the reply after its first events until the process is idle (its CPU time stands
still: start-up, the SDK's import and the request are behind it), so each figure is the answer's
own: the process's CPU time (user + system, `/proc/PID/stat`) from releasing the stream to the
answer's last line shown (TUI: on the pane, then idle again, so the stored turn is counted as in
`ask`; headless: printed on stdout). The two kinds are interleaved; medians, ranges, the ratio of
the medians and the median of each round's ratio are printed (goal, issue 43: <= 1.3x).

Layouts: the same stream through the app in-process (Textual's Pilot, headless, the real SDK
against the same fake), counting `Screen.screen_layout_refresh_signal` from sending the prompt
to the end of the turn (goal, issue 43: <= 15).

With `--baseline DIR` (another checkout, e.g. `git archive main | tar -x -C DIR`), each round also
samples the TUI from DIR, and its layouts are counted by DIR's own copy of this bench.

Run: `.venv/bin/python bench/bench_tui_vs_headless.py [--runs N] [--delay S] [--layouts-only]
[--baseline DIR]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_first_turn import bench_env, cpu_seconds
from bench_long_session import EMPTY_SHOWS, ROOT, Terminal, app_env, figure
from bench_streaming_tmux import END, long_answer, wait_idle
from table import print_rows

from tests.fakes.anthropic import FakeAnthropic, Reply, Text

PROMPT = "explain the procedure"
HOLD_AFTER = 2
"""SSE events the fake sends (message_start, ping) before it holds the reply."""


def streamed_reply(answer: str, delay: float) -> Reply:
    return Reply([Text(answer, deltas=1000)], delay=delay, hold_after=HOLD_AFTER)


def tui_sample(
    terminal: Terminal, fake: FakeAnthropic, home: Path, answer: str, delay: float, source: Path = ROOT
) -> float:
    """The TUI's CPU seconds for one streamed answer (a fresh app from `source`, idle before and after)."""
    work = home / "work"
    data = Path(tempfile.mkdtemp(prefix="data-tui-", dir=home))
    name, _ = terminal.open(source, ["--workdir", str(work), "--data-dir", str(data)], EMPTY_SHOWS)
    try:
        pid = int(terminal.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
        wait_idle(pid)
        reply = streamed_reply(answer, delay)
        fake.add(reply)
        terminal.tmux("send-keys", "-t", name, "-l", PROMPT)
        terminal.tmux("send-keys", "-t", name, "Enter")
        if not reply.held.wait(60):
            raise RuntimeError("the TUI never asked the model")
        wait_idle(pid)
        used = cpu_seconds(pid)
        reply.release()
        terminal.wait(name, (END,), time.perf_counter())
        wait_idle(pid)
        return cpu_seconds(pid) - used
    finally:
        terminal.close_session(name)


def headless_sample(env: dict[str, str], fake: FakeAnthropic, home: Path, answer: str, delay: float) -> float:
    """`ask`'s CPU seconds for the same streamed answer, to its last line on stdout."""
    data = Path(tempfile.mkdtemp(prefix="data-ask-", dir=home))
    reply = streamed_reply(answer, delay)
    fake.add(reply)
    command = [sys.executable, "-m", "tui_assist", "ask", "--yes", "--workdir", str(home / "work"), PROMPT]
    child = subprocess.Popen(
        command,
        env=dict(env, TUI_ASSIST_HOME=str(data)),
        cwd=ROOT,  # `python -m` finds the package in its working directory first
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if not reply.held.wait(60):
            raise RuntimeError("ask never asked the model")
        wait_idle(child.pid)
        used = cpu_seconds(child.pid)
        reply.release()
        assert child.stdout is not None
        for line in child.stdout:
            if END in line:
                # Read before reaping: an exited child's times stay in /proc until it is waited for.
                return cpu_seconds(child.pid) - used
        raise RuntimeError(f"ask printed no answer: {child.stderr.read() if child.stderr else ''}")
    finally:
        child.communicate(timeout=60)


async def count_layouts(fake: FakeAnthropic, work: Path, answer: str, delay: float) -> int:
    """Layouts of the screen while one answer streams into the app, in-process (Pilot)."""
    from tests.ui.helpers import settled, wait_until
    from tui_assist.session.config import Settings
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.main import MainScreen

    app = TuiAssistApp(Settings(provider="anthropic", workdir=work))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await settled(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        layouts: list[object] = []
        screen.screen_layout_refresh_signal.subscribe(screen, layouts.append)
        fake.add(Reply([Text(answer, deltas=1000)], delay=delay))
        await pilot.press(*PROMPT, "enter")
        await wait_until(pilot, lambda: screen.controller.running, timeout=60)
        await wait_until(pilot, lambda: not screen.controller.running, timeout=120)
        await settled(pilot)
        return len(layouts)


def layouts_in_process(fake: FakeAnthropic, home: Path, answer: str, delay: float, runs: int) -> list[int]:
    os.environ.update(
        {
            "ANTHROPIC_API_KEY": "bench-key",
            "ANTHROPIC_BASE_URL": fake.base_url,
            "TUI_ASSIST_HOME": str(home / "data-layouts"),
            **{name: str(home / name.lower()) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME")},
        }
    )
    return [asyncio.run(count_layouts(fake, home / "work", answer, delay)) for _ in range(runs)]


def baseline_layouts(source: Path) -> str:
    """The layouts `source`'s own copy of this bench counts (its code, in its own process)."""
    done = subprocess.run(
        [sys.executable, "bench/bench_tui_vs_headless.py", "--layouts-only"],
        cwd=source,
        env=dict(os.environ, PYTHONPATH=str(source)),
        capture_output=True,
        text=True,
        check=True,
    )
    return next(
        line.split("  ", 1)[1].strip() for line in done.stdout.splitlines() if line.startswith("layouts")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.005, help="seconds between SSE events")
    parser.add_argument("--layouts-only", action="store_true", help="only count the layouts")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose TUI to sample alike (before/after)"
    )
    args = parser.parse_args()
    answer = long_answer()
    with tempfile.TemporaryDirectory(prefix="bench-tui-headless-") as tmp, FakeAnthropic() as fake:
        home = Path(tmp)
        (home / "work").mkdir()
        rows = [("answer", f"{len(answer):,} chars in 1,000 deltas, {args.delay * 1000:g} ms apart")]
        cpu: dict[str, list[float]] = {"tui": [], "ask": [], "baseline tui": []}
        if not args.layouts_only:
            env = bench_env(home, fake)
            terminal = Terminal(app_env(home, fake.base_url))
            try:
                for n in range(args.runs + 1):  # the first round warms the bytecode cache
                    tui = tui_sample(terminal, fake, home, answer, args.delay)
                    ask = headless_sample(env, fake, home, answer, args.delay)
                    if args.baseline:
                        base = tui_sample(terminal, fake, home, answer, args.delay, args.baseline.resolve())
                    if n:
                        cpu["tui"].append(tui)
                        cpu["ask"].append(ask)
                        if args.baseline:
                            cpu["baseline tui"].append(base)
            finally:
                terminal.close()
            by_round = [t / a for t, a in zip(cpu["tui"], cpu["ask"], strict=True)]
            rows += [
                ("samples", f"{args.runs} of each, interleaved; load {os.getloadavg()[0]:.1f}"),
                ("TUI: CPU per answer", figure(cpu["tui"])),
                ("ask: CPU per answer", figure(cpu["ask"])),
                (
                    "TUI / ask",
                    f"{statistics.median(cpu['tui']) / statistics.median(cpu['ask']):.2f}x  "
                    f"(by round: median {statistics.median(by_round):.2f}x, "
                    f"range {min(by_round):.2f}-{max(by_round):.2f})  (goal <= 1.3x)",
                ),
            ]
            if args.baseline:
                base_round = [b / a for b, a in zip(cpu["baseline tui"], cpu["ask"], strict=True)]
                rows += [
                    ("baseline TUI: CPU per answer", figure(cpu["baseline tui"])),
                    (
                        "baseline TUI / ask",
                        f"{statistics.median(cpu['baseline tui']) / statistics.median(cpu['ask']):.2f}x  "
                        f"(by round: median {statistics.median(base_round):.2f}x)",
                    ),
                ]
        layouts = layouts_in_process(fake, home, answer, args.delay, 3)
        rows.append(("layouts per streamed answer (Pilot)", f"{layouts}  (goal <= 15)"))
        if args.baseline:
            rows.append(("baseline layouts per streamed answer", baseline_layouts(args.baseline.resolve())))
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
