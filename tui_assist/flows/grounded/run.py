# pyright: strict
"""Running the grounded flow: one question end to end, approving a held run, and the text of a run.

Every run is stored with its one audit line (see `tui_assist.flows.grounded` for the design).
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
from tui_assist.flows.grounded.base import GroundedDeps
from tui_assist.flows.grounded.finish import ReleaseStep
from tui_assist.flows.grounded.index import CorpusIndex
from tui_assist.flows.grounded.sql import SqlSource
from tui_assist.flows.grounded.state import (
    FLOW_NAME,
    MAX_QUESTION_CHARS,
    FlowState,
    GroundedConfig,
    Leaves,
    Passage,
    audit_line,
)
from tui_assist.flows.grounded.steps import GroundedFlow, build_grounded_flow
from tui_assist.workflow import RouteError, Step, run_reporting

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.store.db import Store

__all__ = ["ApprovalError", "Deliver", "GroundedRun", "approve_run", "format_run", "run_grounded"]


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


def format_run(state: FlowState, *, approve_flags: str = "") -> str:
    """A run as text for a terminal: the answer and its sources, or what stopped the run.

    Args:
        state: The run's state.
        approve_flags: Flags the `flow approve` hint must repeat (e.g. ` --data-dir D`).

    Returns:
        The text, ending with a newline.
    """
    match state.outcome:
        case "answered" | "unverified":
            return f"{state.answer}\n{_sources(state)}"
        case "awaiting_approval":
            return (
                f"Draft held for approval ({', '.join(state.approval_reasons)}); nothing was sent.\n\n"
                f"{state.draft}\n{_sources(state)}\n"
                f"Approve with: tui-assist flow approve {state.run_id}{approve_flags}\n"
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
