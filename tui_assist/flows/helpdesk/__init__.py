# pyright: strict
"""The help-desk benchmark: five workflow patterns over twelve IT support tickets.

Modules: `tickets` (the tickets, packaged in `data/`, and keyword classification), `leaves` (the
values passed between steps and the rules leaves), `model_leaves` (prompt-step leaves),
`patterns` (the five patterns and what each one's output means), `run` (running and the report)
and `commands` (`tui-assist bench helpdesk`). This package's names are what the Explorer and the
command use.
"""

from __future__ import annotations

from tui_assist.flows.helpdesk.patterns import (
    PATTERN_NAMES,
    PATTERNS,
    Leaves,
    Pattern,
    PatternName,
    build_pattern,
)
from tui_assist.flows.helpdesk.run import TicketResult, format_report, run_benchmark, run_pattern
from tui_assist.flows.helpdesk.tickets import DEFAULT_TICKET_TEXT, TEAMS, Ticket, load_tickets

__all__ = [
    "DEFAULT_TICKET_TEXT",
    "PATTERNS",
    "PATTERN_NAMES",
    "TEAMS",
    "Leaves",
    "Pattern",
    "PatternName",
    "Ticket",
    "TicketResult",
    "build_pattern",
    "format_report",
    "load_tickets",
    "run_benchmark",
    "run_pattern",
]
