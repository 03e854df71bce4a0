"""The critic: a separate, tool-less request that judges a round's answer against its evidence.

Its one user message holds, in this order (a contract): the conversation context (the last few
clean prompt/answer pairs, so a follow-up such as "now the other file" can be understood), the
task, the evidence (the round's tool calls and results, as executed) and the candidate answer.
Context and task come first because every round repeats them: the provider may cache them, and
only the evidence and the answer change between rounds.

Everything is bounded so the request fits the model's window: the context to about
`CONTEXT_TOKENS`, and the whole input to `max_input_tokens`, by cutting the evidence (whole calls
from its middle first, with a marker) when it would not fit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tui_assist.core.budget import BudgetTracker
from tui_assist.core.compaction import is_tool_results
from tui_assist.core.conversation import Message, TextBlock, Usage
from tui_assist.core.events import UsageRecorded, Verdict, VerdictReached
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.model import ModelRequest, Provider
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import NodeSink, TurnObserver
from tui_assist.core.text import estimate_tokens, truncate_middle

_VERDICT = re.compile(r"^[\W_]*(pass|revise)(?![a-z])[\W_]*", re.IGNORECASE)

EVIDENCE_OUTPUT_LIMIT: Final = 8_000
"""Characters of one tool result shown to the critic; longer results keep head and tail."""
CONTEXT_PAIRS: Final = 3
"""Earlier prompt/answer pairs of the conversation the critic sees."""
CONTEXT_TOKENS: Final = 4_000
"""About how many tokens that context may take; the oldest part is cut first."""
DEFAULT_CRITIC_INPUT_TOKENS: Final = 150_000
"""Estimated tokens the whole critic input may take when the host names no window: Claude's
200,000-token window, less the reply and a margin for the estimate (characters / 4 runs low on
code and JSON)."""
CRITIC_MAX_TOKENS: Final = 2048
"""The longest reply the critic may write."""

_CONTEXT_PREAMBLE = (
    "Earlier turns of this conversation, for reference only: they say what the task refers to. "
    "Judge only the candidate answer below, against this round's evidence."
)
_NO_EVIDENCE = "(no tool calls were made in this round)"


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


# --------------------------------------------------------------------------- context


def clean_pairs(history: Sequence[Message]) -> list[tuple[str, str]]:
    """The conversation's prompt/answer pairs, oldest first, without tool traffic.

    A prompt is a user message that holds text and no tool results; its answer is the text of
    the last assistant message before the next prompt (an agent turn's transcript also holds
    the text it wrote between tool calls, which is not the answer).

    Args:
        history: The conversation's messages.

    Returns:
        `(prompt, answer)` pairs; the answer is empty when the turn left none.
    """
    pairs: list[tuple[str, str]] = []
    prompt: str | None = None
    answer = ""
    for message in history:
        if message.role == "user":
            if is_tool_results(message) or not message.text.strip():
                continue
            if prompt is not None:
                pairs.append((prompt, answer))
            prompt, answer = message.text, ""
        elif message.text.strip():
            answer = message.text
    if prompt is not None:
        pairs.append((prompt, answer))
    return pairs


def format_context(
    history: Sequence[Message], *, pairs: int = CONTEXT_PAIRS, max_tokens: int = CONTEXT_TOKENS
) -> str:
    """The critic's conversation context: the last `pairs` clean pairs, in about `max_tokens`.

    Whole pairs are dropped from the oldest end first; if even the newest pair is too long, its
    prompt and answer keep their heads and tails. Either cut leaves a marker.

    Args:
        history: The conversation's messages before this turn.
        pairs: How many pairs at most.
        max_tokens: About how many tokens the context may take (estimated as characters / 4).

    Returns:
        The `<conversation_context>` block, or "" when there is no earlier turn.
    """
    chosen = clean_pairs(history)[-pairs:] if pairs > 0 else []
    if not chosen:
        return ""
    rendered = [_render_pair(p, a) for p, a in chosen]
    budget = max(0, max_tokens * 4 - len(_CONTEXT_PREAMBLE) - 200)  # the wrapping tags and marker
    kept: list[str] = []
    used = 0
    for text in reversed(rendered):
        if used + len(text) > budget:
            break
        kept.insert(0, text)
        used += len(text)
    if not kept:  # the newest pair alone is too long: keep both its ends
        prompt, answer = chosen[-1]
        half = budget // 2
        kept = [_render_pair(truncate_middle(prompt, half), truncate_middle(answer, half))]
    omitted = len(chosen) - len(kept)
    marker = [f"[{omitted} earlier exchange(s) omitted to keep the context short]"] if omitted else []
    body = "\n".join([_CONTEXT_PREAMBLE, *marker, *kept])
    return f"<conversation_context>\n{body}\n</conversation_context>"


def _render_pair(prompt: str, answer: str) -> str:
    return f"<user>\n{prompt}\n</user>\n<assistant>\n{answer or '(no answer)'}\n</assistant>"


# --------------------------------------------------------------------------- evidence


def _format_call(index: int, call: ToolCallRecord, limit: int = EVIDENCE_OUTPUT_LIMIT) -> str:
    status = "ERROR" if call.is_error else "ok"
    tool_input = truncate_middle(json.dumps(call.input, ensure_ascii=False), limit)
    output = truncate_middle(call.output, limit)
    return f"[{index}] {call.name} {tool_input}\nstatus: {status}\nresult:\n{output}"


def format_evidence(evidence: Sequence[ToolCallRecord], *, max_chars: int | None = None) -> str:
    """Render a round's tool calls and results, in execution order, for the critic.

    Calls are numbered `[1]`, `[2]`... as they ran, so feedback can cite them. When the whole
    would pass `max_chars`, calls are left out from the middle (the last calls show how the round
    ended, the first what was read), with a marker naming them; numbering is kept.

    Args:
        evidence: The round's tool calls, in execution order.
        max_chars: How long the rendering may be; None for no limit.

    Returns:
        The evidence text.
    """
    if not evidence:
        return _NO_EVIDENCE
    parts = [_format_call(i, call) for i, call in enumerate(evidence, 1)]
    whole = "\n\n".join(parts)
    if max_chars is None or len(whole) <= max_chars:
        return whole
    return _cut_evidence(evidence, parts, max_chars)


_MIN_SHORTENED_CALL = 600
"""Characters worth spending on a call that no longer fits whole (its head and tail)."""


def _cut_evidence(evidence: Sequence[ToolCallRecord], parts: list[str], max_chars: int) -> str:
    room = max(0, max_chars - 120)  # the marker
    last = len(parts) - 1
    # Outside in, the last call first: [n, 1, n-1, 2, ...].
    order = dict.fromkeys(i for pair in zip(range(last, -1, -1), range(last + 1), strict=True) for i in pair)
    kept: dict[int, str] = {}
    for i in order:
        if len(parts[i]) + 2 <= room:
            kept[i] = parts[i]
            room -= len(parts[i]) + 2
            continue
        if room >= _MIN_SHORTENED_CALL:  # the first call that does not fit whole: its two ends
            header = len(parts[i]) - len(evidence[i].output)
            limit = max(100, (room - min(header, room // 2) - 120) // 2)
            kept[i] = truncate_middle(_format_call(i + 1, evidence[i], limit), room - 2)
        break
    out: list[str] = []
    gap: list[int] = []
    for i in range(len(parts)):
        if i in kept:
            out += _omitted_marker(gap)
            gap = []
            out.append(kept[i])
        else:
            gap.append(i + 1)
    out += _omitted_marker(gap)
    return "\n\n".join(out)


def _omitted_marker(numbers: list[int]) -> list[str]:
    if not numbers:
        return []
    which = f"[{numbers[0]}]" if len(numbers) == 1 else f"[{numbers[0]}] to [{numbers[-1]}]"
    return [f"[... tool calls {which} omitted to fit the critic's input window ...]"]


# --------------------------------------------------------------------------- the request


def critic_message(
    task: str,
    evidence: Sequence[ToolCallRecord],
    answer: str,
    *,
    history: Sequence[Message] = (),
    max_input_tokens: int = DEFAULT_CRITIC_INPUT_TOKENS,
    reserved_tokens: int = 0,
) -> Message:
    """The critic's single user message: context, task, evidence, candidate answer (in that order).

    Args:
        task: The user's request of this turn.
        evidence: The round's tool calls, in execution order.
        answer: The round's candidate answer.
        history: The conversation before this turn; its last clean pairs become the context.
        max_input_tokens: Estimated tokens the critic's whole input may take.
        reserved_tokens: Of those, what the rest of the request takes (the system prompt).

    Returns:
        The message; its first block is the context (when there is any), its last the answer.
    """
    room = max(0, max_input_tokens - reserved_tokens) * 4  # in characters
    # The task and the answer are what is judged; they keep up to a quarter of the room each.
    task_text = truncate_middle(task, max(1_000, room // 4))
    answer_text = truncate_middle(answer or "(empty answer)", max(1_000, room // 4))
    context = format_context(history, max_tokens=min(CONTEXT_TOKENS, room // 16))
    blocks = [TextBlock(context)] if context else []
    blocks.append(TextBlock(f"<task>\n{task_text}\n</task>"))
    candidate = TextBlock(f"<candidate_answer>\n{answer_text}\n</candidate_answer>")
    fixed = sum(len(b.text) for b in (*blocks, candidate)) + len("<evidence>\n\n</evidence>")
    evidence_text = format_evidence(evidence, max_chars=max(0, room - fixed))
    blocks += [TextBlock(f"<evidence>\n{evidence_text}\n</evidence>"), candidate]
    return Message("user", tuple(blocks))


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
    history: Sequence[Message] = (),
    max_input_tokens: int = DEFAULT_CRITIC_INPUT_TOKENS,
    max_tokens: int = CRITIC_MAX_TOKENS,
) -> Critique:
    """Ask the critic to judge one round, under a `critic` node, and report the verdict.

    Args:
        provider: The model backend.
        observer: Where the critic node, its usage and the verdict are reported.
        budget: Charged before the request.
        system: The critic's system prompt.
        task: The user's request of this turn.
        evidence: The round's tool calls, in execution order.
        answer: The round's candidate answer.
        round_index: The round, from 1.
        parent_id: The round's node.
        history: The conversation before this turn (the critic sees its last clean pairs).
        max_input_tokens: Estimated tokens the critic's input may take: the model's context
            window less the reply; the evidence is cut to fit.
        max_tokens: The longest reply.

    Returns:
        The verdict, the feedback and the call's usage.

    Raises:
        BudgetExhausted: when the budget allows no further model request.
        ProviderError: when the critic call fails for good.
    """
    with NodeScope(observer, "critic", "critic", parent_id) as node:
        budget.before_model_request()
        message = critic_message(
            task,
            evidence,
            answer,
            history=history,
            max_input_tokens=max_input_tokens,
            reserved_tokens=estimate_tokens(system),
        )
        request = ModelRequest(
            system=system,
            messages=[message],
            tools=(),
            max_tokens=max_tokens,
            # Context and task repeat in every round; the evidence and the answer never do.
            stable_blocks=len(message.content) - 2,
            cache_tail=False,
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
