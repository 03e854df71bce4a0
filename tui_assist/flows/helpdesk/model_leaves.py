# pyright: strict
"""The model variant's leaves: classifiers and drafters as `PromptStep`s on the run's provider.

Splitting, voting and the checklist stay rules; only classifying and drafting go to the model.
pydantic and the prompt step are imported only when the model leaves are built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tui_assist.flows.helpdesk.leaves import Extracted, Issue, Reply, Triaged
from tui_assist.flows.helpdesk.tickets import Ticket
from tui_assist.workflow import Attempt, Chain, Step, step

T = TypeVar("T")

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


def model_leaves() -> ModelLeaves:
    """The prompt-step factory of the model variant."""
    return ModelLeaves()


class ModelLeaves:
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


def ticket_prompt(ticket: Ticket) -> str:
    """The whole ticket: number, sender, subject and body."""
    return f"Ticket #{ticket.id} from {ticket.sender}\nSubject: {ticket.subject}\n\n{ticket.body}"


def extracted_prompt(found: Extracted) -> str:
    """The ticket behind the chain's extracted hits."""
    return ticket_prompt(found.ticket)


def triaged_prompt(triaged: Triaged) -> str:
    """The ticket and the team it was assigned to."""
    return f"{ticket_prompt(triaged.ticket)}\n\nTeam: {triaged.team}"


def issue_prompt(issue: Issue) -> str:
    """One issue sentence."""
    return issue.text


def body_prompt(ticket: Ticket) -> str:
    """The body alone."""
    return ticket.body


def subject_prompt(ticket: Ticket) -> str:
    """The subject alone."""
    return ticket.subject


def draft_prompt(attempt: Attempt[Triaged, Reply]) -> str:
    """The ticket and its team, with the previous reply and its misses on a retry."""
    prompt = f"{ticket_prompt(attempt.input.ticket)}\n\nTeam: {attempt.input.team}"
    if attempt.previous is not None:
        prompt += (
            f"\n\nYour previous reply:\n{attempt.previous.text}\n\n"
            f"A reviewer found it misses: {attempt.feedback}"
        )
    return prompt
