"""The critic: a separate, tool-less request that judges a round's answer against its evidence."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tui_assist.core.agent import ToolCallRecord
from tui_assist.core.budget import BudgetTracker
from tui_assist.core.conversation import Message, TextBlock, Usage
from tui_assist.core.events import UsageRecorded, Verdict, VerdictReached
from tui_assist.core.model import ModelRequest, Provider
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import NodeSink, TurnObserver
from tui_assist.core.text import truncate_middle

_VERDICT = re.compile(r"^[\W_]*(pass|revise)(?![a-z])[\W_]*", re.IGNORECASE)
EVIDENCE_OUTPUT_LIMIT = 8_000
"""Characters of one tool result shown to the critic; longer results keep head and tail."""


def parse_verdict(reply: str) -> tuple[Verdict, str]:
    """Read a critic reply: `PASS` or `REVISE` on the first line, the rest is feedback.

    Surrounding punctuation and Markdown emphasis (`**PASS**`, `Pass:`) are ignored; a reply that
    starts with anything else counts as REVISE, and all of it is feedback.

    Returns:
        The verdict and the feedback text.
    """
    text = reply.strip()
    first, _, rest = text.partition("\n")
    match = _VERDICT.match(first)
    if match is None:
        return "revise", text
    verdict: Verdict = "pass" if match.group(1).lower() == "pass" else "revise"
    feedback = "\n".join(part for part in (first[match.end() :].strip(), rest.strip()) if part)
    return verdict, feedback


def format_evidence(evidence: Sequence[ToolCallRecord]) -> str:
    """Render a round's tool calls and results, in execution order, for the critic."""
    if not evidence:
        return "(no tool calls were made in this round)"
    parts: list[str] = []
    for i, call in enumerate(evidence, 1):
        status = "ERROR" if call.is_error else "ok"
        parts.append(
            f"[{i}] {call.name} {json.dumps(call.input, ensure_ascii=False)}\n"
            f"status: {status}\nresult:\n{truncate_middle(call.output, EVIDENCE_OUTPUT_LIMIT)}"
        )
    return "\n\n".join(parts)


def critic_message(task: str, evidence: Sequence[ToolCallRecord], answer: str) -> Message:
    """The critic's single user message: the task, the evidence, then the candidate answer."""
    return Message(
        "user",
        (
            TextBlock(f"<task>\n{task}\n</task>"),
            TextBlock(f"<evidence>\n{format_evidence(evidence)}\n</evidence>"),
            TextBlock(f"<candidate_answer>\n{answer or '(empty answer)'}\n</candidate_answer>"),
        ),
    )


@dataclass(frozen=True, slots=True)
class Critique:
    """A critic's judgement of one round."""

    verdict: Verdict
    feedback: str
    usage: Usage


async def critique(
    *,
    provider: Provider,
    observer: TurnObserver,
    budget: BudgetTracker,
    system: str,
    task: str,
    evidence: Sequence[ToolCallRecord],
    answer: str,
    round_index: int,
    parent_id: str,
    max_tokens: int = 2048,
) -> Critique:
    """Ask the critic to judge one round, under a `critic` node, and report the verdict.

    Raises:
        BudgetExhausted: when the budget allows no further model request.
        ProviderError: when the critic call fails for good.
    """
    with NodeScope(observer, "critic", "critic", parent_id) as node:
        budget.before_model_request()
        request = ModelRequest(
            system=system, messages=[critic_message(task, evidence, answer)], tools=(), max_tokens=max_tokens
        )
        response = await provider.complete(request, NodeSink(observer, node.node_id))
        budget.record(response.usage)
        observer.on_event(UsageRecorded(node_id=node.node_id, usage=response.usage, model=response.model))
        verdict, feedback = parse_verdict(response.message.text)
        observer.on_event(
            VerdictReached(node_id=node.node_id, round=round_index, verdict=verdict, feedback=feedback)
        )
        node.finish(outcome=verdict, output=feedback)
        return Critique(verdict, feedback, response.usage)
