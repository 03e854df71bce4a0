# pyright: strict
"""`tui-assist bench helpdesk`, minus argument parsing.

The function takes its parameters and the stream to write to, and returns the exit code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TextIO

from tui_assist.core.model import Provider, ProviderError
from tui_assist.flows.helpdesk.patterns import Leaves
from tui_assist.flows.helpdesk.run import format_report, run_benchmark

__all__ = ["bench_helpdesk"]


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
    errors = err if err is not None else sys.stderr
    if leaves not in ("rules", "model"):
        print(f"unknown leaves {leaves!r} (use rules or model)", file=errors)
        return 2
    provider: Provider | None = None
    if leaves == "model":
        if provider_factory is None:
            print("--leaves model needs a configured provider", file=errors)
            return 2
        try:
            provider = provider_factory()
        except Exception as exc:  # the factory's own one-line setup errors
            print(f"cannot start the provider: {exc}", file=errors)
            return 1
    kind: Leaves = "model" if leaves == "model" else "rules"
    try:
        results = await run_benchmark(leaves=kind, provider=provider)
    except ProviderError as exc:
        print(f"model call failed: {exc}", file=errors)
        return 1
    finally:
        if provider is not None:
            await provider.aclose()
    if as_json:
        rows = [r.to_dict(kind) for r in results]
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    source = (
        "rules leaves (deterministic)"
        if provider is None
        else f"model leaves via {provider.name} / {provider.model} (separate from the rules scores)"
    )
    out.write(format_report(results, source, kind))
    return 0
