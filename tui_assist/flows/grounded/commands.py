# pyright: strict
"""`tui-assist flow grounded` and `tui-assist flow approve`, minus argument parsing.

Each function takes its parameters and the streams to write to, and returns the exit code.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tui_assist.flows.grounded.index import CorpusIndex, default_index_path
from tui_assist.flows.grounded.run import ApprovalError, GroundedRun, approve_run, format_run, run_grounded
from tui_assist.flows.grounded.sql import SqlSource
from tui_assist.flows.grounded.state import MAX_QUESTION_CHARS, Leaves, load_glossary

__all__ = ["flow_approve", "flow_grounded"]

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.store.db import Store


async def flow_grounded(
    *,
    corpus: Path | None,
    data: Path | None,
    question: str,
    as_json: bool,
    leaves: str | None,
    store: Store,
    out: TextIO,
    err: TextIO,
    provider_factory: Callable[[], Provider] | None = None,
    approve_flags: str = "",
) -> int:
    """`tui-assist flow grounded`: answer a question from a folder of documents (and a database).

    The corpus index lives under the store's data dir (one file per corpus folder) and is
    refreshed incrementally before the run. The run, its state and its audit line are stored;
    a run held for approval is completed later by `flow_approve`.

    Prints the answer with its sources (or what stopped the run); with `as_json`, one JSON object:
    the final state's fields plus `audit` (the audit line).

    Args:
        corpus: The folder of Markdown / text documents (an optional `glossary.json` inside);
            None: the sample handbook shipped with the package.
        data: A SQLite file for data questions, opened read-only.
        question: The question.
        as_json: Print JSON instead of text.
        leaves: `rules` (deterministic) or `model` (the configured provider); None: model leaves
            when the provider can be built, else rules. A note on `err` says which ran.
        store: An open store.
        out: Where the answer goes.
        err: Where one-line errors and notes go (without a prefix: the caller adds it).
        provider_factory: Builds the configured provider; needed by `model` leaves.
        approve_flags: Flags the `flow approve` hint must repeat (e.g. ` --data-dir D`).

    Returns:
        0 for every closed outcome but `error` (answered, unverified, out_of_scope,
        no_relevant_documents, budget_exhausted, awaiting_approval); 1 when the run ended in
        `error` or the provider cannot be built; 2 for a usage error (unknown leaves, a missing
        corpus or data file, an empty question, an invalid glossary, `model` without a provider).
    """

    def usage(message: str) -> int:
        print(message, file=err)
        return 2

    if leaves not in (None, "rules", "model"):
        return usage(f"unknown leaves {leaves!r} (use rules or model)")
    if corpus is None:
        from tui_assist.flows.grounded import SAMPLE_CORPUS

        corpus = SAMPLE_CORPUS
        print(f"corpus: the sample handbook in {corpus} (pass --corpus DIR for your own)", file=err)
    if not corpus.is_dir():
        return usage(f"corpus {corpus} is not a directory (pass a folder of Markdown or text files)")
    if data is not None and not data.is_file():
        return usage(f"data file {data} does not exist")
    if not question.strip():
        return usage("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        return usage(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    try:
        glossary = load_glossary(corpus)
    except (OSError, ValueError) as exc:
        return usage(f"invalid glossary: {exc}")
    provider: Provider | None = None
    if leaves != "rules":
        if provider_factory is None:
            if leaves == "model":
                return usage("--leaves model needs a configured provider")
        else:
            try:
                provider = provider_factory()
            except Exception as exc:  # the factory's own one-line setup errors
                if leaves == "model":
                    print(f"cannot start the provider: {exc}", file=err)
                    return 1
                print(f"leaves: rules (no model: {exc})", file=err)
        if provider is not None and leaves is None:
            print(f"leaves: model ({provider.name} · {provider.model}; --leaves rules for rules)", file=err)
    kind: Leaves = "model" if provider is not None else "rules"
    sql: SqlSource | None = None
    try:
        if data is not None:
            try:
                sql = await SqlSource.open(data)
            except (OSError, sqlite3.Error) as exc:
                return usage(f"cannot open {data} as an SQLite database: {exc}")
        async with await CorpusIndex.open(corpus, default_index_path(store.path.parent, corpus)) as index:
            await index.refresh()
            run = await run_grounded(
                question,
                index=index,
                sql=sql,
                glossary=glossary,
                leaves=kind,
                provider=provider,
                store=store,
                caller="cli",
            )
    finally:
        if sql is not None:
            await sql.close()
        if provider is not None:
            await provider.aclose()
    return _report_grounded(run, as_json=as_json, out=out, err=err, approve_flags=approve_flags)


async def flow_approve(
    *,
    run_id: str,
    store: Store,
    out: TextIO,
    err: TextIO,
    provider_factory: Callable[[], Provider] | None = None,
    as_json: bool = False,
) -> int:
    """`tui-assist flow approve RUN_ID`: release a grounded run held for approval.

    The held draft becomes the answer, the run and its audit line are updated (one line per run,
    now with the final outcome), and the answer is printed. Completing needs no model call, so
    `provider_factory` is accepted for symmetry with the other flow commands and not used.

    Args:
        run_id: The run's id, or a unique prefix of it.
        store: An open store.
        out: Where the answer goes.
        err: Where one-line errors go.
        provider_factory: Unused (see above).
        as_json: Print the final state's fields plus `audit` as one JSON object.

    Returns:
        0 when the run was completed; 2 when the id is unknown or ambiguous, or the run is not
        awaiting approval (e.g. already approved).
    """
    del provider_factory
    try:
        run = await approve_run(run_id, store=store)
    except ApprovalError as exc:
        print(str(exc), file=err)
        return 2
    return _report_grounded(run, as_json=as_json, out=out, err=err)


def _report_grounded(
    run: GroundedRun, *, as_json: bool, out: TextIO, err: TextIO, approve_flags: str = ""
) -> int:
    """Print a grounded run (text or JSON) and return its exit code."""
    state = run.state
    if as_json:
        out.write(json.dumps(run.to_json(), ensure_ascii=False) + "\n")
    else:
        out.write(format_run(state, approve_flags=approve_flags))
    if state.outcome == "error":
        print(f"error: {state.error}", file=err)
        return 1
    if state.outcome == "awaiting_approval" and as_json:  # the text output says it already
        print(f"awaiting approval: run `tui-assist flow approve {state.run_id}{approve_flags}`", file=err)
    elif state.outcome == "unverified":
        print(f"unverified: {state.note}", file=err)
    return 0
