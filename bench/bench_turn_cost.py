"""A turn's overhead as the conversation grows: turns through the real TUI at 0, 100 and 300
earlier turns.

The app (`python -m tui_assist`, the real SDK) runs in a detached tmux session (120x40, see
`bench_long_session.Terminal`) against the loopback fake (`tests/fakes/anthropic.py`), which answers
each turn at once with about 1 KB of Markdown (a heading, a list, a code block) in 20 deltas. "100"
and "300" resume a stored conversation of that many turns (`tests/ui/long_conversation.py`, copied
fresh for each sample); "0" is a fresh session. Each sample waits until the app is idle (the status
bar says so), then runs `--turns` turns one after the other: the prompt is typed, enter pressed,
and the turn ends when the pane shows the answer's last line and the status bar is idle again.

With `--live N`, each run also starts a fresh session and runs N turns in it (every turn's views
stay mounted, as in a long live session): turns 2-6 are compared with the last 5.

Per turn: the app's time, the wall time from enter to that end less the fake's own time answering
(`FakeAnthropic.handling_seconds`, which grows with the request body), and the app's CPU (user +
system, `/proc/PID/stat` of the pane's process) over the same span. A session's first turn pays
for one-time set-up (the SDK client, the first snapshot), so only the turns after it count.

The kinds are interleaved so load on the (shared) machine hits them alike; medians and ranges are
printed, and the ratios of the medians to the fresh session's (issue 29: a turn's overhead should
not grow with the conversation).

Run: `.venv/bin/python bench/bench_turn_cost.py [--runs N] [--turns N] [--lengths 0,100,300]
[--live N] [--baseline DIR]`; `--baseline DIR` also samples another checkout (e.g. `git archive main | tar -x -C
DIR`).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_first_turn import cpu_seconds
from bench_long_session import EMPTY_SHOWS, IDLE_SHOWS, ROOT, Terminal, app_env, figure
from table import print_rows

from tests.fakes.anthropic import FakeAnthropic, Reply, Text
from tests.ui.long_conversation import answer, seed

WINDOW = 5
"""Turns compared at the start and at the end of one long session (`--live`)."""


def turn(terminal: Terminal, fake: FakeAnthropic, name: str, pid: int, k: int) -> tuple[float, float]:
    """Run bench turn `k`; the app's seconds (the fake's own time taken out) and CPU seconds."""
    reply = answer(10_000 + k)
    end = f"That is all for step {10_000 + k}"
    fake.add(Reply([Text(reply, deltas=20)]))
    cpu, fake_before = cpu_seconds(pid), fake.handling_seconds
    terminal.tmux("send-keys", "-t", name, "-l", f"bench turn {k}: how do I do it?")
    start = time.perf_counter()
    terminal.tmux("send-keys", "-t", name, "Enter")
    terminal.wait(name, (end,), start)
    terminal.wait(name, (end, IDLE_SHOWS), start)
    took = time.perf_counter() - start - (fake.handling_seconds - fake_before)
    return took, cpu_seconds(pid) - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--turns", type=int, default=4, help="turns per sample (the first is not counted)")
    parser.add_argument("--lengths", default="0,100,300", help="earlier turns of each kind")
    parser.add_argument(
        "--live", type=int, default=0, help="also run this many turns in one fresh session per run"
    )
    parser.add_argument("--baseline", type=Path, help="another checkout to sample alike (before/after)")
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-turn-") as tmp, FakeAnthropic() as fake:
        home = Path(tmp)
        work = home / "work"
        work.mkdir()
        env = app_env(home, fake.base_url)
        seeded = {n: home / f"seeded-{n}" for n in lengths if n}
        conversations = {n: asyncio.run(seed(folder, work, n)) for n, folder in seeded.items()}
        sources = {"": ROOT, **({"baseline ": args.baseline.resolve()} if args.baseline else {})}
        took: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        terminal = Terminal(env)
        try:
            for n in range(args.runs + 1):  # the first round warms the bytecode cache
                for label, source in sources.items():
                    for length in lengths:
                        data = home / f"data-{label.strip()}-{length}-{n}"
                        flags = ["--workdir", str(work), "--data-dir", str(data)]
                        shows: tuple[str, ...] = EMPTY_SHOWS
                        if length:
                            shutil.copytree(seeded[length], data)
                            flags += ["--resume", conversations[length]]
                            shows = (f"That is all for step {length - 1}", "palette")
                        name, _ = terminal.open(source, flags, shows)
                        terminal.wait(name, (IDLE_SHOWS,), time.perf_counter())
                        pid = int(terminal.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
                        time.sleep(0.5)  # the warm-up done
                        for k in range(args.turns):
                            seconds, used = turn(terminal, fake, name, pid, k)
                            if n and k:
                                took.setdefault(f"{label}{length}", []).append(seconds)
                                cpu.setdefault(f"{label}{length}", []).append(used)
                        terminal.close_session(name)
            for n in range(args.runs if args.live else 0):
                for label, source in sources.items():
                    data = home / f"data-{label.strip()}-live-{n}"
                    name, _ = terminal.open(
                        source, ["--workdir", str(work), "--data-dir", str(data)], EMPTY_SHOWS
                    )
                    terminal.wait(name, (IDLE_SHOWS,), time.perf_counter())
                    pid = int(terminal.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
                    time.sleep(0.5)
                    for k in range(args.live):
                        seconds, used = turn(terminal, fake, name, pid, k)
                        window = "first" if 0 < k <= WINDOW else "last" if k >= args.live - WINDOW else ""
                        if window:
                            took.setdefault(f"{label}live {window}", []).append(seconds)
                            cpu.setdefault(f"{label}live {window}", []).append(used)
                    terminal.close_session(name)
        finally:
            terminal.close()
    rows = [
        (
            "samples",
            f"{args.runs} of each, interleaved, {args.turns - 1} turns counted each; a shared, loaded machine",
        )
    ]
    for label in sources:
        first = f"{label}{lengths[0]}"
        for length in lengths:
            key = f"{label}{length}"
            rows += [
                (f"{key} earlier turns: app time per turn", figure(took[key])),
                (f"{key} earlier turns: app CPU per turn", figure(cpu[key])),
            ]
        for length in lengths[1:]:
            key = f"{label}{length}"
            time_ratio = statistics.median(took[key]) / statistics.median(took[first])
            cpu_ratio = statistics.median(cpu[key]) / statistics.median(cpu[first])
            rows.append((f"{key} / {lengths[0]} turns", f"time {time_ratio:.2f}x, CPU {cpu_ratio:.2f}x"))
        if args.live:
            first, last = f"{label}live first", f"{label}live last"
            rows += [
                (f"{label}one session, turns 2-{WINDOW + 1}: app time", figure(took[first])),
                (f"{label}one session, turns 2-{WINDOW + 1}: app CPU", figure(cpu[first])),
                (f"{label}one session, last {WINDOW} of {args.live}: app time", figure(took[last])),
                (f"{label}one session, last {WINDOW} of {args.live}: app CPU", figure(cpu[last])),
                (
                    f"{label}one session, last / first",
                    f"time {statistics.median(took[last]) / statistics.median(took[first]):.2f}x, "
                    f"CPU {statistics.median(cpu[last]) / statistics.median(cpu[first]):.2f}x",
                ),
            ]
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
