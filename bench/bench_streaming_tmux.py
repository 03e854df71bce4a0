"""Streaming as a person sees it: how often the visible answer grows in a real terminal, and the
app's CPU per streamed answer, with 99 earlier turns vs none.

The app (`python -m tui_assist`, the real SDK) runs in a detached tmux session (120x40, see
`bench_long_session.Terminal`) against the loopback fake (`tests/fakes/anthropic.py`), which streams
a 20 KB Markdown answer (prose, lists, code blocks) in 1,000 deltas, `--delay` seconds apart. From
sending the prompt, `capture-pane` is polled every 2 ms (`Terminal.capture`); every change of the pane while
the answer streams is a visible growth. Figures per sample: the median, the 95th percentile and the
longest gap between two growths (the goal, issue 29: the answer grows at least every 50 ms), and
the app's CPU time (user + system, `/proc/PID/stat` of the pane's process) from sending the prompt
to the answer's last line on screen. The prompt is sent once the app is idle (its CPU time stands
still), so the CPU figure is the answer's alone, not the tail of start-up (the SDK's import).

A control sample first checks that the measurement can see 50 ms at all: a process that prints a
line every 20 ms, in the same kind of pane and polled the same way; its longest gap is what tmux,
the polling and the load on the machine add by themselves.

"99 turns" resumes a stored conversation of 99 turns (`tests/ui/long_conversation.py`) first;
"none" is a fresh session. The two are interleaved; medians and ranges are printed. With
`--baseline`, each round samples both checkouts back to back, and their CPU is also compared round
by round (the ratios' median), as the machine's speed drifts by more than the difference sought.

Run: `.venv/bin/python bench/bench_streaming_tmux.py [--runs N] [--delay S] [--baseline DIR]`.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_first_turn import cpu_seconds
from bench_long_session import EMPTY_SHOWS, POLL_INTERVAL, ROOT, Terminal, app_env, figure
from table import print_rows

from tests.fakes.anthropic import FakeAnthropic, Reply, Text
from tests.ui.long_conversation import seed

END = "END-OF-THE-STREAMED-ANSWER"


def long_answer(size: int = 20_000) -> str:
    """About `size` characters of Markdown: sections of prose, a list and a code block."""
    parts: list[str] = []
    i = 0
    while sum(map(len, parts)) < size - 200:
        parts.append(
            f"### Part {i}\n\nThis part explains step {i} of the procedure in some detail, so that a "
            "reader can follow along and check each result before moving on.\n\n"
            f"- check the input of part {i}\n- run the tool\n- compare the output\n\n"
            f"```python\ndef part_{i}(x: int) -> int:\n    return x * {i} + 1\n```\n\n"
        )
        i += 1
    return "".join(parts) + f"That is the whole procedure. {END}\n"


METRONOME = (
    "import time\n"
    "for i in range(150):\n"
    "    print(f'tick {i}', flush=True)\n"
    "    time.sleep(0.02)\n"
    "print('TICKS-DONE', flush=True)\n"
    "time.sleep(600)\n"
)
"""The control: a line every 20 ms for 3 s."""


def gaps(terminal: Terminal, name: str, first: str, last: str) -> list[float]:
    """Seconds between the pane's changes, from the one that shows `first` to the one that shows `last`."""
    changes: list[float] = []
    screen = terminal.capture(name)
    deadline = time.perf_counter() + 300
    while time.perf_counter() < deadline:
        time.sleep(POLL_INTERVAL)
        shown = terminal.capture(name)
        if shown != screen:
            screen = shown
            if first in screen or changes:
                changes.append(time.perf_counter())
            if last in screen:
                return [b - a for a, b in zip(changes, changes[1:], strict=False)]
    raise RuntimeError(f"{last!r} never showed: {screen!r}")


def wait_idle(pid: int, quiet: float = 0.02, every: float = 0.3, timeout: float = 60) -> None:
    """Wait until process `pid` uses less than `quiet` s of CPU in `every` s (start-up is over)."""
    deadline = time.perf_counter() + timeout
    used = cpu_seconds(pid)
    while time.perf_counter() < deadline:
        time.sleep(every)
        now = cpu_seconds(pid)
        if now - used < quiet:
            return
        used = now
    raise RuntimeError(f"the app never went idle ({timeout:g} s)")


def stream(terminal: Terminal, name: str, pid: int, prompt: str) -> tuple[list[float], float]:
    """Send `prompt`; the gaps between visible growths while the answer streams, and the CPU used."""
    cpu = cpu_seconds(pid)
    terminal.tmux("send-keys", "-t", name, "-l", prompt)
    terminal.tmux("send-keys", "-t", name, "Enter")
    found = gaps(terminal, name, "Part 0", END)
    return found, cpu_seconds(pid) - cpu


def control(terminal: Terminal) -> list[float]:
    """The gaps the measurement itself shows for a pane that changes every 20 ms."""
    name = "control"
    command = f"exec {shlex.quote(sys.executable)} -c {shlex.quote(METRONOME)}"
    terminal.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
    try:
        return gaps(terminal, name, "tick 1", "TICKS-DONE")
    finally:
        terminal.close_session(name)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.005, help="seconds between SSE events")
    parser.add_argument("--baseline", type=Path, help="another checkout to sample alike (before/after)")
    args = parser.parse_args()
    answer = long_answer()
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp, FakeAnthropic() as fake:
        home = Path(tmp)
        work = home / "work"
        work.mkdir()
        env = app_env(home, fake.base_url)
        seeded = home / "seeded"
        conversation = asyncio.run(seed(seeded, work, 99))
        sources = {"": ROOT, **({"baseline ": args.baseline.resolve()} if args.baseline else {})}
        found: dict[str, list[list[float]]] = {}
        cpu: dict[str, list[float]] = {}
        terminal = Terminal(env)
        try:
            controls = [control(terminal) for _ in range(2)]
            for n in range(args.runs + 1):  # the first round warms the bytecode cache
                for label, source in sources.items():
                    for kind in ("none", "99 turns"):
                        data = home / f"data-{label}{kind}-{n}".replace(" ", "")
                        flags = ["--workdir", str(work), "--data-dir", str(data)]
                        shows: tuple[str, ...] = EMPTY_SHOWS
                        if kind != "none":
                            shutil.copytree(seeded, data)
                            flags += ["--resume", conversation]
                            shows = ("That is all for step 98", "palette")
                        name, _ = terminal.open(source, flags, shows)
                        pid = int(terminal.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
                        wait_idle(pid)  # the SDK's import and the Markdown warm-up are done
                        fake.add(Reply([Text(answer, deltas=1000)], delay=args.delay))
                        got, used = stream(terminal, name, pid, "explain the procedure")
                        terminal.close_session(name)
                        if n:
                            found.setdefault(label + kind, []).append(got)
                            cpu.setdefault(label + kind, []).append(used)
        finally:
            terminal.close()
    rows = [
        (
            "samples",
            f"{args.runs} of each, interleaved; 20 KB in 1,000 deltas, {args.delay * 1000:g} ms apart",
        ),
        ("control, a line every 20 ms: longest gap", figure([max(g) for g in controls])),
    ]
    for label in sources:
        for kind in ("none", "99 turns"):
            samples = found[label + kind]
            rows += [
                (
                    f"{label}{kind}: median gap between growths",
                    figure([statistics.median(g) for g in samples]),
                ),
                (f"{label}{kind}: 95th percentile gap", figure([percentile(g, 0.95) for g in samples])),
                (f"{label}{kind}: longest gap", figure([max(g) for g in samples]) + "  (goal: <= 50 ms)"),
                (f"{label}{kind}: CPU per answer", figure(cpu[label + kind])),
            ]
        ratio = statistics.median(cpu[label + "99 turns"]) / statistics.median(cpu[label + "none"])
        rows.append((f"{label}CPU, 99 turns / none", f"{ratio:.2f}x  (goal <= 1.2x)"))
    if args.baseline:
        for kind in ("none", "99 turns"):
            ratios = [ours / theirs for ours, theirs in zip(cpu[kind], cpu["baseline " + kind], strict=True)]
            below = sum(ratio < 1 for ratio in ratios)
            rows.append(
                (
                    f"CPU per answer vs baseline, {kind}, by round",
                    f"median {statistics.median(ratios):.2f}x  (range {min(ratios):.2f}-{max(ratios):.2f}, "
                    f"below 1.0 in {below} of {len(ratios)})  (goal: <= 1.0x)",
                )
            )
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
