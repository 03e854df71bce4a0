"""`tui-assist bench docs|helpdesk` and `tui-assist flow grounded|approve`, minus argument parsing.

The flows run and return results (reports, runs, traces); this module prints them and chooses
the exit code (`tui_assist.cli.errors`). Each function takes its parameters and the streams to
write to. The flows are imported when their command runs, so `bench helpdesk` with rules leaves
loads no model SDK.

`bench docs`: the scripted rows are deterministic (fixed case order, fixed policy order, no clocks
or ids in the output), so two runs print the same bytes. The model row depends on a model, so it
is printed apart and never mixed into the scripted comparison.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tui_assist.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from tui_assist.core.model import Provider
    from tui_assist.flows.docs.bench import BenchReport
    from tui_assist.flows.docs.corpus import Case, Fixtures
    from tui_assist.flows.docs.runtime import PolicyResult
    from tui_assist.flows.grounded.run import GroundedRun
    from tui_assist.store.db import Store

__all__ = ["bench_docs", "bench_helpdesk", "flow_approve", "flow_grounded"]


async def bench_docs(
    *,
    fixtures: Path | None,
    cases: str,
    as_json: bool,
    trace: str | None,
    model: bool,
    out: TextIO,
    provider_factory: Callable[[], Provider] | None = None,
    err: TextIO | None = None,
) -> int:
    """`tui-assist bench docs`: compare the documentation control policies on the same cases.

    Prints a table (or, with `as_json`, a list of `{"policy", "passed", "total", "tool_calls"}`
    rows: `keyword_route`, `workflow`, `scripted_loop`, `adaptive_loop`, then `model` when asked).
    With `trace`, prints each policy's decisions on that one case instead (as JSON with
    `as_json`). The scripted policies' results are identical from run to run.

    Args:
        fixtures: A directory with `documents.json`, `glossary.json` and `cases.json`; None uses
            the packaged `docuctl` fixtures.
        cases: `baseline`, `adaptive` or `all`.
        as_json: Print JSON instead of a table.
        trace: A case id whose decisions to print, policy by policy.
        model: Also run the model policy (reported separately, never mixed with scripted rows).
        out: Where the report goes.
        provider_factory: Builds the configured provider for `model`.
        err: Where errors go (default: stderr).

    Returns:
        0 on success; 1 when the provider cannot be built or a model call failed (the report is
        still printed); 2 for invalid fixtures, an unknown case set or case id, or `model`
        without a provider.
    """
    from tui_assist.flows.docs.bench import CASE_SETS, run_bench
    from tui_assist.flows.docs.corpus import FixtureError, load_fixtures

    errors: TextIO = err or sys.stderr

    def fail(message: str, code: int = EXIT_USAGE) -> int:
        print(message, file=errors)
        return code

    if cases not in CASE_SETS:
        return fail(f"unknown case set {cases!r}: use baseline, adaptive or all")
    try:
        data = load_fixtures(fixtures)
    except FixtureError as exc:
        return fail(f"invalid fixtures: {exc}")
    if trace is not None and data.case(trace) is None:
        return fail(f"no case {trace!r} in the fixtures")
    provider: Provider | None = None
    if model:
        if provider_factory is None:
            return fail("--model needs a configured provider")
        try:
            provider = provider_factory()
        except Exception as exc:  # the factory's own one-line setup errors
            return fail(f"model policy: {exc}", EXIT_FAILED)
    try:
        if trace is not None:
            case = data.case(trace)
            assert case is not None
            return await _print_docs_trace(data, case, provider, as_json=as_json, out=out, err=errors)
        report = await run_bench(data, cases, provider=provider)
    finally:
        if provider is not None:
            await provider.aclose()
    if as_json:
        print(json.dumps([row.to_dict() for row in report.rows]), file=out)
    else:
        _print_docs_table(report, cases=cases, source=data.source, provider=provider, out=out)
    return _docs_model_status(report.results.get("model", ()), errors)


def _docs_model_status(results: Sequence[PolicyResult], err: TextIO) -> int:
    failed = [r for r in results if r.stop == "provider_error"]
    if not failed:
        return EXIT_OK
    print(
        f"model policy: the provider failed on {len(failed)} of {len(results)} cases: {failed[0].detail}",
        file=err,
    )
    return EXIT_FAILED


def _docs_stops(results: Sequence[PolicyResult]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.stop] = counts.get(r.stop, 0) + 1
    return ", ".join(f"{stop} {n}" for stop, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _print_docs_table(
    report: BenchReport, *, cases: str, source: str, provider: Provider | None, out: TextIO
) -> None:
    print(f"bench docs · {cases}: {len(report.cases)} cases · fixtures: {source}", file=out)
    header = f"{'policy':<15}{'passed':>7}{'total':>7}{'tool_calls':>12}  stops"
    print(header, file=out)
    for row in report.rows:
        if row.policy == "model":
            continue
        stops = _docs_stops(report.results[row.policy])
        print(f"{row.policy:<15}{row.passed:>7}{row.total:>7}{row.tool_calls:>12}  {stops}", file=out)
    if "model" in report.results and provider is not None:
        row = report.row("model")
        print(
            f"\nmodel policy ({provider.name}/{provider.model}), reported separately: "
            "not comparable run to run",
            file=out,
        )
        print(header, file=out)
        stops = _docs_stops(report.results["model"])
        print(f"{row.policy:<15}{row.passed:>7}{row.total:>7}{row.tool_calls:>12}  {stops}", file=out)
    refused = sum(1 for _, reason in report.refusals if reason is not None)
    if report.refusals:
        print(
            f"refusals: {refused} of {len(report.refusals)} refusal cases refused before any policy ran",
            file=out,
        )


async def _print_docs_trace(
    data: Fixtures, case: Case, provider: Provider | None, *, as_json: bool, out: TextIO, err: TextIO
) -> int:
    from tui_assist.flows.docs.bench import SCRIPTED_POLICIES, PolicyName, case_kind, outcome, run_policy

    names: list[PolicyName] = list(SCRIPTED_POLICIES)
    if provider is not None:
        names.append("model")
    results = [await run_policy(n, case.task, data.corpus, provider=provider) for n in names]
    refusal = case_kind(case) == "refusal"
    if as_json:
        payload = {
            "case": {
                "id": case.id,
                "family": case.family,
                "question": case.question,
                "version": case.version,
                "environment": case.environment,
                "expected_doc": case.expected_doc,
                "expected_command": case.expected_command,
            },
            "results": [{**r.to_dict(), "passed": outcome(case, r)} for r in results],
        }
        print(json.dumps(payload, ensure_ascii=False, default=repr), file=out)
    else:
        print(f"case {case.id} · {case.family} · {case.version} · {case.environment}", file=out)
        print(f"question: {case.question}", file=out)
        if refusal:
            print("expected: refused before any policy runs", file=out)
        else:
            print(f"expected: {case.expected_doc} · {case.expected_command}", file=out)
        for r in results:
            if refusal:
                verdict = "REFUSED" if r.stop == "refused" else "NOT REFUSED"
            else:
                verdict = "PASS" if outcome(case, r) else "FAIL"
            calls = "1 tool call" if r.tool_calls == 1 else f"{r.tool_calls} tool calls"
            print(f"\n{r.policy}: {r.stop}, {calls}, {verdict}", file=out)
            for i, entry in enumerate(r.trace, 1):
                data_text = json.dumps(entry.input, ensure_ascii=False, default=repr)
                line = f"  {i}. {entry.action} {data_text}"
                if entry.observation:
                    line += f" -> {entry.observation}"
                print(line, file=out)
    return _docs_model_status([r for r in results if r.policy == "model"], err)


async def bench_helpdesk(
    *,
    as_json: bool,
    leaves: str,
    out: TextIO,
    provider_factory: Callable[[], Provider] | None = None,
    err: TextIO | None = None,
) -> int:
    """`tui-assist bench helpdesk`: the five workflow patterns on the twelve help-desk tickets.

    Prints, per pattern, correct/12 and the steps run, then each ticket's result; with `as_json`,
    a list of rows `{"leaves", "pattern", "ticket", "expected", "got", "correct", "steps",
    "detail", "error"}`. With `rules` leaves the output is identical from run to run. `model`
    leaves run the classifiers and drafters on the configured provider and are labelled as such,
    never mixed with the deterministic scores.

    Args:
        as_json: Print JSON rows instead of tables.
        leaves: `rules` (deterministic) or `model`.
        out: Where the report goes.
        provider_factory: Builds the configured provider; needed by `model` leaves.
        err: Where one-line errors go (default: stderr).

    Returns:
        0 on success; 1 when the provider cannot be built or a model call failed for good; 2 for
        unknown leaves, or `model` leaves without a provider factory.
    """
    from tui_assist.core.model import ProviderError
    from tui_assist.flows.helpdesk.patterns import Leaves
    from tui_assist.flows.helpdesk.run import format_report, run_benchmark

    errors = err if err is not None else sys.stderr
    if leaves not in ("rules", "model"):
        print(f"unknown leaves {leaves!r} (use rules or model)", file=errors)
        return EXIT_USAGE
    provider: Provider | None = None
    if leaves == "model":
        if provider_factory is None:
            print("--leaves model needs a configured provider", file=errors)
            return EXIT_USAGE
        try:
            provider = provider_factory()
        except Exception as exc:  # the factory's own one-line setup errors
            print(f"cannot start the provider: {exc}", file=errors)
            return EXIT_FAILED
    kind: Leaves = "model" if leaves == "model" else "rules"
    try:
        results = await run_benchmark(leaves=kind, provider=provider)
    except ProviderError as exc:
        print(f"model call failed: {exc}", file=errors)
        return EXIT_FAILED
    finally:
        if provider is not None:
            await provider.aclose()
    if as_json:
        rows = [r.to_dict(kind) for r in results]
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    source = (
        "rules leaves (deterministic)"
        if provider is None
        else f"model leaves via {provider.name} / {provider.model} (separate from the rules scores)"
    )
    out.write(format_report(results, source, kind))
    return EXIT_OK


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

    from tui_assist.flows.grounded.index import CorpusIndex, default_index_path
    from tui_assist.flows.grounded.run import run_grounded
    from tui_assist.flows.grounded.sql import SqlSource
    from tui_assist.flows.grounded.state import MAX_QUESTION_CHARS, Leaves, load_glossary

    def usage(message: str) -> int:
        print(message, file=err)
        return EXIT_USAGE

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
                    return EXIT_FAILED
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
    from tui_assist.flows.grounded.run import ApprovalError, approve_run

    del provider_factory
    try:
        run = await approve_run(run_id, store=store)
    except ApprovalError as exc:
        print(str(exc), file=err)
        return EXIT_USAGE
    return _report_grounded(run, as_json=as_json, out=out, err=err)


def _report_grounded(
    run: GroundedRun, *, as_json: bool, out: TextIO, err: TextIO, approve_flags: str = ""
) -> int:
    """Print a grounded run (text or JSON) and return its exit code."""
    from tui_assist.flows.grounded.run import format_run

    state = run.state
    if as_json:
        out.write(json.dumps(run.to_json(), ensure_ascii=False) + "\n")
    else:
        out.write(format_run(state, approve_flags=approve_flags))
    if state.outcome == "error":
        print(f"error: {state.error}", file=err)
        return EXIT_FAILED
    if state.outcome == "awaiting_approval" and as_json:  # the text output says it already
        print(f"awaiting approval: run `tui-assist flow approve {state.run_id}{approve_flags}`", file=err)
    elif state.outcome == "unverified":
        print(f"unverified: {state.note}", file=err)
    return EXIT_OK
