from __future__ import annotations

import io
import json
from typing import Any

import pytest

from tests.workflow.helpers import assert_balanced
from tui_assist.cli.flows import bench_helpdesk
from tui_assist.core.model import ModelRequest, ProviderError
from tui_assist.core.observer import RecordingObserver
from tui_assist.flows.helpdesk import (
    DEFAULT_TICKET_TEXT,
    PATTERN_NAMES,
    TEAMS,
    Ticket,
    build_pattern,
    load_tickets,
    run_pattern,
)
from tui_assist.flows.helpdesk.model_leaves import DRAFT_SYSTEM
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.workflow import node_shape

# What each pattern assigns to tickets 1..12 with rules leaves. The truth is
#   network accounts hardware software security hardware software network accounts hardware security network
EXPECTED_GOT = {
    "chain": "network accounts hardware software accounts hardware software network accounts software security network",
    "router": "network accounts hardware software security hardware software network accounts network security accounts",
    "vote": "network accounts hardware software security hardware software network accounts software security network",
    "orchestrator": "network accounts hardware software accounts hardware software network accounts hardware security accounts",
    "refine": "network accounts hardware software accounts hardware software network accounts software security network",
}
EXPECTED_CORRECT = {"chain": 10, "router": 10, "vote": 11, "orchestrator": 10, "refine": 10}


async def _report(**kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await bench_helpdesk(out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


def test_the_fixture_has_twelve_tickets_with_known_teams() -> None:
    tickets = load_tickets()
    assert [t.id for t in tickets] == list(range(1, 13))
    assert {t.category for t in tickets} == set(TEAMS)
    assert all(set(t.also) <= set(TEAMS) for t in tickets)
    twelve = tickets[11]
    assert "password" in twelve.text.lower() and "vpn" in twelve.text.lower()
    assert twelve.category == "network"


async def test_the_table_per_pattern_and_ticket() -> None:
    code, text, _ = await _report(as_json=True, leaves="rules")
    assert code == 0
    rows = json.loads(text)
    assert len(rows) == 5 * 12
    for pattern in PATTERN_NAMES:
        mine = [r for r in rows if r["pattern"] == pattern]
        assert [r["ticket"] for r in mine] == list(range(1, 13))
        assert " ".join(r["got"] for r in mine) == EXPECTED_GOT[pattern], pattern
        assert sum(r["correct"] for r in mine) == EXPECTED_CORRECT[pattern], pattern
        assert all(r["leaves"] == "rules" and r["error"] is None and r["steps"] > 0 for r in mine)


async def test_the_router_honestly_sends_ticket_12_to_accounts() -> None:
    result = await run_pattern("router", load_tickets()[11])
    assert (result.expected, result.got, result.correct) == ("network", "accounts", False)
    assert result.detail == "first match: 'password' → accounts"
    # the patterns that weigh all the evidence get it right
    for pattern in ("chain", "vote", "refine"):
        assert (await run_pattern(pattern, load_tickets()[11])).got == "network"


async def test_the_text_report() -> None:
    code, text, err = await _report(as_json=False, leaves="rules")
    assert code == 0 and err == ""
    lines = text.splitlines()
    assert lines[0] == "help-desk benchmark: 12 tickets, rules leaves (deterministic)"
    assert lines[3].split()[:3] == ["chain", "10/12", "84"]
    assert lines[4].split()[:3] == ["router", "10/12", "36"]
    assert lines[5].split()[:3] == ["vote", "11/12", "60"]
    assert lines[6].split()[:3] == ["orchestrator", "10/12", "58"]
    assert lines[7].split()[:3] == ["refine", "10/12", "108"]
    assert "  #12    network   accounts  ✗       3  first match: 'password' → accounts" in lines
    assert "  #10    hardware  hardware  ✓       5  teams: hardware, software (all it needs)" in lines


@pytest.mark.parametrize("as_json", [False, True])
async def test_two_runs_print_the_same_bytes(as_json: bool) -> None:
    first = await _report(as_json=as_json, leaves="rules")
    second = await _report(as_json=as_json, leaves="rules")
    assert first[0] == 0
    assert first[1].encode() == second[1].encode()


async def test_each_pattern_reports_its_composition_tree() -> None:
    ticket = load_tickets()[11]
    shapes: dict[str, str] = {}
    for pattern in PATTERN_NAMES:
        observer = RecordingObserver()
        await run_pattern(pattern, ticket, observer)
        assert_balanced(observer.events)
        shapes[pattern] = node_shape(observer.events)
    assert shapes == {
        "chain": "Chain(Chain(Chain(normalize, extract), categorize), draft)",
        "router": "Route(first match, accounts reply)",
        "vote": "Parallel(first match, most hits, body only, majority)",
        "orchestrator": "OrchestratorWorkers(split issues, classify issue[1], classify issue[2], assign owner)",
        "refine": (
            "Chain(categorize, Refine(round 1(write reply, check reply), "
            "round 2(write reply, check reply), round 3(write reply, check reply)))"
        ),
    }


async def test_the_explorers_default_ticket_goes_to_network_everywhere() -> None:
    ticket = Ticket.from_text(DEFAULT_TICKET_TEXT)
    assert (ticket.id, ticket.subject, ticket.category) == (0, DEFAULT_TICKET_TEXT, "")
    for pattern in PATTERN_NAMES:
        result = await run_pattern(pattern, ticket)
        assert result.got == "network", pattern
        assert not result.correct  # an ad-hoc ticket has no known answer


def test_patterns_describe_their_composition_statically() -> None:
    assert build_pattern("vote").describe() == "Parallel(first match, most hits, body only, majority)"
    assert build_pattern("router").describe().startswith("Route(first match, network reply, accounts reply")


# --- model leaves -------------------------------------------------------------------------------


def _model_reply(request: ModelRequest) -> str:
    """A stand-in model: keyword guesses, one invalid label, and a drafter that ignores feedback."""
    text = request.messages[0].text.lower()
    if request.system.startswith(DRAFT_SYSTEM):
        return json.dumps({"reply": "Hi there, we have your ticket. Next step: we call you."})
    if "printer" in text:
        return '{"team": "Printers"}'  # not a team: the router must reject it
    if "vpn" in text or "wi-fi" in text:
        return '{"team": "Network"}'
    return '{"team": "hardware"}'


async def test_model_leaves_are_reported_separately() -> None:
    provider = ScriptedProvider([_model_reply] * 500)
    code, text, _ = await _report(as_json=True, leaves="model", provider_factory=lambda: provider)
    assert code == 0
    rows = json.loads(text)
    assert len(rows) == 60 and {r["leaves"] for r in rows} == {"model"}
    by = {(r["pattern"], r["ticket"]): r for r in rows}
    assert by[("router", 1)]["got"] == "network" and by[("router", 1)]["correct"]
    routed_printer = by[("router", 6)]
    assert routed_printer["got"] == "error" and not routed_printer["correct"]
    assert "returned 'printers', which is not one of" in routed_printer["error"]
    # the drafter never cites the ticket or names the team, so no refine reply passes
    assert not any(by[("refine", t)]["correct"] for t in range(1, 13))
    assert "max_rounds" in by[("refine", 1)]["detail"]
    revisions = [r for r in provider.requests if "A reviewer found it misses:" in r.messages[0].text]
    assert revisions and "cites the ticket number" in revisions[0].messages[0].text


async def test_model_report_heading_names_the_provider() -> None:
    provider = ScriptedProvider([_model_reply] * 500)
    code, text, _ = await _report(as_json=False, leaves="model", provider_factory=lambda: provider)
    assert code == 0
    assert text.splitlines()[0] == (
        "help-desk benchmark: 12 tickets, model leaves via scripted / scripted (separate from the rules scores)"
    )
    assert "a model classifier routes to one team's drafter" in text


async def test_usage_errors_and_provider_failures() -> None:
    code, out, err = await _report(as_json=False, leaves="llm")
    assert (code, out) == (2, "") and "unknown leaves 'llm'" in err
    code, out, err = await _report(as_json=False, leaves="model")
    assert (code, out) == (2, "") and "needs a configured provider" in err

    def broken() -> ScriptedProvider:
        raise ProviderError("no API key")

    code, out, err = await _report(as_json=False, leaves="model", provider_factory=broken)
    assert (code, out) == (1, "") and "no API key" in err
    code, out, err = await _report(
        as_json=False, leaves="model", provider_factory=lambda: ScriptedProvider([])
    )
    assert (code, out) == (1, "") and "script exhausted" in err


def test_the_rules_benchmark_loads_no_textual_pydantic_or_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import asyncio, io, sys\n"
        "from tui_assist.cli.flows import bench_helpdesk\n"
        "asyncio.run(bench_helpdesk(as_json=False, leaves='rules', out=io.StringIO()))\n"
        "print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert not set(out.split()) & {"textual", "pydantic", "anthropic"}
