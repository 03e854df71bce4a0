# pyright: strict
"""`tui-assist bench docs`, minus argument parsing: run the policies and print the comparison.

The scripted rows are deterministic (fixed case order, fixed policy order, no clocks or ids in
the output), so two runs print the same bytes. The model row depends on a model, so it is printed
apart and never mixed into the scripted comparison.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from tui_assist.core.model import Provider
from tui_assist.flows.docs.bench import (
    CASE_SETS,
    SCRIPTED_POLICIES,
    BenchReport,
    PolicyName,
    case_kind,
    outcome,
    run_bench,
    run_policy,
)
from tui_assist.flows.docs.corpus import Case, FixtureError, Fixtures, load_fixtures
from tui_assist.flows.docs.runtime import PolicyResult

DOCS_EXIT_OK = 0
DOCS_EXIT_FAILED = 1
DOCS_EXIT_USAGE = 2


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
    errors: TextIO = err or sys.stderr

    def fail(message: str, code: int = DOCS_EXIT_USAGE) -> int:
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
            return fail(f"model policy: {exc}", DOCS_EXIT_FAILED)
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
        return DOCS_EXIT_OK
    print(
        f"model policy: the provider failed on {len(failed)} of {len(results)} cases: {failed[0].detail}",
        file=err,
    )
    return DOCS_EXIT_FAILED


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
