# pyright: strict
"""The `tui-assist bench ...` commands of the flows, minus argument parsing.

Each function takes its parameters and the stream to write to, and returns the exit code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tui_assist.providers.base import Provider


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

    Prints a table, or with `as_json` a list of `{"policy", "passed", "total", "tool_calls"}`
    rows (`keyword_route`, `workflow`, `scripted_loop`, `adaptive_loop`, then `model` when
    asked). With `trace`, prints each policy's decisions on that one case instead (as one JSON
    object with `as_json`). Scripted results are identical from run to run.

    Args:
        fixtures: A directory with `documents.json`, `glossary.json` and `cases.json`; None uses
            the packaged `docuctl` fixtures.
        cases: `baseline`, `adaptive` or `all`.
        as_json: Print JSON instead of a table.
        trace: A case id whose decisions to print, policy by policy.
        model: Also run the model policy (reported separately, never mixed with scripted rows).
        out: Where the report goes.
        provider_factory: Builds the configured provider; needed by `model`.
        err: Where one-line errors go (default: stderr).

    Returns:
        0 on success; 1 when the provider cannot be built or a model call failed (the report is
        still printed); 2 for invalid fixtures, an unknown case set or case id, or `model`
        without a provider factory.
    """
    from tui_assist.flows import docs_bench

    return await docs_bench.bench_docs(
        fixtures=fixtures,
        cases=cases,
        as_json=as_json,
        trace=trace,
        model=model,
        out=out,
        provider_factory=provider_factory,
        err=err,
    )


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
    import sys

    from tui_assist.flows import helpdesk
    from tui_assist.providers.base import ProviderError

    errors = err if err is not None else sys.stderr
    if leaves not in ("rules", "model"):
        print(f"bench helpdesk: unknown leaves {leaves!r} (use rules or model)", file=errors)
        return 2
    provider: Provider | None = None
    if leaves == "model":
        if provider_factory is None:
            print("bench helpdesk: --leaves model needs a configured provider", file=errors)
            return 2
        try:
            provider = provider_factory()
        except Exception as exc:  # the factory's own one-line setup errors
            print(f"bench helpdesk: cannot start the provider: {exc}", file=errors)
            return 1
    kind: helpdesk.Leaves = "model" if leaves == "model" else "rules"
    try:
        results = await helpdesk.run_benchmark(leaves=kind, provider=provider)
    except ProviderError as exc:
        print(f"bench helpdesk: model call failed: {exc}", file=errors)
        return 1
    finally:
        if provider is not None:
            await provider.aclose()
    if as_json:
        import json

        rows = [r.to_dict(kind) for r in results]
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    source = (
        "rules leaves (deterministic)"
        if provider is None
        else f"model leaves via {provider.name} / {provider.model} (separate from the rules scores)"
    )
    out.write(helpdesk.format_report(results, source, kind))
    return 0
