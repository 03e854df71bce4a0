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

The fixture ships inside the package (`helpdesk/data/tickets.json`), so an installed wheel has it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Generic, Literal, TypeVar, cast

from tui_assist.core.model import Provider
from tui_assist.core.observer import TurnObserver
from tui_assist.workflow import (
    Attempt,
    Candidate,
    Chain,
    Judgement,
    OrchestratorWorkers,
    Parallel,
    Refine,
    Refined,
    Route,
    Step,
    Synthesis,
    WorkflowBudget,
    WorkflowBudgetTracker,
    WorkflowContext,
    run_reporting,
    step,
)

Leaves = Literal["rules", "model"]
PatternName = Literal["chain", "router", "vote", "orchestrator", "refine"]
PATTERN_NAMES: tuple[PatternName, ...] = ("chain", "router", "vote", "orchestrator", "refine")
"""The five patterns, in the order the benchmark runs and prints them."""
TEAMS = ("network", "accounts", "hardware", "software", "security")
"""The teams a ticket can go to."""
UNKNOWN = "unknown"
"""What a keyword classifier returns when no keyword matches (the router's decline label)."""
FIRST_MATCH_ORDER = ("security", "accounts", "network", "hardware", "software")
"""The order the first-match classifier tries teams in (and the tie-break of the counters)."""
KEYWORDS: dict[str, tuple[str, ...]] = {
    "security": ("phishing", "suspicious", "scam", "malware", "virus", "lost", "stolen", "wipe", "hacked"),
    "accounts": ("password", "locked", "unlock", "login", "log in", "account", "username", "permission"),
    "network": ("vpn", "wi-fi", "network", "internet", "connection", "connect*", "tunnel", "dns", "router"),
    "hardware": (
        "laptop",
        "battery",
        "charg*",
        "adapter",
        "printer",
        "jam*",
        "paper",
        "monitor",
        "screen",
        "keyboard",
        "mouse",
        "dock*",
        "phone",
    ),
    "software": (
        "excel",
        "outlook",
        "photoshop",
        "teams",
        "install*",
        "licen*",
        "crash*",
        "update*",
        "sync*",
    ),
}
"""Each team's keywords; a trailing `*` matches any ending, otherwise a plural `s` at most."""
NEXT_STEPS = {
    "network": "we will check the VPN and Wi-Fi logs for your connection and call you back today",
    "accounts": "we will verify your identity by phone and then fix the account",
    "hardware": "we will book a technician visit to look at the device",
    "software": "we will reinstall or update the application remotely",
    "security": "do not click anything further; we will secure your account and devices now",
    "triage": "a coordinator will read your ticket and assign it within the hour",
}
"""The next step each team's reply promises."""
REPLY_WORD_LIMIT = 70
"""The checklist's longest acceptable reply, in words."""
REFINE_ROUNDS = 3
"""The refine pattern's round budget."""
DEFAULT_TICKET_TEXT = "The VPN keeps dropping every few minutes"
"""The Explorer's default ticket."""

_MATCHERS = {
    team: re.compile(
        "|".join(
            rf"\b{re.escape(k[:-1])}\w*" if k.endswith("*") else rf"\b{re.escape(k)}s?\b" for k in words
        ),
        re.IGNORECASE,
    )
    for team, words in KEYWORDS.items()
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SPELLINGS = ((re.compile(r"\bwi\s?fi\b"), "wi-fi"), (re.compile(r"\be-mail\b"), "email"))
_ERROR_CODE = re.compile(r"\berror\s+([0-9][0-9.]*[0-9])")

T = TypeVar("T")
R = TypeVar("R")
U = TypeVar("U")


# --- The tickets ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ticket:
    """One IT support ticket and the team that should handle it."""

    id: int
    sender: str
    subject: str
    body: str
    category: str
    """The team that should own the ticket (empty for an ad-hoc ticket)."""
    also: tuple[str, ...] = ()
    """Other teams a multi-issue ticket needs."""

    @property
    def text(self) -> str:
        """Subject and body as one text."""
        return f"{self.subject}. {self.body}"

    @classmethod
    def from_text(cls, text: str, *, sender: str = "there") -> Ticket:
        """An ad-hoc ticket (id 0, no known category), e.g. typed into the Explorer.

        Args:
            text: The ticket; its first sentence becomes the subject.
            sender: Who wrote it.

        Returns:
            The ticket.
        """
        first = _SENTENCE.split(text.strip(), maxsplit=1)[0].rstrip(".!?")
        return cls(0, sender, first or text, text.strip(), "")

    def __str__(self) -> str:
        return f"#{self.id} {self.subject}"


@cache
def load_tickets() -> tuple[Ticket, ...]:
    """The twelve packaged tickets, in id order.

    Returns:
        The tickets.
    """
    resource = files("tui_assist.flows.helpdesk").joinpath("data", "tickets.json")
    data = cast(dict[str, Any], json.loads(resource.read_text(encoding="utf-8")))
    return tuple(
        Ticket(
            id=int(t["id"]),
            sender=str(t["from"]),
            subject=str(t["subject"]),
            body=str(t["body"]),
            category=str(t["category"]),
            also=tuple(str(a) for a in t.get("also", ())),
        )
        for t in cast(list[dict[str, Any]], data["tickets"])
    )


# --- Deterministic classification ----------------------------------------------------------------


def keyword_hits(text: str) -> dict[str, int]:
    """How many keyword matches each team has in `text` (teams without any are left out).

    Args:
        text: Any text; matching ignores case.

    Returns:
        Team → number of matches, in `FIRST_MATCH_ORDER`.
    """
    hits = {team: len(_MATCHERS[team].findall(text)) for team in FIRST_MATCH_ORDER}
    return {team: n for team, n in hits.items() if n}


def first_match(text: str) -> str:
    """The first team, in `FIRST_MATCH_ORDER`, with any keyword in `text`; `UNKNOWN` if none."""
    for team in FIRST_MATCH_ORDER:
        if _MATCHERS[team].search(text):
            return team
    return UNKNOWN


def first_keyword(text: str) -> str:
    """What the first-match classifier saw first: `'password' → accounts`, or `no keyword`."""
    for team in FIRST_MATCH_ORDER:
        match = _MATCHERS[team].search(text)
        if match:
            return f"{match.group(0).lower()!r} → {team}"
    return "no keyword"


def most_hits(text: str) -> str:
    """The team with the most keyword matches (ties: `FIRST_MATCH_ORDER`); `UNKNOWN` if none."""
    hits = keyword_hits(text)
    return max(hits, key=lambda team: hits[team]) if hits else UNKNOWN


# --- Values passed between steps -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Normalized:
    """A ticket with its text lower-cased, spellings unified and whitespace collapsed."""

    ticket: Ticket
    subject: str
    body: str

    def __str__(self) -> str:
        return f"{self.subject}. {self.body}"


@dataclass(frozen=True, slots=True)
class Extracted:
    """What the chain pulled out of a ticket: keyword hits and error codes."""

    ticket: Ticket
    subject_hits: dict[str, int]
    body_hits: dict[str, int]
    error_codes: tuple[str, ...]

    def __str__(self) -> str:
        codes = f" errors={','.join(self.error_codes)}" if self.error_codes else ""
        return f"subject={self.subject_hits} body={self.body_hits}{codes}"


@dataclass(frozen=True, slots=True)
class Triaged:
    """A ticket and the team it was assigned to."""

    ticket: Ticket
    team: str
    why: str = ""
    """The evidence for the team (e.g. the keyword scores)."""

    def __str__(self) -> str:
        return f"#{self.ticket.id} → {self.team}"


@dataclass(frozen=True, slots=True)
class Reply:
    """A reply drafted for a ticket on behalf of a team."""

    team: str
    text: str
    why: str = ""
    """The evidence for the team, carried from triage."""

    def __str__(self) -> str:
        return f"[{self.team}] {self.text}"


@dataclass(frozen=True, slots=True)
class Vote:
    """The parallel vote's result."""

    team: str
    votes: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.team} ({', '.join(self.votes)})"


@dataclass(frozen=True, slots=True)
class Issue:
    """One issue sentence of a ticket: an orchestrator subtask."""

    index: int
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Dispatch:
    """The orchestrator's result: the owning team and every team its issues raised."""

    team: str
    teams: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.team} (teams: {', '.join(self.teams)})"


# --- Rules leaves --------------------------------------------------------------------------------


@step
async def normalize(ticket: Ticket) -> Normalized:
    """Lower-case, unify spellings (`wifi` → `wi-fi`), collapse whitespace."""

    def clean(text: str) -> str:
        text = " ".join(text.lower().split())
        for pattern, replacement in _SPELLINGS:
            text = pattern.sub(replacement, text)
        return text

    return Normalized(ticket, clean(ticket.subject), clean(ticket.body))


@step
async def extract(ticket: Normalized) -> Extracted:
    """Keyword hits of the subject and of the body, and any error codes."""
    return Extracted(
        ticket.ticket,
        keyword_hits(ticket.subject),
        keyword_hits(ticket.body),
        tuple(_ERROR_CODE.findall(ticket.body)),
    )


@step
async def categorize(found: Extracted) -> Triaged:
    """Weigh the hits (the subject counts double: it is the sender's own summary) and pick a team."""
    score = Counter(found.body_hits)
    for team, n in found.subject_hits.items():
        score[team] += 2 * n
    team = max(FIRST_MATCH_ORDER, key=lambda t: score[t]) if score else UNKNOWN
    why = ", ".join(f"{t} {score[t]}" for t in sorted(score, key=lambda t: (-score[t], t)))
    return Triaged(found.ticket, team, f"scores: {why or 'none'}")


def _reply_text(ticket: Ticket, team: str) -> str:
    owner = "our triage desk" if team == "triage" else f"the {team} team"
    return (
        f"Hi {ticket.sender}, thanks for ticket #{ticket.id} ({ticket.subject}). "
        f"It is with {owner}. Next step: {NEXT_STEPS[team]}."
    )


@step
async def draft(triaged: Triaged) -> Reply:
    """A template reply from the assigned team."""
    team = triaged.team if triaged.team in NEXT_STEPS else "triage"
    return Reply(team, _reply_text(triaged.ticket, team), triaged.why)


def _team_drafter(team: str) -> Step[Ticket, Reply]:
    async def reply(ticket: Ticket) -> Reply:
        return Reply(team, _reply_text(ticket, team))

    return step(label=f"{team} reply")(reply)


@step(label="first match")
async def classify_first_match(ticket: Ticket) -> str:
    """The first team whose keyword appears anywhere in the ticket."""
    return first_match(ticket.text)


@step(label="most hits")
async def classify_most_hits(ticket: Ticket) -> str:
    """The team with the most keyword hits in the whole ticket."""
    return most_hits(ticket.text)


@step(label="body only")
async def classify_body(ticket: Ticket) -> str:
    """The team with the most keyword hits in the body alone (the subject is a summary)."""
    return most_hits(ticket.body)


@step(label="majority")
async def majority(votes: Sequence[str]) -> Vote:
    """The team with most votes; with no majority, the keyword counter's vote (the second)."""
    counts = Counter(votes)
    top, n = counts.most_common(1)[0]
    team = top if n > 1 else votes[1 if len(votes) > 1 else 0]
    return Vote(team, tuple(votes))


@step(label="split issues")
async def split_issues(ticket: Ticket) -> list[Issue]:
    """Each body sentence that names any team's keyword (the whole ticket if none).

    The subject is left out: it summarizes the body, so it would count its issues twice.
    """
    issues = [s for s in _SENTENCE.split(ticket.body.strip()) if keyword_hits(s)]
    return [Issue(i, s) for i, s in enumerate(issues or [ticket.text], 1)]


@step(label="classify issue")
async def classify_issue(issue: Issue) -> str:
    """The team with the most keyword hits in one issue sentence."""
    return most_hits(issue.text)


@step(label="assign owner")
async def assign_owner(done: Synthesis[Ticket, Issue, str]) -> Dispatch:
    """The team raised by most issue sentences owns the ticket (earliest on a tie); all are listed."""
    teams = [t for t in done.results if t != UNKNOWN]
    if not teams:
        return Dispatch(UNKNOWN, ())
    counts = Counter(teams)
    ordered = tuple(dict.fromkeys(teams))
    owner = max(ordered, key=lambda t: counts[t])
    return Dispatch(owner, ordered)


CHECKLIST = (
    "greets the sender by name",
    "cites the ticket number",
    "names the team that has it",
    "gives a next step",
    f"has at most {REPLY_WORD_LIMIT} words",
)
"""What the refine pattern's checker requires of a reply, in the order it reports misses."""


def check_reply(triaged: Triaged, text: str) -> list[str]:
    """The checklist items a reply misses.

    Args:
        triaged: The ticket and its team.
        text: The reply.

    Returns:
        The missed `CHECKLIST` items, in checklist order (empty when the reply passes).
    """
    lower = text.lower()
    checks = (
        triaged.ticket.sender.lower() in " ".join(lower.split()[:3]),
        f"#{triaged.ticket.id}" in text,
        f"{triaged.team} team" in lower,
        "next step:" in lower,
        len(text.split()) <= REPLY_WORD_LIMIT,
    )
    return [item for item, ok in zip(CHECKLIST, checks, strict=True) if not ok]


@step(label="write reply")
async def write_reply(attempt: Attempt[Triaged, Reply]) -> Reply:
    """Round 1: a bare acknowledgement. Later rounds fix at most two of the checker's misses."""
    ticket, team = attempt.input.ticket, attempt.input.team
    if attempt.previous is None:
        return Reply(team, "Thanks for your message, we are looking into it.")
    text = attempt.previous.text
    for item in attempt.feedback.split("; ")[:2]:
        if item == CHECKLIST[0]:
            text = f"Hi {ticket.sender}, {text[0].lower()}{text[1:]}"
        elif item == CHECKLIST[1]:
            text = f"{text} This is ticket #{ticket.id}."
        elif item == CHECKLIST[2]:
            text = f"{text} The {team} team has it."
        elif item == CHECKLIST[3]:
            text = f"{text} Next step: {NEXT_STEPS.get(team, NEXT_STEPS['triage'])}."
    return Reply(team, text)


@step(label="check reply")
async def check_reply_step(candidate: Candidate[Triaged, Reply]) -> Judgement:
    """Pass when nothing on the checklist is missed; otherwise list the misses as feedback."""
    missed = check_reply(candidate.input, candidate.draft.text)
    return Judgement("pass") if not missed else Judgement("revise", "; ".join(missed))


@step(label="categorize")
async def categorize_ticket(ticket: Ticket) -> Triaged:
    """The keyword-count team of the whole ticket."""
    return Triaged(ticket, most_hits(ticket.text))


# --- Model leaves --------------------------------------------------------------------------------

CLASSIFY_SYSTEM = (
    "You route IT support tickets. Teams: network (VPN, Wi-Fi, connectivity), accounts (logins, "
    "passwords, new accounts), hardware (laptops, printers, monitors, phones), software "
    "(applications, installs, licences), security (phishing, lost or stolen devices). Answer with "
    "the one team that should own the ticket."
)
"""The model classifier's system prompt."""
DRAFT_SYSTEM = (
    "You write short, friendly replies to IT support tickets on behalf of the team that has them. "
    "Greet the sender by name, cite the ticket number as #N, say which team has it as "
    "'the <team> team', give one line starting 'Next step:', and stay under 70 words."
)
"""The model drafter's system prompt."""


def _model_leaves() -> _ModelLeaves:
    return _ModelLeaves()


class _ModelLeaves:
    """Prompt steps for the model variant (pydantic is imported only when they are built)."""

    def __init__(self) -> None:
        from pydantic import BaseModel

        from tui_assist.workflow.prompt import PromptStep

        class TeamChoice(BaseModel):
            team: str

        class ReplyDraft(BaseModel):
            reply: str

        self.PromptStep = PromptStep
        self.TeamChoice = TeamChoice
        self.ReplyDraft = ReplyDraft

    def classifier(self, label: str, render: Callable[[T], str]) -> Step[T, str]:
        """`ask model` (a prompt step), then `team`: the answer, trimmed and lower-cased."""
        ask = self.PromptStep("ask model", self.TeamChoice, render, system=CLASSIFY_SYSTEM, max_tokens=200)

        @step(label="team")
        async def team(choice: Any) -> str:
            return str(choice.team).strip().lower()

        return Chain(ask, team, label=label)

    def drafter(self, label: str, render: Callable[[T], str]) -> Step[T, str]:
        """`ask model` (a prompt step), then `reply text`."""
        ask = self.PromptStep("ask model", self.ReplyDraft, render, system=DRAFT_SYSTEM, max_tokens=400)

        @step(label="reply text")
        async def text(draft: Any) -> str:
            return str(draft.reply)

        return Chain(ask, text, label=label)


def _ticket_prompt(ticket: Ticket) -> str:
    return f"Ticket #{ticket.id} from {ticket.sender}\nSubject: {ticket.subject}\n\n{ticket.body}"


def _extracted_prompt(found: Extracted) -> str:
    return _ticket_prompt(found.ticket)


def _triaged_prompt(triaged: Triaged) -> str:
    return f"{_ticket_prompt(triaged.ticket)}\n\nTeam: {triaged.team}"


def _issue_prompt(issue: Issue) -> str:
    return issue.text


def _body_prompt(ticket: Ticket) -> str:
    return ticket.body


def _subject_prompt(ticket: Ticket) -> str:
    return ticket.subject


def _draft_prompt(attempt: Attempt[Triaged, Reply]) -> str:
    prompt = f"{_ticket_prompt(attempt.input.ticket)}\n\nTeam: {attempt.input.team}"
    if attempt.previous is not None:
        prompt += (
            f"\n\nYour previous reply:\n{attempt.previous.text}\n\n"
            f"A reviewer found it misses: {attempt.feedback}"
        )
    return prompt


# --- The five patterns ---------------------------------------------------------------------------


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
    model = _model_leaves()
    classify = model.classifier("classify", _extracted_prompt)
    write = model.drafter("write reply", _triaged_prompt)
    return (
        normalize.then(extract)
        .then(_Annotate("categorize", classify, lambda found, team: Triaged(found.ticket, team)))
        .then(_Annotate("draft", write, lambda triaged, text: Reply(triaged.team, text)))
    )


def _build_router(leaves: Leaves) -> Step[Ticket, Reply]:
    classifier = (
        classify_first_match if leaves == "rules" else _model_leaves().classifier("classify", _ticket_prompt)
    )
    return Route(
        classifier,
        {team: _team_drafter(team) for team in TEAMS},
        fallback=_team_drafter("triage"),
        fallback_label=UNKNOWN,
    )


def _build_vote(leaves: Leaves) -> Step[Ticket, Vote]:
    if leaves == "rules":
        return Parallel([classify_first_match, classify_most_hits, classify_body], majority)
    model = _model_leaves()
    return Parallel(
        [
            model.classifier("whole ticket", _ticket_prompt),
            model.classifier("body only", _body_prompt),
            model.classifier("subject only", _subject_prompt),
        ],
        majority,
    )


def _build_orchestrator(leaves: Leaves) -> Step[Ticket, Dispatch]:
    worker = (
        classify_issue if leaves == "rules" else _model_leaves().classifier("classify issue", _issue_prompt)
    )
    return OrchestratorWorkers(split_issues, worker, assign_owner, max_concurrency=2)


def _build_refine(leaves: Leaves) -> Step[Ticket, Refined[Reply, Judgement]]:
    if leaves == "rules":
        return categorize_ticket.then(Refine(write_reply, check_reply_step, max_rounds=REFINE_ROUNDS))
    model = _model_leaves()
    classify = model.classifier("classify", _ticket_prompt)
    write = _Annotate("write reply", model.drafter("draft", _draft_prompt), _attempt_reply)
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


# --- Running -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TicketResult:
    """One pattern's result on one ticket."""

    pattern: PatternName
    ticket: int
    expected: str
    got: str
    """The team assigned, or `error`."""
    correct: bool
    steps: int
    """Steps the run started (leaves and combinators)."""
    detail: str
    error: str | None = None

    def to_dict(self, leaves: Leaves) -> dict[str, Any]:
        """A JSON-ready row."""
        return {
            "leaves": leaves,
            "pattern": self.pattern,
            "ticket": self.ticket,
            "expected": self.expected,
            "got": self.got,
            "correct": self.correct,
            "steps": self.steps,
            "detail": self.detail,
            "error": self.error,
        }


async def run_pattern(
    name: PatternName,
    ticket: Ticket,
    observer: TurnObserver | None = None,
    *,
    leaves: Leaves = "rules",
    provider: Provider | None = None,
    workflow: Step[Ticket, Any] | None = None,
    parent_id: str | None = None,
) -> TicketResult:
    """Run one pattern on one ticket and judge the result.

    A route's invalid label, an unparseable model reply or an exhausted budget is a failed
    result (`got="error"`), not an exception; provider failures and cancellation propagate.

    Args:
        name: The pattern.
        ticket: The ticket.
        observer: Where node events go (`None`: no events).
        leaves: `rules` or `model`.
        provider: The model backend for `model` leaves.
        workflow: A prebuilt `build_pattern(name, leaves)` to reuse across tickets.
        parent_id: The node the run hangs under, if any.

    Returns:
        The result.
    """
    from tui_assist.core.budget import BudgetExhausted

    pattern = PATTERNS[name]
    flow = workflow if workflow is not None else pattern.build(leaves)
    tracker = WorkflowBudgetTracker(WorkflowBudget(max_steps=500, max_model_requests=50))
    try:
        output = await run_reporting(
            flow, ticket, observer, budget=tracker, provider=provider, parent_id=parent_id
        )
    except (ValueError, BudgetExhausted) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return TicketResult(name, ticket.id, ticket.category, "error", False, tracker.steps, message, message)
    verdict = pattern.read(output, ticket, leaves)
    correct = verdict.acceptable and verdict.team == ticket.category
    return TicketResult(
        name, ticket.id, ticket.category, verdict.team, correct, tracker.steps, verdict.detail
    )


async def run_benchmark(
    *,
    leaves: Leaves = "rules",
    provider: Provider | None = None,
    tickets: Sequence[Ticket] | None = None,
    patterns: Sequence[PatternName] = PATTERN_NAMES,
) -> list[TicketResult]:
    """Run every pattern on every ticket, one at a time, in order.

    Args:
        leaves: `rules` or `model`.
        provider: The model backend for `model` leaves.
        tickets: The tickets (the packaged twelve by default).
        patterns: The patterns to run.

    Returns:
        One result per pattern and ticket, pattern by pattern.
    """
    results: list[TicketResult] = []
    for name in patterns:
        flow = build_pattern(name, leaves)
        for ticket in tickets if tickets is not None else load_tickets():
            results.append(await run_pattern(name, ticket, leaves=leaves, provider=provider, workflow=flow))
    return results


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_report(results: Sequence[TicketResult], source: str, leaves: Leaves = "rules") -> str:
    """The benchmark's text report: a summary per pattern, then each ticket's result.

    Args:
        results: `run_benchmark`'s results.
        source: What the leaves were (printed in the heading).
        leaves: Which leaves ran (picks each pattern's description).

    Returns:
        The report, ending with a newline; the same results always give the same text.
    """
    by_pattern: dict[str, list[TicketResult]] = {}
    for result in results:
        by_pattern.setdefault(result.pattern, []).append(result)
    tickets = len({r.ticket for r in results})

    def how(name: str) -> str:
        pattern = PATTERNS[cast(PatternName, name)]
        return pattern.model_summary if leaves == "model" and pattern.model_summary else pattern.summary

    lines = [f"help-desk benchmark: {tickets} tickets, {source}", ""]
    lines.append(f"{'pattern':<14}{'correct':>8}{'steps':>7}  how")
    for name, rows in by_pattern.items():
        correct = f"{sum(r.correct for r in rows)}/{len(rows)}"
        lines.append(f"{name:<14}{correct:>8}{sum(r.steps for r in rows):>7}  {how(name)}")
    for name, rows in by_pattern.items():
        lines += ["", f"{name}: {how(name)}"]
        lines.append(f"  {'ticket':<7}{'expected':<10}{'got':<10}{'ok':<4}{'steps':>5}  detail")
        for r in rows:
            mark = "✓" if r.correct else "✗"
            lines.append(
                f"  {'#' + str(r.ticket):<7}{r.expected:<10}{r.got:<10}{mark:<4}{r.steps:>5}"
                f"  {_clip(r.detail, 72)}"
            )
    return "\n".join(lines) + "\n"
