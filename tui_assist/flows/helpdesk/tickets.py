# pyright: strict
"""The help-desk tickets and the deterministic keyword classification every rules leaf uses.

The twelve tickets ship inside the package (`helpdesk/data/tickets.json`), so an installed wheel
has them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, cast

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
SENTENCE = re.compile(r"(?<=[.!?])\s+")
"""Where a sentence ends (a ticket's subject is its first sentence; issues are sentences)."""


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
        first = SENTENCE.split(text.strip(), maxsplit=1)[0].rstrip(".!?")
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
