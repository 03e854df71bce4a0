"""Per-step overhead of the workflow engine: a 100-step chain vs 100 plain awaits, same run.

The chain is `s1.then(s2).then(...)`, i.e. 100 leaves under 99 nested `Chain` nodes, each leaf
an `async def` that adds one. Two workflow runs are timed against plain awaits of the same
function: unobserved (`observer=None`, which a `NullObserver` also gets: nobody listens, so no
events are built) and reporting to a `RecordingObserver` (every node's `NodeStarted` and
`NodeFinished` built and kept, as a host does: 4 events per chained step). Figures are the best of
several repeats, in µs per step. It also prints the cumulative import time of the engine, and
how much of it is the engine's own modules (the rest is asyncio and the core it builds on).

    python bench/bench_workflow.py
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_assist.core.observer import NullObserver, RecordingObserver  # noqa: E402
from tui_assist.workflow import Step, step  # noqa: E402
from tui_assist.workflow.reporting import run_reporting  # noqa: E402

STEPS = 100
LOOPS = 200
REPEATS = 7


async def inc(x: int) -> int:
    return x + 1


def build_chain(n: int) -> Step[int, int]:
    chain: Step[int, int] = step(label="s1")(inc)
    for i in range(2, n + 1):
        chain = chain.then(step(label=f"s{i}")(inc))
    return chain


async def plain(loops: int) -> None:
    for _ in range(loops):
        x = 0
        for _ in range(STEPS):
            x = await inc(x)
        assert x == STEPS


def workflow(
    chain: Step[int, int], observer_factory: Callable[[], object]
) -> Callable[[int], Awaitable[None]]:
    async def go(loops: int) -> None:
        for _ in range(loops):
            x = await run_reporting(chain, 0, observer_factory())  # type: ignore[arg-type]
            assert x == STEPS

    return go


async def best_us_per_step(fn: Callable[[int], Awaitable[None]]) -> float:
    await fn(5)  # warm up
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        await fn(LOOPS)
        best = min(best, time.perf_counter() - start)
    return best / (LOOPS * STEPS) * 1e6


def import_times_ms(module: str, own_prefix: str) -> tuple[float, float]:
    """Cumulative import time of `module` in a fresh interpreter, and the self time of modules
    under `own_prefix`, in ms (each the best of 7 runs)."""
    best_total = best_own = float("inf")
    for _ in range(7):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[1],
        ).stderr
        total = own = 0.0
        for line in err.splitlines():
            parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
            if len(parts) != 3 or not parts[0].isdigit():
                continue
            if parts[2] == module:
                total = int(parts[1]) / 1000
            if parts[2].startswith(own_prefix):
                own += int(parts[0]) / 1000
        best_total, best_own = min(best_total, total), min(best_own, own)
    return best_total, best_own


async def main() -> None:
    chain = build_chain(STEPS)
    base = await best_us_per_step(plain)
    runs = {
        "workflow, unobserved (None / NullObserver)": workflow(chain, NullObserver),
        "workflow, reporting (RecordingObserver)": workflow(chain, RecordingObserver),
    }
    print(f"{STEPS}-step chain, best of {REPEATS} x {LOOPS} runs, Python {sys.version.split()[0]}")
    print(f"  {'plain await':<44} {base:7.3f} µs/step")
    for name, fn in runs.items():
        us = await best_us_per_step(fn)
        print(f"  {name:<44} {us:7.3f} µs/step  {us / base:6.1f}x plain await")
    total, own = import_times_ms("tui_assist.workflow", "tui_assist.workflow")
    print()
    print(f"  python -X importtime -c 'import tui_assist.workflow': {total:.1f} ms cumulative")
    print(f"    of which the engine's own modules:                {own:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
