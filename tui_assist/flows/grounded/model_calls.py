# pyright: strict
"""The grounded flow's model calls: the token budget is checked before the spend, then accounted.

Every model call of a leaf goes through `complete` (or `ask_json`, for a validated JSON reply).
"""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel

from tui_assist.core.budget import BudgetExhausted
from tui_assist.core.conversation import Message
from tui_assist.core.events import UsageRecorded
from tui_assist.core.model import ModelRequest, ModelResponse, ProviderError
from tui_assist.core.observer import NodeSink
from tui_assist.core.text import estimate_tokens
from tui_assist.flows.grounded.state import FlowState
from tui_assist.workflow import WorkflowContext
from tui_assist.workflow.prompt import StructuredOutputError, parse_reply

ESTIMATE_CHARS_PER_TOKEN = 3.0
"""The request-size estimate behind the budget check: deliberately pessimistic (real text runs
nearer 4 characters per token) and the whole `max_tokens` reply is counted, so a call that
passes the check does not cross the budget in practice."""


def estimate_request_tokens(request: ModelRequest) -> int:
    """A pessimistic token estimate of a request's prompt (system, messages, tools).

    Args:
        request: The request about to be sent.

    Returns:
        The estimate, at least 1.
    """
    chars = len(request.system) + sum(len(json.dumps(m.to_dict())) for m in request.messages)
    chars += sum(len(t.name) + len(t.description) + len(json.dumps(t.input_schema)) for t in request.tools)
    return max(1, estimate_tokens(chars, chars_per_token=ESTIMATE_CHARS_PER_TOKEN))


def check_budget(state: FlowState, request: ModelRequest) -> None:
    """Refuse a model call that could take the run past its token budget.

    The call is charged at its estimated prompt plus its whole `max_tokens`, before it is made.

    Args:
        state: The run's state (tokens used so far, the budget).
        request: The call about to be made.

    Raises:
        BudgetExhausted: when used + estimate would cross the budget.
    """
    need = estimate_request_tokens(request) + request.max_tokens
    if state.tokens_used + need > state.token_budget:
        raise BudgetExhausted(
            f"token budget of {state.token_budget} would be crossed: {state.tokens_used} used, "
            f"the next call may take up to {need}"
        )


async def complete(ctx: WorkflowContext, state: FlowState, request: ModelRequest) -> ModelResponse:
    """Make one model call for a leaf: budget first, then the call, then the accounting.

    Args:
        ctx: The leaf's context (its provider, budget and node).
        state: The run's state; its token counters are updated.
        request: The call.

    Returns:
        The provider's response.

    Raises:
        BudgetExhausted: before the call, when it could cross the token budget.
        ProviderError: when no provider is configured or the call fails for good.
    """
    provider = ctx.provider
    if provider is None:
        raise ProviderError("the grounded flow's model leaves need a provider, but none is configured")
    check_budget(state, request)
    ctx.budget.before_model_request()
    response = await provider.complete(request, NodeSink(ctx.observer, ctx.parent_id))
    ctx.budget.record(response.usage)
    usage = response.usage
    state.tokens_prompt += usage.total_input_tokens
    state.tokens_completion += usage.output_tokens
    state.tokens_used = state.tokens_prompt + state.tokens_completion
    state.model = response.model or provider.model
    observer = ctx.observer
    if observer is not None and ctx.parent_id is not None:
        observer.on_event(UsageRecorded(node_id=ctx.parent_id, usage=usage, model=response.model))
    return response


M = TypeVar("M", bound=BaseModel)

_JSON_ONLY = "Reply with only a JSON object, no prose and no code fence: {shape}"
_REPAIR = "Your reply could not be used: {error}\nReply again with only the corrected JSON object."


async def ask_json(
    ctx: WorkflowContext,
    state: FlowState,
    output_type: type[M],
    *,
    system: str,
    prompt: str,
    shape: str,
    max_tokens: int,
    retries: int = 1,
) -> M:
    """A structured model call: a JSON reply validated with `output_type`, repaired once.

    Every attempt is budget-checked before it is made.

    Args:
        ctx: The leaf's context.
        state: The run's state.
        output_type: The pydantic model of the reply.
        system: The system prompt.
        prompt: The user message.
        shape: The JSON shape shown to the model (e.g. `{"label": "docs"}`).
        max_tokens: The reply's token limit.
        retries: Extra attempts after a reply that does not validate.

    Returns:
        The validated reply.

    Raises:
        StructuredOutputError: when no reply validates.
    """
    messages = [Message.user(prompt)]
    system = f"{system}\n\n{_JSON_ONLY.format(shape=shape)}"
    error: ValueError | None = None
    for _ in range(retries + 1):
        response = await complete(
            ctx, state, ModelRequest(system=system, messages=tuple(messages), max_tokens=max_tokens)
        )
        try:
            return parse_reply(output_type, response.message.text)
        except ValueError as exc:
            error = exc
            messages += [response.message, Message.user(_REPAIR.format(error=exc))]
    raise StructuredOutputError(
        f"no reply matched {output_type.__name__} in {retries + 1} attempt(s): {error}"
    )
