# pyright: strict
"""The model policy: the configured provider proposes the decisions as tool calls.

`search`, `read` and `final` go through the same runtime and validation as the scripted
policies, with the adaptive loop's budget. Its score is reported separately and never mixed with
the scripted ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_assist.core.conversation import Message, ToolResultBlock, ToolUseBlock
from tui_assist.core.model import ModelRequest, Provider, ToolSpec
from tui_assist.core.observer import NodeSink, TurnObserver
from tui_assist.flows.docs.corpus import Corpus, Task
from tui_assist.flows.docs.policies import ADAPTIVE_LIMITS, Limits
from tui_assist.flows.docs.runtime import DocsRuntime, LoopState, PolicyResult, Proposal

MODEL_LIMITS = ADAPTIVE_LIMITS
"""The model decides within the adaptive loop's budget."""

MODEL_SYSTEM_PROMPT = """\
You answer questions about docuctl, a command line tool, from its documentation, for the staging \
environment only. You act only through tools, exactly one tool call per reply:
- search {query}: the two best pages of the task's documentation version, as id and title.
- read {id}: one page of that version, with the exact staging command it documents.
- final {answer, citation}: ends the task. answer is the page's command copied exactly; citation \
is the id of the page you read it from in this task, or null when no page answers the question.
Only cite a page you have read. You may make at most {max_tools} search or read calls and \
{max_turns} replies in all."""
"""The model policy's system prompt (`{max_tools}` and `{max_turns}` are filled in)."""

MODEL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search",
        "Search the task's documentation version; returns up to two hits as {id, title}.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look for."}},
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "read",
        "Read one page of the task's documentation version by id.",
        {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "A page id, e.g. rollback-v2."}},
            "required": ["id"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "final",
        "Give the final answer: the exact command, and the id of the page it comes from.",
        {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "The exact command."},
                "citation": {
                    "type": ["string", "null"],
                    "description": "The id of a page read in this task, or null.",
                },
            },
            "required": ["answer", "citation"],
            "additionalProperties": False,
        },
    ),
)
"""The tools offered to the model: its only way to propose decisions."""


@dataclass
class ModelDecider:
    """A policy backed by a provider: each reply's single tool call is the proposal.

    It keeps the conversation of one run: the task, then each reply and the observation of its
    tool call as a tool result. A reply with no tool call, or several, is proposed as a problem,
    which the runtime stops as `invalid_decision`.

    Args:
        provider: The model backend.
        task: The task (its question and version are all the model is told).
        limits: The run's budget, stated in the system prompt.
        max_tokens: The reply budget of each model call.
    """

    provider: Provider
    task: Task
    limits: Limits = MODEL_LIMITS
    max_tokens: int = 1024
    messages: list[Message] = field(default_factory=lambda: list[Message]())
    _pending: ToolUseBlock | None = None

    def __post_init__(self) -> None:
        if not self.messages:
            prompt = f"Documentation version: {self.task.version}\nQuestion: {self.task.question}"
            self.messages.append(Message.user(prompt))

    @property
    def system(self) -> str:
        """The system prompt with the budget filled in."""
        return MODEL_SYSTEM_PROMPT.replace("{max_tools}", str(self.limits.max_tools)).replace(
            "{max_turns}", str(self.limits.max_turns)
        )

    async def __call__(self, state: LoopState) -> Proposal:
        """Ask the model for the next decision.

        Args:
            state: The run so far; its last observation answers the previous tool call.

        Returns:
            The model's tool call as a proposal.

        Raises:
            ProviderError: when the model call fails.
        """
        if self._pending is not None and state.history:
            observation = state.history[-1]
            result = ToolResultBlock(self._pending.id, observation.text, observation.is_error)
            self.messages.append(Message("user", (result,)))
            self._pending = None
        request = ModelRequest(
            system=self.system, messages=tuple(self.messages), tools=MODEL_TOOLS, max_tokens=self.max_tokens
        )
        response = await self.provider.complete(request, NodeSink(None, None))  # silent
        self.messages.append(response.message)
        uses = response.message.tool_uses
        if len(uses) != 1:
            return Proposal(
                "",
                None,
                problem=f"expected exactly one tool call (search, read or final), got {len(uses)}",
            )
        self._pending = uses[0]
        return Proposal(uses[0].name, uses[0].input, call_id=uses[0].id)


async def model_loop(
    task: Task,
    corpus: Corpus,
    provider: Provider,
    *,
    observer: TurnObserver | None = None,
    parent_id: str | None = None,
    limits: Limits = MODEL_LIMITS,
) -> PolicyResult:
    """The model policy: the provider proposes decisions through the bounded runtime.

    Args:
        task: The task (refused before any model call when not valid).
        corpus: The pages and glossary.
        provider: The model backend.
        observer: Where events go; None discards them.
        parent_id: The node the run hangs under, if any.
        limits: The budget (default: the adaptive loop's).

    Returns:
        How the run ended; a failed model call is `provider_error`.
    """
    runtime = DocsRuntime(corpus, observer=observer)
    decider = ModelDecider(provider, task, limits)
    return await runtime.run(
        task, decider, limits.max_turns, limits.max_tools, policy="model", parent_id=parent_id
    )
