# pyright: strict
"""The values passed between the patterns' steps, and the rules leaves (deterministic steps).

Every leaf is a `@step`: keyword classifiers, template drafts, the issue splitter, the vote and
the refine checklist, so a run with rules leaves is reproducible to the byte.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tui_assist.flows.helpdesk.tickets import (
    FIRST_MATCH_ORDER,
    SENTENCE,
    UNKNOWN,
    Ticket,
    first_match,
    keyword_hits,
    most_hits,
)
from tui_assist.workflow import Attempt, Candidate, Judgement, Step, Synthesis, step

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

_SPELLINGS = ((re.compile(r"\bwi\s?fi\b"), "wi-fi"), (re.compile(r"\be-mail\b"), "email"))
_ERROR_CODE = re.compile(r"\berror\s+([0-9][0-9.]*[0-9])")


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


def team_drafter(team: str) -> Step[Ticket, Reply]:
    """A template reply on behalf of `team` (the router's branches)."""

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
    issues = [s for s in SENTENCE.split(ticket.body.strip()) if keyword_hits(s)]
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
