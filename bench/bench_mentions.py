"""@-mention completion on a 100,000-file tree: the first listing, then each keystroke.

Run: `python bench/bench_mentions.py [--files N] [--keep]`. A monorepo-like tree (apps, packages
and services with src/, tests/, components, hooks, docs; TypeScript, Python, Go, Markdown) is
written to a temporary directory. Figures:

- first listing: `list_candidates` with git (`git ls-files -co --exclude-standard`, after
  `git add -A`, so the files are tracked) and with the walk (a copy of the tree that is not a
  repository); then the `FuzzyMatcher` index built over the listing (the TUI does both in a
  worker thread when the prompt opens);
- per keystroke: each query is typed one character at a time against one matcher, as the
  completion list would see it, and the 20 best completions are computed for every prefix;
  median and max per keystroke, per query and over all of them. The goal is 50 ms per keystroke
  after the first listing. Each query is typed again with a fresh matcher (no narrowing from the
  previous keystroke), to show what narrowing saves.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def type_queries(matcher: FuzzyMatcher, *, fresh_each: bool) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    everything: list[float] = []
    for query in QUERIES:
        times: list[float] = []
        for end in range(1, len(query) + 1):
            if fresh_each:
                matcher._recent.clear()  # no narrowing: every keystroke scans from scratch
            results, took = timed(matcher.search, query[:end], 20)
            times.append(took)
        everything += times
        best = results[0].path if results else "(none)"
        rows.append(
            (
                f"  {query!r} ({len(query)} keys)",
                f"median {1000 * statistics.median(times):5.1f} ms, max {1000 * max(times):5.1f} ms; top: {best}",
            )
        )
    rows.append(
        (
            f"  all {len(everything)} keystrokes",
            f"median {1000 * statistics.median(everything):5.1f} ms, max {1000 * max(everything):5.1f} ms",
        )
    )
    return rows


def bench(count: int, keep: bool) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
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
        rows += type_queries(matcher, fresh_each=False)
        rows.append(("typing, no narrowing (fresh each key)", ""))
        rows += type_queries(matcher, fresh_each=True)
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
    args = parser.parse_args()
    rows = bench(args.files, args.keep)
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  value")
    print(f"{'-' * width}  {'-' * 40}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
