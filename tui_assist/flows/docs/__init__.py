# pyright: strict
"""Documentation tasks (issue #7): which control policy answers docuctl questions best?

Modules: `corpus` (the pages, glossary, cases, tasks and the two tools, plus the packaged
fixtures in `data/`), `runtime` (the bounded decision runtime every policy acts through),
`policies` (the scripted control policies), `model_policy` (the provider as a policy), `bench`
(every policy on the same cases, graded by one checker) and `commands` (`tui-assist bench docs`).
This package's names are what other packages use.
"""

from __future__ import annotations

from tui_assist.flows.docs.bench import (
    SCRIPTED_POLICIES,
    BenchReport,
    PolicyName,
    outcome,
    run_bench,
    run_policy,
)
from tui_assist.flows.docs.corpus import Case, Corpus, FixtureError, Fixtures, Task, load_fixtures
from tui_assist.flows.docs.runtime import PolicyResult

__all__ = [
    "SCRIPTED_POLICIES",
    "BenchReport",
    "Case",
    "Corpus",
    "FixtureError",
    "Fixtures",
    "PolicyName",
    "PolicyResult",
    "Task",
    "load_fixtures",
    "outcome",
    "run_bench",
    "run_policy",
]
