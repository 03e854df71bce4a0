"""First turn in a big repository: `ask --json --yes` in a 20,000-file git repository vs a 10-file one.

Each sample is a fresh `python -m tui_assist ask --json --yes PROMPT` subprocess with a fresh data dir,
so the shadow-git snapshot before the turn is a first one (every file hashed): what a user pays on
the first turn in a repository. The model is the loopback fake (`tests/fakes/anthropic.py`), which
records when each request arrives; the clock starts just before the spawn. Figures:

- to the first model request: spawn to the fake receiving the turn's request;
- wall time to exit: spawn to the process's exit. A turn that changes no file does not wait for
  its snapshot (goal: <= 1.2x); with `--tool` the bash call waits for it, as it must.

Samples of the two repositories are interleaved, so load on the (shared) machine hits both alike;
medians and ranges are printed, and the ratio big/small of the medians (goals: first request
<= 1.5x; wall time to exit <= 1.2x for a text answer). Bytecode is compiled once into a cache folder (`PYTHONPYCACHEPREFIX`) before sampling.

Run: `.venv/bin/python bench/bench_first_turn.py [--files N] [--runs N] [--tool] [--baseline DIR]`;
`--tool` makes the first reply a bash call (which must wait for the snapshot) followed by the
answer; `--baseline DIR` also samples another checkout (e.g. `git archive main | tar -x -C DIR`),
interleaved, for before/after figures from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from table import print_rows  # bench/table.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.anthropic import FakeAnthropic, RecordedRequest, Reply, ToolUse  # noqa: E402


def build_repo(root: Path, files: int) -> Path:
    """A committed git repository of `files` small source files in nested folders."""
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n")
    for i in range(files):
        folder = root / "src" / f"pkg{i % 50:02d}" / f"mod{i % 13:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i:05d}.py").write_text(f'"""Module {i}."""\n\n' + f"VALUE_{i} = {i}\n" * 12)
    git = ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return root


def bench_env(home: Path, fake: FakeAnthropic) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TUI_ASSIST_", "OPENAI_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(home / name.lower())
    env["ANTHROPIC_CONFIG_DIR"] = str(home / "anthropic")
    env["ANTHROPIC_API_KEY"] = "bench-key"
    env["ANTHROPIC_BASE_URL"] = fake.base_url
    return env


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process `pid` has used so far, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Sample:
    first: float
    """Seconds from spawn to the first model request."""
    total: float
    """Seconds from spawn to the process's exit (its wall time)."""
    first_cpu: float
    """CPU seconds the process had used when its first model request arrived."""


def sample(
    repo: Path, data: Path, env: dict[str, str], fake: FakeAnthropic, tool: bool, source: Path = ROOT
) -> Sample:
    """One `ask --yes` run in `repo` with data dir `data`, of the checkout in `source`."""
    child: list[subprocess.Popen[str]] = []
    cpu: list[float] = []

    def first(reply: Reply) -> Callable[[RecordedRequest], Reply]:
        def step(request: RecordedRequest) -> Reply:
            cpu.append(cpu_seconds(child[0].pid))
            return reply

        return step

    if tool:
        fake.add(first(Reply([ToolUse("bash", {"command": "echo hi > touched.txt"})])), Reply("Done."))
    else:
        fake.add(first(Reply("Hello.")))
    seen = len(fake.requests)
    start = time.perf_counter()
    child.append(
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tui_assist",
                "ask",
                "--json",
                "--yes",
                "--workdir",
                str(repo),
                "say hello",
            ],
            env=dict(env, TUI_ASSIST_HOME=str(data)),
            cwd=source,  # `python -m` finds the package in its working directory first
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    )
    _, err = child[0].communicate(timeout=300)
    total = time.perf_counter() - start
    if child[0].returncode != 0:
        raise RuntimeError(f"ask failed ({child[0].returncode}): {err}")
    request = next(r for r in fake.requests[seen:] if r.path == "/v1/messages")
    (repo / "touched.txt").unlink(missing_ok=True)
    return Sample(request.received - start, total, cpu[0])


def figure(samples: list[float]) -> str:
    return f"median {1000 * statistics.median(samples):5.0f} ms  (range {1000 * min(samples):.0f}-{1000 * max(samples):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tool", action="store_true", help="the first reply is a bash call")
    parser.add_argument("--baseline", type=Path, help="another checkout to sample alike (before/after)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-first-turn-") as tmp, FakeAnthropic() as fake:
        home = Path(tmp)
        small = build_repo(home / "small", 10)
        big = build_repo(home / "big", args.files)
        env = bench_env(home, fake)
        sources = {"": ROOT, **({"baseline ": args.baseline.resolve()} if args.baseline else {})}
        runs: dict[str, list[Sample]] = {}
        for n in range(args.runs + 1):  # the first round warms the bytecode cache and the OS file cache
            for label, source in sources.items():
                for name, repo in (("small", small), ("big", big)):
                    got = sample(repo, home / f"data-{label}{name}-{n}", env, fake, args.tool, source)
                    if n:
                        runs.setdefault(label + name, []).append(got)
    kind = "a bash call, then the answer" if args.tool else "a text answer"
    rows = [("samples", f"{args.runs} each, interleaved; fresh data dir each (first snapshot); {kind}")]
    for label in sources:
        small_runs, big_runs = runs[label + "small"], runs[label + "big"]
        for what, pick in (
            ("to the first request", lambda s: s.first),
            ("wall time to exit", lambda s: s.total),
        ):
            a, b = [pick(s) for s in small_runs], [pick(s) for s in big_runs]
            goal = (
                "  (goal <= 1.5x)"
                if what == "to the first request"
                else ""
                if args.tool
                else "  (goal <= 1.2x)"
            )
            rows += [
                (f"{label}10 files: {what}", figure(a)),
                (f"{label}{args.files:,} files: {what}", figure(b)),
                (f"{label}{what}, big/small", f"{statistics.median(b) / statistics.median(a):.2f}x{goal}"),
            ]
    print_rows(rows)


if __name__ == "__main__":
    main()
