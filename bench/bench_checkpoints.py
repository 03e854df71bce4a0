"""Checkpoints benchmark: snapshot time on a workdir of many files, first and after a small change.

Run: `python bench/bench_checkpoints.py [--files N] [--runs N] [--first-runs N]`. The workdir is
built in a temporary directory (files of a few hundred bytes in nested folders, a `.gitignore` and
some ignored build output, as in a real project), the shadow repository lives in a data dir
beside it. Figures, each the median of several runs:

- first snapshot: an empty data dir, every file hashed and written (a fresh data dir per run);
- unchanged: the snapshot before the next turn when nothing changed (reuses the commit);
- one file changed: the snapshot after a turn that edited one file (the goal is under 100 ms);
- one file added, one deleted;
- plan_restore of the last turn, and restore (rewinding a one-file turn);
- shadow repository size, before and after `prune` packs it.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from table import print_rows  # bench/table.py (the script's folder is on sys.path)

from tui_assist.session.checkpoints import Checkpoints, TurnSnapshots


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def build_workdir(root: Path, files: int) -> list[Path]:
    """`files` tracked files in `src/pkgNN/modNN/`, plus ignored build output."""
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    made: list[Path] = []
    for i in range(files):
        folder = root / "src" / f"pkg{i % 50:02d}" / f"mod{i % 13:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file{i:05d}.py"
        path.write_text(f'"""Module {i}."""\n\n' + f"VALUE_{i} = {i}\n" * 12)
        made.append(path)
    build = root / "build"
    build.mkdir()
    for i in range(500):
        (build / f"out{i}.o").write_bytes(b"\0" * 256)
    return made


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await action()
    return time.perf_counter() - started


def ms(samples: list[float]) -> str:
    return f"{1000 * statistics.median(samples):.1f} ms (min {1000 * min(samples):.1f}, n={len(samples)})"


async def bench(files: int, runs: int, first_runs: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = [("files in the workdir", f"{files:,} (+500 ignored)")]
    with tempfile.TemporaryDirectory(prefix="bench-checkpoints-") as tmp:
        workdir = Path(tmp) / "project"
        workdir.mkdir()
        made = build_workdir(workdir, files)

        first: list[float] = []
        for run in range(first_runs):
            data = Path(tmp) / f"data-first-{run}"
            cps = Checkpoints(data, workdir)
            first.append(await timed(lambda cps=cps: cps.snapshot("before:first")))
            if run < first_runs - 1:
                shutil.rmtree(data)
        rows.append(("first snapshot", ms(first)))

        size_loose = await cps.size_bytes()
        unchanged = [await timed(lambda: cps.snapshot("before:idle")) for _ in range(runs)]
        rows.append(("snapshot, nothing changed", ms(unchanged)))

        changed: list[float] = []
        for run in range(runs):
            made[run * 97 % len(made)].write_text(f"EDITED = {run}\n")
            changed.append(await timed(lambda: cps.snapshot("after:edit")))
        rows.append(("snapshot, one file changed", ms(changed)))

        churn: list[float] = []
        for run in range(runs):
            (workdir / "src" / f"new{run}.py").write_text("NEW = 1\n")
            made[run * 89 % len(made) + 1].unlink(missing_ok=True)
            churn.append(await timed(lambda: cps.snapshot("after:churn")))
        rows.append(("snapshot, one added + one deleted", ms(churn)))

        planned: list[float] = []
        restored: list[float] = []
        for run in range(runs):
            before = await cps.snapshot(f"before:t{run}")
            made[run * 31 % len(made) + 2].write_text("TURN = 1\n")
            after = await cps.snapshot(f"after:t{run}")
            turn = TurnSnapshots(before.commit, after.commit)
            started = time.perf_counter()
            plan = await cps.plan_restore(before.commit, [turn])
            planned.append(time.perf_counter() - started)
            started = time.perf_counter()
            await cps.restore(plan)
            restored.append(time.perf_counter() - started)
        rows.append(("plan_restore of a one-file turn", ms(planned)))
        rows.append(("restore of a one-file turn", ms(restored)))

        count = len(await cps.snapshots())
        rows.append((f"shadow repository ({count} snapshots, loose objects)", fmt_bytes(size_loose)))
        started = time.perf_counter()
        pruned = await cps.prune(max_age=timedelta(days=30), max_count=10)
        took = time.perf_counter() - started
        rows.append(
            (
                f"prune to 10 (removed {pruned.removed}) + gc",
                f"{1000 * took:.0f} ms, repository now {fmt_bytes(await cps.size_bytes())}",
            )
        )
        after_gc = [await timed(lambda: cps.snapshot("after:gc")) for _ in range(runs)]
        rows.append(("snapshot, nothing changed, after gc", ms(after_gc)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15, help="runs of each small-change figure")
    parser.add_argument("--first-runs", type=int, default=3, help="runs of the first snapshot")
    args = parser.parse_args()
    print_rows(asyncio.run(bench(args.files, args.runs, args.first_runs)))


if __name__ == "__main__":
    main()
