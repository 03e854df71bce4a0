# pyright: strict
"""The help-desk benchmark: five workflow patterns over twelve IT support tickets.

Every pattern is built from the engine's combinators, and with `rules` leaves every leaf is
deterministic (keyword classifiers, template drafts, a checklist), so a run is reproducible to the
byte and the table says something true about the *patterns*, not about a model's mood:

- `chain`: normalize → extract → categorize → draft, one fixed path.
- `router`: a first-match keyword classifier routes the ticket to one team's drafter (or to triage
  when nothing matches). First match tries the teams in a fixed order and stops at the first hit,
  blind to context: ticket 12 mentions the password it changed, and accounts is tried before
  network, so the router honestly sends a VPN problem to accounts.
- `vote`: three classifiers in parallel (first match, keyword count, keyword count of the body
  alone), majority wins; without a majority the whole-ticket count decides.
- `orchestrator`: split the body into issue sentences, classify each with a worker, and let the
  team raised most often (earliest on a tie) own the ticket; every team found is listed, and
  checked against the teams a multi-issue ticket needs.
- `refine`: categorize, then draft a reply and check it against a checklist, revising with the
  checklist's feedback (at most two fixes per round) within a three-round budget. It counts as
  correct when the team is right *and* the final reply passes.

With `model` leaves, the classifiers and drafters become `PromptStep`s on the configured
provider; splitting, voting and the checklist stay rules. Those scores are reported separately.

This module builds the patterns; `tickets`, `leaves` and `model_leaves` hold their parts, `run`
runs and reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from tui_assist.flows.helpdesk.leaves import (
    Dispatch,
    Reply,
    Triaged,
    Vote,
    assign_owner,
    categorize,
    categorize_ticket,
    check_reply_step,
    classify_body,
    classify_first_match,
    classify_issue,
    classify_most_hits,
    draft,
    extract,
    majority,
    normalize,
    split_issues,
    team_drafter,
    write_reply,
)
from tui_assist.flows.helpdesk.model_leaves import (
    body_prompt,
    draft_prompt,
    extracted_prompt,
    issue_prompt,
    model_leaves,
    subject_prompt,
    ticket_prompt,
    triaged_prompt,
)
from tui_assist.flows.helpdesk.tickets import TEAMS, UNKNOWN, Ticket, first_keyword
from tui_assist.workflow import (
    Attempt,
    Judgement,
    OrchestratorWorkers,
    Parallel,
    Refine,
    Refined,
    Route,
    Step,
    WorkflowContext,
)

Leaves = Literal["rules", "model"]
PatternName = Literal["chain", "router", "vote", "orchestrator", "refine"]
PATTERN_NAMES: tuple[PatternName, ...] = ("chain", "router", "vote", "orchestrator", "refine")
"""The five patterns, in the order the benchmark runs and prints them."""
REFINE_ROUNDS = 3
"""The refine pattern's round budget."""

T = TypeVar("T")
R = TypeVar("R")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class Verdict:
    """How a pattern's output reads as a benchmark result."""

    team: str
    """The team the pattern assigned."""
    detail: str
    """Pattern-specific evidence: the votes, the teams, the rounds."""
    acceptable: bool = True
    """False when the pattern's own check failed (a refine reply that never passed)."""


O = TypeVar("O")  # noqa: E741


@dataclass(frozen=True, slots=True)
class Pattern(Generic[O]):
    """One benchmarked pattern: how to build it and how to read its output."""

    name: PatternName
    summary: str
    build: Callable[[Leaves], Step[Ticket, O]]
    read: Callable[[O, Ticket, Leaves], Verdict]
    model_summary: str = ""
    """How the pattern reads with model leaves."""


class _Annotate(Step[T, U]):
    """Runs an inner step on its input and combines the input with the inner step's result."""

    __slots__ = ("inner", "combine")

    def __init__(self, label: str, inner: Step[T, R], combine: Callable[[T, R], U]) -> None:
        super().__init__(label)
        self.inner: Step[T, Any] = inner
        self.combine: Callable[[T, Any], U] = combine

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The inner step."""
        return (self.inner,)

    async def run(self, input: T, ctx: WorkflowContext) -> U:
        """Run the inner step, then combine."""
        return self.combine(input, await ctx.run(self.inner, input))


def _build_chain(leaves: Leaves) -> Step[Ticket, Reply]:
    if leaves == "rules":
        return normalize.then(extract).then(categorize).then(draft)
    model = model_leaves()
    classify = model.classifier("classify", extracted_prompt)
    write = model.drafter("write reply", triaged_prompt)
    return (
        normalize.then(extract)
        .then(_Annotate("categorize", classify, lambda found, team: Triaged(found.ticket, team)))
        .then(_Annotate("draft", write, lambda triaged, text: Reply(triaged.team, text)))
    )


def _build_router(leaves: Leaves) -> Step[Ticket, Reply]:
    classifier = (
        classify_first_match if leaves == "rules" else model_leaves().classifier("classify", ticket_prompt)
    )
    return Route(
        classifier,
        {team: team_drafter(team) for team in TEAMS},
        fallback=team_drafter("triage"),
        fallback_label=UNKNOWN,
    )


def _build_vote(leaves: Leaves) -> Step[Ticket, Vote]:
    if leaves == "rules":
        return Parallel([classify_first_match, classify_most_hits, classify_body], majority)
    model = model_leaves()
    return Parallel(
        [
            model.classifier("whole ticket", ticket_prompt),
            model.classifier("body only", body_prompt),
            model.classifier("subject only", subject_prompt),
        ],
        majority,
    )


def _build_orchestrator(leaves: Leaves) -> Step[Ticket, Dispatch]:
    worker = (
        classify_issue if leaves == "rules" else model_leaves().classifier("classify issue", issue_prompt)
    )
    return OrchestratorWorkers(split_issues, worker, assign_owner, max_concurrency=2)


def _build_refine(leaves: Leaves) -> Step[Ticket, Refined[Reply, Judgement]]:
    if leaves == "rules":
        return categorize_ticket.then(Refine(write_reply, check_reply_step, max_rounds=REFINE_ROUNDS))
    model = model_leaves()
    classify = model.classifier("classify", ticket_prompt)
    write = _Annotate("write reply", model.drafter("draft", draft_prompt), _attempt_reply)
    return _Annotate("categorize", classify, Triaged).then(
        Refine(write, check_reply_step, max_rounds=REFINE_ROUNDS)
    )


def _attempt_reply(attempt: Attempt[Triaged, Reply], text: str) -> Reply:
    return Reply(attempt.input.team, text)


def _read_routed(reply: Reply, ticket: Ticket, leaves: Leaves) -> Verdict:
    if leaves == "model":
        return Verdict(reply.team, reply.text)
    return Verdict(reply.team, f"first match: {first_keyword(ticket.text)}")


def _read_dispatch(dispatch: Dispatch, ticket: Ticket, leaves: Leaves) -> Verdict:
    needed = (ticket.category, *ticket.also)
    found = ", ".join(dispatch.teams) or "none"
    if not ticket.category:
        return Verdict(dispatch.team, f"teams: {found}")
    verdict = "all it needs" if set(dispatch.teams) == set(needed) else f"needs {', '.join(needed)}"
    return Verdict(dispatch.team, f"teams: {found} ({verdict})")


def _read_refined(result: Refined[Reply, Judgement], ticket: Ticket, leaves: Leaves) -> Verdict:
    rounds = len(result.rounds)
    detail = f"{rounds} round{'s' if rounds != 1 else ''}, {result.outcome}"
    if not result.passed and result.judgement.feedback:
        detail += f" (missing: {result.judgement.feedback})"
    return Verdict(result.draft.team, detail, acceptable=result.passed)


PATTERNS: dict[PatternName, Pattern[Any]] = {
    "chain": Pattern(
        "chain",
        "normalize → extract → categorize → draft",
        _build_chain,
        lambda r, _, __: Verdict(r.team, r.why or r.text),
        "normalize → extract → categorize (model) → draft (model)",
    ),
    "router": Pattern(
        "router",
        "first-match keyword classifier routes to one team's drafter",
        _build_router,
        _read_routed,
        "a model classifier routes to one team's drafter; a label outside the teams fails",
    ),
    "vote": Pattern(
        "vote",
        "first match, keyword count and body-only count in parallel; majority wins",
        _build_vote,
        lambda v, _, __: Verdict(v.team, "votes: " + ", ".join(v.votes)),
        "the model on the whole ticket, the body and the subject in parallel; majority wins",
    ),
    "orchestrator": Pattern(
        "orchestrator",
        "split into issues, classify each, the most-raised team owns it",
        _build_orchestrator,
        _read_dispatch,
        "split into issues, the model classifies each, the most-raised team owns it",
    ),
    "refine": Pattern(
        "refine",
        f"categorize, then draft and check against a checklist (≤{REFINE_ROUNDS} rounds)",
        _build_refine,
        _read_refined,
        f"categorize (model), then model drafts checked against the checklist (≤{REFINE_ROUNDS} rounds)",
    ),
}
"""The five patterns by name."""


def build_pattern(name: PatternName, leaves: Leaves = "rules") -> Step[Ticket, Any]:
    """The workflow of one pattern, e.g. for the Explorer to run and draw.

    Args:
        name: One of `PATTERN_NAMES`.
        leaves: `rules` (deterministic) or `model` (prompt steps on the run's provider).

    Returns:
        The pattern's top step.

    Raises:
        KeyError: for an unknown pattern name.
    """
    return PATTERNS[name].build(leaves)
