# pyright: strict
"""The help-desk benchmark: five workflow patterns over twelve IT support tickets.

Modules: `patterns` (the tickets, the leaves, the five patterns, running and the report, with the
packaged tickets in `data/`) and `commands` (`tui-assist bench helpdesk`). This package's names
are what the Explorer and the command use.
"""

from __future__ import annotations

from tui_assist.flows.helpdesk.patterns import (
    DEFAULT_TICKET_TEXT,
    PATTERN_NAMES,
    PATTERNS,
    TEAMS,
    Leaves,
    Pattern,
    PatternName,
    Ticket,
    TicketResult,
    build_pattern,
    format_report,
    load_tickets,
    run_benchmark,
    run_pattern,
)

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
