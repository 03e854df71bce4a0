"""The two-column report (measure, value) the benches print."""

from __future__ import annotations

from collections.abc import Sequence


def print_rows(rows: Sequence[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  value")
    print(f"{'-' * width}  {'-' * 40}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
