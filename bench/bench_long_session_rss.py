"""Memory of a long TUI session: the app's RSS after 500 turns vs after 20.

The app (`TuiAssistApp` as `tui-assist` builds it: the Anthropic provider through the real SDK, the
real tools and a SQLite store in a fresh data dir) runs in-process under Textual's Pilot (headless,
120x40); each turn types a prompt and sends it, and waits until the turn has ended and its answer
is on screen. The model is the loopback fake (`tests/fakes/anthropic.py`) in a child process, so
the requests it records (each one holds the whole history) weigh nothing here. Each answer is
Markdown of about 600 characters (a heading, prose, a list, a Python block) in 20 deltas.

At each checkpoint (20 turns, then every `--every`), Python's collector runs and the process's
resident set (`VmRSS` in `/proc/self/status`) is read. Printed: RSS at each checkpoint, the ratio
500 / 20 (goal, issue 43: <= 1.2x), and the growth per turn beyond the 20th.

Run: `.venv/bin/python bench/bench_long_session_rss.py [--turns 500] [--every 100]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from table import print_rows  # bench/table.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIRST = 20


def answer(i: int) -> str:
    return (
        f"## Answer {i}\n\nRun **step {i}** with `helper_{i}`; it keeps the order of the input.\n\n"
        f"- read the input of step {i}\n- transform it\n- write it out\n\n"
        f"```python\ndef helper_{i}(values: list[int]) -> int:\n    return sum(v * 2 for v in values)\n```\n\n"
        f"That is all for step {i}.\n"
    )


def serve(turns: int) -> None:
    """The child: a fake with `turns` answers queued; prints its URL, serves until stdin closes."""
    from tests.fakes.anthropic import FakeAnthropic, Reply, Text

    with FakeAnthropic() as fake:
        fake.add(*(Reply([Text(answer(i), deltas=20)]) for i in range(turns)))
        print(fake.base_url, flush=True)
        sys.stdin.read()


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


async def run(turns: int, every: int, work: Path) -> list[tuple[int, float]]:
    from tests.ui.helpers import settled, wait_until
    from tui_assist.session.config import Settings
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.main import MainScreen

    app = TuiAssistApp(Settings(provider="anthropic", workdir=work))
    samples: list[tuple[int, float]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await settled(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        messages = app.session.conversation.messages
        for n in range(1, turns + 1):
            await pilot.press(*f"q{n}", "enter")
            await wait_until(
                pilot,
                lambda n=n: len(messages) >= 2 * n and not screen.controller.running,
                timeout=60,
            )
            if n == FIRST or (n > FIRST and n % every == 0) or n == turns:
                await settled(pilot)
                gc.collect()
                samples.append((n, rss_mb()))
                print(f"turn {n}: {samples[-1][1]:.1f} MB", file=sys.stderr, flush=True)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
        home = Path(tmp)
        (home / "work").mkdir()
        fake = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(args.turns)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert fake.stdout is not None
            os.environ.update(
                {
                    "ANTHROPIC_API_KEY": "bench-key",
                    "ANTHROPIC_BASE_URL": fake.stdout.readline().strip(),
                    "TUI_ASSIST_HOME": str(home / "data"),
                    **{name: str(home / name.lower()) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME")},
                }
            )
            samples = asyncio.run(run(args.turns, args.every, home / "work"))
        finally:
            fake.communicate(timeout=30)
    first, last = samples[0], samples[-1]
    rows = [(f"RSS after {n} turns", f"{mb:.1f} MB") for n, mb in samples]
    rows += [
        (f"RSS {last[0]} / {first[0]} turns", f"{last[1] / first[1]:.2f}x  (goal <= 1.2x)"),
        (
            f"growth per turn after the {first[0]}th",
            f"{(last[1] - first[1]) * 1024 / max(1, last[0] - first[0]):.1f} KB",
        ),
    ]
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
