# pyright: strict
"""What every leaf of the grounded flow shares: its dependencies, the state-step base and the error.

Also how a question names a table of the user's database (the classifier and the data route's
rules planner both ask).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_assist.flows.grounded.index import CorpusIndex
from tui_assist.flows.grounded.sql import SqlSource, Table
from tui_assist.flows.grounded.state import FlowState, GroundedConfig, Leaves
from tui_assist.workflow import Step

WORDS = re.compile(r"[a-z0-9]+")
"""A word of a case-folded text."""


class GroundedError(Exception):
    """The flow could not finish a step (e.g. the data route found no answer within its calls)."""


@dataclass(slots=True)
class GroundedDeps:
    """What the flow's leaves work with."""

    index: CorpusIndex
    sql: SqlSource | None = None
    glossary: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """Alias → corpus term (`cab` → `taxi`), used by the rules rephraser and classifier."""
    config: GroundedConfig = field(default_factory=GroundedConfig)
    leaves: Leaves = "rules"
    _tables: list[Table] | None = None

    async def tables(self) -> list[Table]:
        """The data source's tables (cached); none without a data source."""
        if self.sql is None:
            return []
        if self._tables is None:
            self._tables = await self.sql.tables()
        return self._tables


class StateStep(Step[FlowState, FlowState]):
    """A step over the flow state; its node shows the question, not the whole state."""

    __slots__ = ()

    def summarize_input(self, value: FlowState) -> str:
        """The question (and the route once known)."""
        return str(value)

    def summarize_output(self, value: object) -> str:
        """The state's short form."""
        return str(value)


def named_table(question: str, tables: Sequence[Table]) -> Table | None:
    """The first table the question names (singular or plural), if any."""
    words = set(WORDS.findall(question.casefold()))
    for table in tables:
        name = table.name.casefold()
        if name in words or name.rstrip("s") in words or f"{name}s" in words:
            return table
    return None
