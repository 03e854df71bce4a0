"""Model-backed leaves: a prompt in, a validated pydantic model out.

A `PromptStep` renders its input into one user message, asks the run's provider, and parses the
reply's JSON object with the output model. A reply that does not validate is sent back once (by
default) with the validation error, so the model can correct it; each attempt is a model request
charged to the run's budget *before* it is made. The reply streams as text deltas of the step's
node, and its usage is reported, exactly like the core's own model calls.

This module is imported on demand; the engine itself loads neither pydantic nor a provider.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from tui_assist.core.conversation import Message
from tui_assist.core.events import UsageRecorded
from tui_assist.core.model import ModelRequest, ProviderError
from tui_assist.core.observer import NodeSink
from tui_assist.workflow.step import In, Step, WorkflowContext

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

JSON_INSTRUCTIONS = (
    "Reply with only a JSON object (no prose, no code fence) that matches this JSON schema:\n{schema}"
)
"""Appended to a prompt step's system prompt; `{schema}` is the output model's JSON schema."""
REPAIR_PROMPT = "Your reply could not be used: {error}\nReply again with only the corrected JSON object."
"""Sent after a reply that does not validate; `{error}` is the validation error."""


class StructuredOutputError(ValueError):
    """The model's replies never validated against the step's output model."""


def parse_reply(output_type: type[M], text: str) -> M:
    """Validate the JSON object in a model reply.

    The object may be wrapped in a code fence or surrounded by prose: the text from the first
    `{` to the last `}` is what gets validated.

    Args:
        output_type: The pydantic model to validate with.
        text: The model's reply.

    Returns:
        The validated model.

    Raises:
        ValueError: when the reply holds no JSON object or it does not validate
            (pydantic's `ValidationError` is a `ValueError`).
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the reply holds no JSON object")
    return output_type.model_validate_json(text[start : end + 1])


class PromptStep(Step[In, M]):
    """A model-backed leaf with structured output.

    Example:
        ```python
        class Category(BaseModel):
            category: str

        classify = PromptStep("classify", Category, lambda t: f"Which team handles this? {t}")
        ```
    """

    __slots__ = ("output_type", "prompt", "system", "max_tokens", "retries", "_system")

    def __init__(
        self,
        label: str,
        output_type: type[M],
        prompt: Callable[[In], str],
        *,
        system: str = "",
        max_tokens: int = 1024,
        retries: int = 1,
    ) -> None:
        """Build a prompt step.

        Args:
            label: The node label.
            output_type: The pydantic model the reply must validate against.
            prompt: Renders the step's input as the user message.
            system: The system prompt; the output schema's instructions are appended to it.
            max_tokens: The reply's token limit.
            retries: Extra attempts after a reply that does not validate.

        Raises:
            ValueError: when `retries` is negative.
        """
        super().__init__(label)
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.output_type = output_type
        self.prompt = prompt
        self.system = system
        self.max_tokens = max_tokens
        self.retries = retries
        schema = json.dumps(output_type.model_json_schema(), separators=(",", ":"), sort_keys=True)
        instructions = JSON_INSTRUCTIONS.format(schema=schema)
        self._system = f"{system}\n\n{instructions}" if system else instructions

    async def run(self, input: In, ctx: WorkflowContext) -> M:
        """Ask the provider and validate its reply, repairing up to `retries` times.

        Raises:
            ProviderError: when no provider is configured, or the call fails for good.
            BudgetExhausted: when the budget allows no further model request.
            StructuredOutputError: when no reply validates.
        """
        provider = ctx.provider
        if provider is None:
            raise ProviderError(f"step {self.label!r} needs a model, but no provider is configured")
        observer = ctx.observer
        sink = NodeSink(observer, ctx.parent_id)
        messages = [Message.user(self.prompt(input))]
        error: ValueError | None = None
        for _ in range(self.retries + 1):
            ctx.budget.before_model_request()
            request = ModelRequest(system=self._system, messages=tuple(messages), max_tokens=self.max_tokens)
            response = await provider.complete(request, sink)
            ctx.budget.record(response.usage)
            if observer is not None and ctx.parent_id is not None:
                observer.on_event(
                    UsageRecorded(node_id=ctx.parent_id, usage=response.usage, model=response.model)
                )
            try:
                return parse_reply(self.output_type, response.message.text)
            except ValueError as exc:
                error = exc
                messages += [response.message, Message.user(REPAIR_PROMPT.format(error=exc))]
        raise StructuredOutputError(
            f"step {self.label!r}: no reply matched {self.output_type.__name__} "
            f"in {self.retries + 1} attempt(s): {error}"
        )
