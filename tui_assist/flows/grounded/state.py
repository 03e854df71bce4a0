# pyright: strict
"""The grounded flow's typed state, configuration and audit line (see `tui_assist.flows.grounded`).

Everything a run decides is a named field of `FlowState`, so a test (or a reviewer) reads the
decision instead of parsing a transcript; the audit line is derived from the state and holds
counts, ids and sizes only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

FLOW_NAME = "grounded"
"""The flow's name in the store and in the audit table."""

Outcome = Literal[
    "answered",
    "unverified",
    "out_of_scope",
    "no_relevant_documents",
    "budget_exhausted",
    "awaiting_approval",
    "cancelled",
    "error",
]
"""How a run ended: the closed set (DESIGN.md's outcomes plus the flow ones)."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
"""Every outcome, in a stable order."""
RouteLabel = Literal["docs", "data", "unsupported"]
"""The classifier's closed label set."""
ROUTE_LABELS: tuple[RouteLabel, ...] = get_args(RouteLabel)
"""The labels, in the route's order (`unsupported` is its explicit decline branch)."""
Leaves = Literal["rules", "model"]
"""`rules`: deterministic leaves; `model`: leaves on the configured provider."""

DEFAULT_TOKEN_BUDGET = 8_000
"""Tokens (prompt and completion) one run may spend."""
MAX_ATTEMPTS = 2
"""Retrieval attempts: the first search and one rephrased retry."""
RELEVANCE_FLOOR = 0.5
"""The normalized score a chunk needs to count as a passage (see `index`)."""
TOP_K = 5
"""Passages kept per search."""
MAX_QUESTION_CHARS = 4_000
"""Longer questions are refused before the run starts."""
MAX_DATA_CALLS = 4
"""Model calls the data route may make (tool rounds included)."""
# --- State ---------------------------------------------------------------------------------------


class Passage(BaseModel):
    """A retrieved chunk that cleared the relevance floor."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    """`<doc_id>#c<NNNN>`: what an answer cites."""
    doc_id: str
    title: str
    heading: str
    text: str
    score: float
    """Normalized relevance in [0, 1]."""


class SqlCall(BaseModel):
    """One `sql_query` call of the data route."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """`sql#N`: what an answer cites."""
    query: str
    rows: int = 0
    truncated: bool = False
    error: str | None = None
    duration_ms: int = 0


class FlowState(BaseModel):
    """Everything the grounded flow knows and decided about one run, as named fields.

    Steps mutate this one object and pass it on, so a run stopped anywhere (budget, error,
    approval) still holds every decision made up to that point.
    """

    model_config = ConfigDict(extra="forbid")

    run_id: str
    question: str
    caller: str = "local"
    """Who asked (an id, e.g. `cli`); kept in the audit line as `caller_id`."""
    route: RouteLabel | None = None
    """The branch taken; None until the classifier's label was validated."""
    passages: list[Passage] = Field(default_factory=lambda: list[Passage]())
    """The chunks retrieval returned above the floor, best first (at most `TOP_K`)."""
    top_score: float | None = None
    """The best normalized score of the last search (also when under the floor)."""
    retrieval_attempts: int = 0
    """Searches run (at most `MAX_ATTEMPTS`)."""
    rephrased: str | None = None
    """The rephrased query of the retry, when there was one."""
    draft: str = ""
    """The answer as drafted; released as `answer` only when no approval is needed, or after it."""
    citations: list[str] = Field(default_factory=lambda: list[str]())
    """Cited ids that retrieval (or the SQL tool) did return, in order of citation."""
    invalid_citations: list[str] = Field(default_factory=lambda: list[str]())
    """Cited ids that were never retrieved."""
    citations_flagged: bool = False
    """True when the draft cites nothing retrieved (its outcome is then `unverified`)."""
    sql_calls: list[SqlCall] = Field(default_factory=lambda: list[SqlCall]())
    """The data route's queries, in order."""
    tokens_prompt: int = 0
    tokens_completion: int = 0
    tokens_used: int = 0
    token_budget: int = DEFAULT_TOKEN_BUDGET
    needs_approval: bool = False
    approval_reasons: list[str] = Field(default_factory=lambda: list[str]())
    """The names of the approval rules that matched."""
    approved: bool = False
    answer: str = ""
    """The released answer: empty until delivery (so nothing is sent before an approval)."""
    outcome: Outcome | None = None
    note: str = ""
    """Why the run ended as it did, for a person (e.g. the top score under the floor)."""
    error: str | None = None
    model: str = "rules"
    """The model that answered (`rules` for deterministic leaves)."""
    duration_ms: int = 0

    def __str__(self) -> str:
        head = self.outcome or self.route or "new"
        return f"{head}: {self.question}"

    @property
    def retrieved_ids(self) -> list[str]:
        """Ids an answer may cite: the passages' chunk ids and the successful queries' ids."""
        return [p.chunk_id for p in self.passages] + [c.id for c in self.sql_calls if c.error is None]

    def cited_sources(self) -> list[Passage | SqlCall]:
        """What each citation points at (a passage or a query), in order of citation."""
        by_id: dict[str, Passage | SqlCall] = {c.id: c for c in self.sql_calls}
        by_id.update({p.chunk_id: p for p in self.passages})
        return [by_id[cited] for cited in self.citations if cited in by_id]


def audit_line(state: FlowState) -> dict[str, Any]:
    """The run's audit line: counts, ids and sizes only, never the question or answer text.

    Args:
        state: The run's state.

    Returns:
        The line as JSON-ready data, fields in the documented order.
    """
    return {
        "run_id": state.run_id,
        "caller_id": state.caller,
        "question_chars": len(state.question),
        "route": state.route,
        "retrieval_attempts": state.retrieval_attempts,
        "rephrased": state.rephrased is not None,
        "chunk_ids": [p.chunk_id for p in state.passages],
        "top_score": state.top_score,
        "citations_returned": len(state.citations),
        "model": state.model,
        "tokens_prompt": state.tokens_prompt,
        "tokens_completion": state.tokens_completion,
        "tokens_used_total": state.tokens_used,
        "duration_ms": state.duration_ms,
        "needs_approval": state.needs_approval,
        "outcome": state.outcome,
    }


# --- Configuration -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """A rule that holds a run for a person's approval when its pattern matches.

    Attributes:
        name: Recorded in `FlowState.approval_reasons`.
        pattern: A regular expression (searched case-insensitively, multi-line).
        target: What it reads: the `question` or the `draft`.
    """

    name: str
    pattern: str
    target: Literal["question", "draft"] = "draft"

    def matches(self, state: FlowState) -> bool:
        """Whether the rule applies to this run."""
        text = state.question if self.target == "question" else state.draft
        return re.search(self.pattern, text, re.IGNORECASE | re.MULTILINE) is not None


DEFAULT_APPROVAL_RULES: tuple[ApprovalRule, ...] = (
    ApprovalRule(
        "drafts_message",
        r"\b(draft|write|compose|send|prepare)\b[^.?!]{0,60}\b(e-?mails?|messages?|letters?|memos?)\b",
        "question",
    ),
    ApprovalRule("email_format", r"^\s*(subject:|dear\s)", "draft"),
    ApprovalRule(
        "requests_action",
        r"^\s*(please\s+)?(book|submit|file|order|purchase|reserve|cancel|approve|pay|transfer|delete|send)\b",
        "question",
    ),
)
"""Hold answers that draft a message, are written as an email, or act on the asker's behalf."""


@dataclass(frozen=True, slots=True)
class GroundedConfig:
    """The flow's limits and rules."""

    token_budget: int = DEFAULT_TOKEN_BUDGET
    """Tokens one run may spend, checked before every model call."""
    max_attempts: int = MAX_ATTEMPTS
    """Retrieval attempts (the loop's counter)."""
    relevance_floor: float = RELEVANCE_FLOOR
    """The normalized score a chunk needs."""
    top_k: int = TOP_K
    """Passages per search."""
    approval_rules: tuple[ApprovalRule, ...] = DEFAULT_APPROVAL_RULES
    """What holds a run for approval."""
    max_data_calls: int = MAX_DATA_CALLS
    """Model calls the data route may make."""
    classify_max_tokens: int = 64
    rephrase_max_tokens: int = 128
    answer_max_tokens: int = 1024


def load_glossary(corpus: Path) -> dict[str, str]:
    """The corpus's `glossary.json` (alias → term), or an empty glossary when it has none.

    Args:
        corpus: The corpus folder.

    Returns:
        The glossary, aliases lower-cased.

    Raises:
        ValueError: when the file is not a JSON object of strings.
    """
    path = corpus / "glossary.json"
    if not path.is_file():
        return {}
    data: object = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a glossary must be a JSON object of alias → term")
    glossary: dict[str, str] = {}
    for key, value in data.items():  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f"{path}: glossary entries must be strings")
        glossary[key.casefold()] = value
    return glossary
