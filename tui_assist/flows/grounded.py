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

Modules: `grounded_state` (state, config, audit line), `grounded_steps` (leaves, composition),
`grounded_index` (the FTS5 corpus index), `grounded_sql` (the read-only `sql_query` tool), and
this one: running a question, approving a held run, and the public names.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_assist.core.observer import TurnObserver
from tui_assist.flows.grounded_index import CorpusIndex
from tui_assist.flows.grounded_sql import SqlSource
from tui_assist.flows.grounded_state import (
    DEFAULT_APPROVAL_RULES,
    DEFAULT_TOKEN_BUDGET,
    FLOW_NAME,
    MAX_ATTEMPTS,
    MAX_DATA_CALLS,
    MAX_QUESTION_CHARS,
    OUTCOMES,
    RELEVANCE_FLOOR,
    ROUTE_LABELS,
    TOP_K,
    ApprovalRule,
    FlowState,
    GroundedConfig,
    Leaves,
    Outcome,
    Passage,
    RouteLabel,
    SqlCall,
    audit_line,
    load_glossary,
)
from tui_assist.flows.grounded_steps import (
    GroundedDeps,
    GroundedError,
    GroundedFlow,
    ReleaseStep,
    build_grounded_flow,
    check_budget,
    cited_ids,
    estimate_tokens,
    extractive_answer,
    rephrase_with_glossary,
)
from tui_assist.workflow import RouteError, Step, run_reporting

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.store.db import Store

__all__ = [
    "DEFAULT_APPROVAL_RULES",
    "DEFAULT_TOKEN_BUDGET",
    "FLOW_NAME",
    "MAX_ATTEMPTS",
    "MAX_DATA_CALLS",
    "MAX_QUESTION_CHARS",
    "OUTCOMES",
    "RELEVANCE_FLOOR",
    "ROUTE_LABELS",
    "TOP_K",
    "ApprovalError",
    "ApprovalRule",
    "Deliver",
    "FlowState",
    "GroundedConfig",
    "GroundedDeps",
    "GroundedError",
    "GroundedFlow",
    "GroundedRun",
    "Leaves",
    "Outcome",
    "Passage",
    "RouteLabel",
    "SqlCall",
    "approve_run",
    "audit_line",
    "build_grounded_flow",
    "check_budget",
    "cited_ids",
    "estimate_tokens",
    "extractive_answer",
    "format_run",
    "load_glossary",
    "rephrase_with_glossary",
    "run_grounded",
]

# --- Running -------------------------------------------------------------------------------------

Deliver = Callable[["FlowState"], Awaitable[None]]
"""Called with a released run's state once it is stored (e.g. to send the drafted email)."""


@dataclass(frozen=True, slots=True)
class GroundedRun:
    """A finished (or held) run: its state and its audit line."""

    state: FlowState
    audit: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The state's fields plus `audit`: what `flow grounded --json` prints."""
        return {**self.state.model_dump(mode="json"), "audit": self.audit}


def format_run(state: FlowState) -> str:
    """A run as text for a terminal: the answer and its sources, or what stopped the run.

    Args:
        state: The run's state.

    Returns:
        The text, ending with a newline.
    """
    match state.outcome:
        case "answered" | "unverified":
            return f"{state.answer}\n{_sources(state)}"
        case "awaiting_approval":
            return (
                f"Draft held for approval ({', '.join(state.approval_reasons)}); nothing was sent.\n\n"
                f"{state.draft}\n{_sources(state)}\nApprove with: tui-assist flow approve {state.run_id}\n"
            )
        case "out_of_scope":
            return f"Out of scope: {state.note}.\n"
        case "no_relevant_documents":
            return f"No relevant documents: {state.note}.\n"
        case "budget_exhausted":
            return f"Budget exhausted: {state.note}.\n"
        case "cancelled":
            return "Cancelled.\n"
        case _:
            return f"Error: {state.error}\n"


def _sources(state: FlowState) -> str:
    lines = [
        f"  [{s.chunk_id}] {s.title}{' > ' + s.heading if s.heading else ''}"
        if isinstance(s, Passage)
        else f"  [{s.id}] {s.query}"
        for s in state.cited_sources()
    ]
    return "\nSources:\n" + "\n".join(lines) + "\n" if lines else ""


def _record_error(state: FlowState, exc: BaseException) -> None:
    state.outcome = "error"
    if isinstance(exc, RouteError):
        state.error = f"validation failure: {exc}"
    else:
        state.error = str(exc) or type(exc).__name__


async def _finish(
    state: FlowState, *, store: Store | None, audit_path: Path | None, expect_outcome: str | None = None
) -> dict[str, Any]:
    line = audit_line(state)
    if store is not None:
        await store.save_flow_run(
            run_id=state.run_id,
            flow=FLOW_NAME,
            outcome=state.outcome or "error",
            state=state.model_dump(mode="json"),
            audit=line,
            expect_outcome=expect_outcome,
        )
    if audit_path is not None:
        audit_path.parent.mkdir(parents=True, exist_ok=True)
        with audit_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    return line


async def run_grounded(
    question: str,
    *,
    index: CorpusIndex,
    sql: SqlSource | None = None,
    glossary: Mapping[str, str] | None = None,
    leaves: Leaves = "rules",
    provider: Provider | None = None,
    observer: TurnObserver | None = None,
    store: Store | None = None,
    config: GroundedConfig | None = None,
    caller: str = "local",
    run_id: str | None = None,
    deliver: Deliver | None = None,
    audit_path: Path | None = None,
    parent_id: str | None = None,
    classifier: Step[FlowState, str] | None = None,
) -> GroundedRun:
    """Run the grounded flow on one question, store it, and return its state and audit line.

    Every closed outcome is a return, not an exception: a budget stop, an invalid classifier
    label or a failed model call end the run (`budget_exhausted`, `error`) with its state stored.
    A cancel stores the run as `cancelled` and propagates.

    Args:
        question: What the user asked.
        index: The corpus index (refreshed by the caller).
        sql: The user's database, for the `data` route.
        glossary: Alias → corpus term, for the rules rephraser and classifier.
        leaves: `rules` or `model`.
        provider: The model backend; required by `model` leaves.
        observer: Where node events go (the flow panel, a recorder); None runs unobserved.
        store: Where the run's state and audit line are saved.
        config: Limits and approval rules.
        caller: Who asked (an id for the audit line).
        run_id: The run's id (a fresh one by default).
        deliver: Called with the state once a released answer is stored (never for a held run).
        audit_path: A JSONL file to append the audit line to, as well.
        parent_id: The node the flow's node hangs under (e.g. a turn's).
        classifier: A replacement classifier (tests).

    Returns:
        The run.

    Raises:
        ValueError: when the question is blank or too long, or `model` leaves have no provider.
        asyncio.CancelledError: when the run is cancelled (after storing it).
    """
    if not question.strip():
        raise ValueError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    if leaves == "model" and provider is None:
        raise ValueError("model leaves need a provider")
    config = config or GroundedConfig()
    deps = GroundedDeps(index=index, sql=sql, glossary=dict(glossary or {}), config=config, leaves=leaves)
    state = FlowState(
        run_id=run_id or uuid.uuid4().hex[:16],
        question=question,
        caller=caller,
        token_budget=config.token_budget,
        model=provider.model if leaves == "model" and provider is not None else "rules",
    )
    flow = build_grounded_flow(deps, classifier=classifier)
    started = time.monotonic()
    try:
        await run_reporting(
            flow, state, observer, provider=provider if leaves == "model" else None, parent_id=parent_id
        )
    except asyncio.CancelledError:
        state.outcome = "cancelled"
        state.duration_ms = int((time.monotonic() - started) * 1000)
        with contextlib.suppress(Exception):
            await asyncio.shield(_finish(state, store=store, audit_path=audit_path))
        raise
    except Exception as exc:  # every failure is the run's `error` outcome, stored like any other
        _record_error(state, exc)
    if state.outcome is None:  # a branch that ended without deciding is a bug, not an answer
        state.outcome, state.error = "error", "the flow ended without an outcome"
    state.duration_ms = int((time.monotonic() - started) * 1000)
    line = await _finish(state, store=store, audit_path=audit_path)
    if deliver is not None and state.outcome in ("answered", "unverified"):
        await deliver(state)
    return GroundedRun(state, line)


class ApprovalError(Exception):
    """A run cannot be approved (unknown id, another flow, or not awaiting approval)."""


async def approve_run(
    run_id: str,
    *,
    store: Store,
    observer: TurnObserver | None = None,
    deliver: Deliver | None = None,
    audit_path: Path | None = None,
) -> GroundedRun:
    """Approve a held run: release its draft, store the completed run, then deliver it.

    The completion is a compare-and-set on the stored outcome, so approving the same run twice
    (even from two processes) completes it once; the second attempt raises.

    Args:
        run_id: The run's id, or a unique prefix of it.
        store: The store holding the run.
        observer: Where the release's node events go.
        deliver: Called with the released state once it is stored.
        audit_path: A JSONL file to append the updated audit line to, as well.

    Returns:
        The completed run (`answered`, or `unverified` when its citations were flagged).

    Raises:
        ApprovalError: when the run is unknown, not a grounded run, or not awaiting approval.
    """
    from tui_assist.store.db import StoreError

    try:
        row = await store.get_flow_run(run_id)
    except StoreError as exc:
        raise ApprovalError(str(exc)) from exc
    if row is None:
        raise ApprovalError(f"no flow run with id {run_id!r}")
    if row.flow != FLOW_NAME:
        raise ApprovalError(f"run {row.run_id} is a {row.flow} run, not a {FLOW_NAME} run")
    if row.outcome != "awaiting_approval":
        raise ApprovalError(f"run {row.run_id} is {row.outcome}, not awaiting approval")
    state = FlowState.model_validate(row.state)
    state.approved = True
    await run_reporting(GroundedFlow(ReleaseStep(), label=f"{FLOW_NAME} (approved)"), state, observer)
    try:
        line = await _finish(state, store=store, audit_path=audit_path, expect_outcome="awaiting_approval")
    except StoreError as exc:
        raise ApprovalError(str(exc)) from exc
    if deliver is not None:
        await deliver(state)
    return GroundedRun(state, line)
