"""Headless start-up: `ask` spawn to its first model request vs `python -c "import anthropic"`.

A script calling `tui-assist ask` pays the interpreter, the SDK's import and whatever else `ask` does
before it sends the request (settings, the store, the instructions, the tools, the snapshot). The
goal (issue 29) is that this is about one `import anthropic`: ask's time to its first request
within 1.2x of a bare interpreter importing the SDK and exiting.

Each sample is a fresh subprocess, the two kinds interleaved so load on the (shared) machine hits
both alike; medians and ranges are printed. `ask` runs in a 10-file git repository against the
loopback fake (`tests/fakes/anthropic.py`, which records when each request arrives), with one data
dir for all its samples (as a script's repeated calls would have). Bytecode is compiled once into a
cache folder (`PYTHONPYCACHEPREFIX`) before sampling.

Run: `.venv/bin/python bench/bench_ask_startup.py [--runs N] [--baseline DIR]`; `--baseline DIR`
also samples another checkout's `ask` (e.g. `git archive main | tar -x -C DIR`), interleaved.
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

from bench_first_turn import ROOT, Sample, bench_env, build_repo, figure, sample
from table import print_rows  # bench/table.py (the script's folder is on sys.path)

from tests.fakes.anthropic import FakeAnthropic


def import_sdk(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the exit of `python -c "import anthropic"`, and its CPU seconds."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", "import anthropic"], env=env, cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise RuntimeError("python -c 'import anthropic' failed")
    return took, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path, help="another checkout to sample alike (before/after)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ask-startup-") as tmp, FakeAnthropic() as fake:
        home = Path(tmp)
        repo = build_repo(home / "repo", 10)
        env = bench_env(home, fake)
        sdk: list[float] = []
        sdk_cpu: list[float] = []
        sources = {"ask": ROOT, **({"baseline ask": args.baseline.resolve()} if args.baseline else {})}
        asks: dict[str, list[Sample]] = {label: [] for label in sources}
        for n in range(args.runs + 1):  # the first round warms the bytecode cache and the data dir
            bare, bare_cpu = import_sdk(env)
            got = {
                label: sample(repo, home / label, env, fake, False, source)
                for label, source in sources.items()
            }
            if n:
                sdk.append(bare)
                sdk_cpu.append(bare_cpu)
                for label, one in got.items():
                    asks[label].append(one)
    sdk_median, cpu_median = statistics.median(sdk), statistics.median(sdk_cpu)
    rows = [
        ("samples", f"{args.runs} each, interleaved (a shared, loaded machine: read the ranges)"),
        ('python -c "import anthropic"', figure(sdk)),
        ('CPU of python -c "import anthropic"', figure(sdk_cpu)),
    ]
    for label, samples in asks.items():
        first = [s.first for s in samples]
        cpu = [s.first_cpu for s in samples]
        rows += [
            (f"{label}: spawn to the first request", figure(first)),
            (f"{label} / import anthropic", f"{statistics.median(first) / sdk_median:.2f}x  (goal <= 1.2x)"),
            (f"CPU of {label} to its first request", figure(cpu)),
            (f"CPU, {label} / import anthropic", f"{statistics.median(cpu) / cpu_median:.2f}x"),
        ]
    print_rows(rows)


if __name__ == "__main__":
    main()
