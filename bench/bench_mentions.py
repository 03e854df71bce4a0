"""@-mention completion on a 100,000-file tree: the first listing, then each keystroke.

Run: `python bench/bench_mentions.py [--files N] [--keep] [--quality]`. A monorepo-like tree (apps, packages
and services with src/, tests/, components, hooks, docs; TypeScript, Python, Go, Markdown) is
written to a temporary directory. Figures:

- first listing: `list_candidates` with git (`git ls-files -co --exclude-standard`, after
  `git add -A`, so the files are tracked) and with the walk (a copy of the tree that is not a
  repository); then the `FuzzyMatcher` index built over the listing (the TUI does both in a
  worker thread when the prompt opens);
- per keystroke: each query is typed one character at a time against one matcher, as the
  completion list would see it, and the 20 best completions are computed for every prefix;
  median and max per keystroke, per query and over all of them, in wall-clock time and in the
  thread's CPU time (on a shared machine the difference is time spent waiting for a core; the
  load average is printed before and after). The goal is 50 ms per keystroke after the first
  listing. Each query is typed again with every keystroke starting from scratch (no narrowing
  from the previous one), to show what narrowing saves;
- with `--quality`: how often the completions match those of a matcher that scores every match
  (slow: it is the reason the pre-selection exists).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import print_rows  # bench/table.py (the script's folder is on sys.path)

from tui_assist.session.mentions import FuzzyMatcher, list_candidates  # noqa: E402

QUERIES = [
    "readme",
    "button",
    "src/comp/butt",
    "userservice",
    "test_auth",
    "index.ts",
    "billingapi",
    "hooks/useauth",
    "pkg/orders/handler.go",
    "zzq",  # nothing matches
]

WORDS = (
    "auth user account billing invoice order cart payment search profile settings session token "
    "cache queue worker report export import upload download notify email message chat admin "
    "dashboard metrics audit config router client server handler service model schema store "
    "button modal table form input select dialog menu tooltip avatar badge card layout header"
).split()
EXTENSIONS = {
    "apps": [".tsx", ".ts", ".css", ".test.ts"],
    "packages": [".ts", ".ts", ".test.ts", ".json"],
    "services": [".go", ".go", "_test.go"],
    "tools": [".py", ".py", ".sh"],
    "docs": [".md"],
}


def make_paths(count: int, seed: int = 16) -> list[str]:
    """Deterministic, plausible relative file paths of a large monorepo (about 12 files a folder)."""
    rng = random.Random(seed)
    projects = {area: [f"{rng.choice(WORDS)}-{rng.choice(WORDS)}" for _ in range(40)] for area in EXTENSIONS}
    paths: set[str] = {"README.md", "package.json", "go.mod", "pyproject.toml"}
    while len(paths) < count:
        area = rng.choice(list(EXTENSIONS))
        project = rng.choice(projects[area])
        folder = rng.choice(["src", "src/components", "src/hooks", "src/api", "src/utils", "tests", "lib"])
        if area == "services":
            folder = rng.choice(["cmd", "internal/handler", "internal/store", "pkg/orders", "pkg/users"])
        if area == "docs":
            folder = rng.choice(["guides", "reference", "adr"])
        sub = rng.choice(WORDS[:24]) if rng.random() < 0.6 else ""
        stem_words = [rng.choice(WORDS) for _ in range(rng.randint(1, 3))]
        ext = rng.choice(EXTENSIONS[area])
        if folder.endswith("hooks"):
            stem = "use" + "".join(word.capitalize() for word in stem_words)
        elif ext in (".tsx", ".css"):
            stem = "".join(word.capitalize() for word in stem_words)
        elif ext.endswith(".py") or area == "services":
            stem = "_".join(stem_words)
        else:
            stem = rng.choice(["index", "-".join(stem_words), "-".join(stem_words), "README"])
        parts = [area, project, folder, sub, stem + ext]
        paths.add("/".join(part for part in parts if part))
    return sorted(paths)


def write_tree(root: Path, paths: list[str]) -> None:
    for path in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()


def timed(func, *args, **kwargs):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - started


def figures(wall: list[float], cpu: list[float]) -> str:
    return (
        f"median {1000 * statistics.median(wall):5.1f} ms, max {1000 * max(wall):5.1f} ms"
        f"  (CPU median {1000 * statistics.median(cpu):5.1f}, max {1000 * max(cpu):5.1f})"
    )


def type_queries(matcher: FuzzyMatcher, *, narrowing: bool) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    all_wall: list[float] = []
    all_cpu: list[float] = []
    for query in QUERIES:
        wall: list[float] = []
        cpu: list[float] = []
        results = []
        for end in range(1, len(query) + 1):
            if not narrowing:
                matcher._recent.clear()  # every keystroke starts from scratch
            started, started_cpu = time.perf_counter(), time.thread_time()
            results = matcher.search(query[:end], 20)
            wall.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
        all_wall += wall
        all_cpu += cpu
        best = results[0].path if results else "(none)"
        rows.append((f"  {query!r} ({len(query)} keys)", f"{figures(wall, cpu)}; top: {best}"))
    rows.append((f"  all {len(all_wall)} keystrokes", figures(all_wall, all_cpu)))
    return rows


def quality(paths: tuple[str, ...], matcher: FuzzyMatcher) -> list[tuple[str, str]]:
    """How often the pre-selection finds what scoring every match would rank first."""
    exhaustive = FuzzyMatcher(paths, score_all=len(paths), verify_all=len(paths))
    same_best = total = 0
    overlaps: list[float] = []
    for query in QUERIES:
        matcher._recent.clear()
        for end in range(1, len(query) + 1):
            expected, got = exhaustive.search(query[:end]), matcher.search(query[:end])
            if expected:
                total += 1
                same_best += expected[0].score == got[0].score
                overlaps.append(len({c.path for c in expected} & {c.path for c in got}) / len(expected))
    return [
        ("  best completion as good as exhaustive", f"{same_best} of {total} keystrokes"),
        ("  top 20 shared with exhaustive (mean)", f"{100 * statistics.mean(overlaps):.0f} %"),
    ]


def bench(count: int, keep: bool, check_quality: bool) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = [
        ("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    ]
    paths = make_paths(count)
    tmp = Path(tempfile.mkdtemp(prefix="bench-mentions-"))
    try:
        repo, plain = tmp / "repo", tmp / "plain"
        _, took = timed(write_tree, plain, paths)
        rows.append((f"write {count:,} files", f"{took:.1f} s"))
        shutil.copytree(plain, repo)
        git = ["git", "-c", "init.defaultBranch=main"]
        subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
        (repo / ".gitignore").write_text("*.log\n")
        _, took = timed(subprocess.run, [*git, "add", "-A"], cwd=repo, check=True)
        rows.append(("git add -A", f"{took:.1f} s"))

        git_listing, took = timed(list_candidates, repo)
        rows.append(
            (
                "first listing, git",
                f"{1000 * took:6.0f} ms ({len(git_listing.paths):,} paths, {git_listing.source})",
            )
        )
        walk_listing, took = timed(list_candidates, plain)
        rows.append(
            (
                "first listing, walk",
                f"{1000 * took:6.0f} ms ({len(walk_listing.paths):,} paths, {walk_listing.source})",
            )
        )
        matcher, took = timed(FuzzyMatcher, git_listing.paths)
        rows.append(("index the listing (FuzzyMatcher)", f"{1000 * took:6.0f} ms"))

        rows.append(("typing, keystroke after keystroke", ""))
        rows += type_queries(matcher, narrowing=True)
        rows.append(("typing, each keystroke from scratch", ""))
        rows += type_queries(matcher, narrowing=False)
        if check_quality:
            rows.append(("ranking against scoring every match", ""))
            rows += quality(git_listing.paths, matcher)
        rows.append(("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())))
    finally:
        if keep:
            rows.append(("tree kept in", str(tmp)))
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary tree")
    parser.add_argument("--quality", action="store_true", help="compare the ranking with scoring every match")
    args = parser.parse_args()
    print_rows(bench(args.files, args.keep, args.quality))


if __name__ == "__main__":
    main()
