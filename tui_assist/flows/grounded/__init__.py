# pyright: strict
"""Grounded answers over your own documents: a routed, bounded, audited flow (issue #8).

The flow sits between a fixed chain and a free agent: the model makes bounded decisions inside a
structure drawn here, so every path can be read, tested and costed. Its shape, as the flow panel
draws it:

```
grounded
└─ Route(classify → docs | data | unsupported)
   ├─ docs:        Chain(retrieval loop, Route(relevant? → found: answer → finish | none: no documents))
   ├─ data:        Chain(query data (sql_query tool), finish)
   └─ unsupported: decline
finish = Chain(check citations, Chain(approval rules, Route(needs approval? → hold | release)))
```

Design decisions, each of which a test pins down:

- **State, not a transcript.** Steps pass one typed `FlowState` along and record every decision
  in a named field (`route`, `retrieval_attempts`, `rephrased`, `citations`, `needs_approval`...).
- **A closed route set.** The classifier returns one of `docs`, `data`, `unsupported`; the
  engine's `Route` refuses anything else (`RouteError`, outcome `error`). An unknown label is a
  validation failure, never a new route; declining is an explicit branch.
- **Bounded retrieval.** At most `max_attempts` (2) searches: the counter is in the loop
  condition, so the model can rephrase once but never decide to keep trying.
- **Budget before the spend.** Every model call first checks that the tokens used so far, plus a
  conservative estimate of the request and its full `max_tokens` reply, stay within the budget;
  otherwise the run ends `budget_exhausted` without making the call.
- **Citations are checked, not trusted.** Cited ids are crossed against the ids retrieval (or the
  SQL tool) actually returned; an answer citing nothing retrieved is flagged and its outcome is
  `unverified`.
- **Approval holds delivery.** Configurable rules (an answer that drafts an email, a question that
  asks for an action) set `needs_approval`; the run stops `awaiting_approval` with its state
  stored, and only `approve_run` releases the answer. The `deliver` hook runs only after the
  released state is stored.
- **One audit line per run**, with counts, ids and sizes only: never the question or the answer.

Leaves come in two kinds: `rules` (deterministic: corpus vocabulary classifier, glossary
rephrasing, extractive answers, a keyword SQL planner) and `model` (the configured provider,
e.g. `ScriptedProvider` offline or Claude through the SDK).

Modules: `state` (state, config, audit line), `steps` (the composition above) and its leaves in
`base`, `classify`, `retrieval` (docs route), `query_data` (data route) and `finish`, with
`model_calls` (budget-checked model calls); `index` (the FTS5 corpus index), `sql` (the read-only
`sql_query` tool), `run` (running a question, approving a held run) and `commands` (`tui-assist
flow grounded` and `flow approve`). This package's names are what the hosts use.
"""

from __future__ import annotations

from pathlib import Path

from tui_assist.flows.grounded.base import GroundedDeps
from tui_assist.flows.grounded.index import CorpusIndex, default_index_path
from tui_assist.flows.grounded.run import (
    ApprovalError,
    Deliver,
    GroundedRun,
    approve_run,
    format_run,
    run_grounded,
)
from tui_assist.flows.grounded.sql import SqlSource
from tui_assist.flows.grounded.state import (
    MAX_QUESTION_CHARS,
    OUTCOMES,
    ROUTE_LABELS,
    ApprovalRule,
    FlowState,
    GroundedConfig,
    Leaves,
    Outcome,
    Passage,
    RouteLabel,
    audit_line,
    load_glossary,
)
from tui_assist.flows.grounded.steps import build_grounded_flow

SAMPLE_CORPUS = Path(__file__).parent / "sample"
"""A short staff handbook shipped with the package: `flow grounded` answers from it by default."""

__all__ = [
    "MAX_QUESTION_CHARS",
    "OUTCOMES",
    "ROUTE_LABELS",
    "SAMPLE_CORPUS",
    "ApprovalError",
    "ApprovalRule",
    "CorpusIndex",
    "Deliver",
    "FlowState",
    "GroundedConfig",
    "GroundedDeps",
    "GroundedRun",
    "Leaves",
    "Outcome",
    "Passage",
    "RouteLabel",
    "SqlSource",
    "approve_run",
    "audit_line",
    "build_grounded_flow",
    "default_index_path",
    "format_run",
    "load_glossary",
    "run_grounded",
]
