"""`a.then(b)` type-checks only when a's output is b's input: mypy proves it both ways."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STEPS = """
from __future__ import annotations

from collections.abc import Sequence

from tui_assist.workflow import (
    Attempt, Candidate, Judgement, OrchestratorWorkers, Parallel, Refine, Refined, Route, Step,
    Synthesis, step,
)

@step
async def parse(text: str) -> int:
    return int(text)

@step
async def double(n: int) -> int:
    return n * 2

@step
async def render(n: int) -> str:
    return str(n)

@step
async def shout(text: str) -> str:
    return text.upper()

@step
async def describe(value: object) -> str:
    return repr(value)
"""

VALID = """
flow: Step[str, str] = parse.then(double).then(render).then(shout)
widened: Step[str, str] = parse.then(describe)  # a step taking `object` fits after anything

@step
async def sign(text: str) -> str:
    return "pos" if not text.startswith("-") else "neg"

routed: Step[str, str] = Route(sign, {"pos": shout, "neg": shout})

@step
async def longest(values: Sequence[str]) -> str:
    return max(values)

fanned: Step[str, str] = Parallel([shout, describe], longest)

@step
async def words(text: str) -> list[str]:
    return text.split()

@step
async def join(done: Synthesis[str, str, int]) -> str:
    return str(sum(done.results))

@step
async def length(word: str) -> int:
    return len(word)

planned: Step[str, str] = OrchestratorWorkers(words, length, join)

@step
async def draft(attempt: Attempt[str, str]) -> str:
    return attempt.input

@step
async def check(candidate: Candidate[str, str]) -> Judgement:
    return Judgement("pass")

refined: Step[str, Refined[str, Judgement]] = Refine(draft, check)
"""

MISWIRED = """
flow = parse.then(shout)  # parse returns int, shout takes str
"""


def _mypy(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "flow.py"
    source.write_text(textwrap.dedent(STEPS + body), encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(ROOT)}  # check against the source tree
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "--no-error-summary",
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def test_mypy_rejects_a_miswired_chain(tmp_path: Path) -> None:
    result = _mypy(tmp_path, MISWIRED)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, lines
    assert 'Argument 1 to "then" of "Step" has incompatible type "FunctionStep[str, str]"' in lines[0]
    assert 'expected "Step[int, str]"' in lines[0]


def test_mypy_accepts_well_wired_workflows(tmp_path: Path) -> None:
    result = _mypy(tmp_path, VALID)
    assert result.returncode == 0, result.stdout + result.stderr
