"""The `agent` tool: hand a self-contained task to a sub-agent with its own context.

The tool itself changes nothing, so it needs no approval; the sub-agent's own tool calls go
through the same approval policy as any other, and are recorded as evidence of the round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tui_assist.core.model import ToolSpec
from tui_assist.core.tooling import SubagentSpec, ToolContext, ToolOutput
from tui_assist.tools.base import validate_input

_DESCRIPTION = """\
Delegate a self-contained task to a sub-agent. It starts with an empty context (it sees only \
your prompt), can use the same tools, and returns its final answer as this tool's result. Use it \
for focused research or side tasks whose details would clutter your own context. Write the \
prompt so it stands on its own: the goal, the relevant paths, and what to report back."""


class AgentArgs(BaseModel):
    """Validated input of the `agent` tool."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    description: str = Field(min_length=1)
    """A short label for the task (a few words), shown as the sub-agent's node."""
    prompt: str = Field(min_length=1)
    """The full task for the sub-agent."""
    subagent_type: str | None = None
    """The name of a custom sub-agent to run (None: a general one with the same tools)."""

    @field_validator("description", "prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class AgentTool:
    """The `agent` tool: runs a sub-agent through `ToolContext.run_subagent`."""

    def __init__(self, subagents: Sequence[SubagentSpec] = ()) -> None:
        """Create the tool.

        Args:
            subagents: The custom sub-agents the model may pick by name (`subagent_type`).
        """
        self._agents = {agent.name: agent for agent in subagents}
        properties: dict[str, Any] = {
            "description": {
                "type": "string",
                "description": "A short (3-5 word) label for the task.",
            },
            "prompt": {"type": "string", "description": "The complete task for the sub-agent."},
        }
        description = _DESCRIPTION
        if self._agents:
            listed = "\n".join(f"- {a.name}: {a.description}" for a in self._agents.values())
            description += (
                "\n\nSpecialised sub-agents (pass the name as `subagent_type`; omit it for a "
                f"general one):\n{listed}"
            )
            properties["subagent_type"] = {
                "type": "string",
                "enum": list(self._agents),
                "description": "Which specialised sub-agent runs the task (omit: a general one).",
            }
        self._spec = ToolSpec(
            name="agent",
            description=description,
            input_schema={"type": "object", "properties": properties, "required": ["description", "prompt"]},
        )

    @property
    def spec(self) -> ToolSpec:
        """The `agent` tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> AgentArgs:
        """Validate the model's input.

        Raises:
            ToolInputError: if `description` or `prompt` is missing, blank or not a string.
        """
        return validate_input(AgentArgs, raw, "agent")

    def side_effecting(self, args: AgentArgs) -> bool:
        """Never: starting a sub-agent changes nothing; its own tool calls are approved one by one."""
        return False

    def summary(self, args: AgentArgs) -> str:
        """`sub-agent: DESCRIPTION` and the prompt, for display."""
        return f"sub-agent: {args.description}\n{args.prompt}"

    async def run(self, args: AgentArgs, ctx: ToolContext) -> ToolOutput:
        """Run the sub-agent and return its final answer.

        Args:
            args: The parsed arguments.
            ctx: Provides `run_subagent`, which runs it under this tool call's node.

        Returns:
            The sub-agent's answer, or an error output if it failed.

        Raises:
            asyncio.CancelledError: when the turn is cancelled.
        """
        agent: SubagentSpec | None = None
        if args.subagent_type is not None:
            agent = self._agents.get(args.subagent_type)
            if agent is None:
                known = ", ".join(self._agents) or "none are defined"
                return ToolOutput(
                    f"Unknown subagent_type {args.subagent_type!r}. Available: {known}.", is_error=True
                )
        try:
            if agent is None:
                answer = await ctx.run_subagent(args.description, args.prompt)
            else:
                answer = await ctx.run_subagent(args.description, args.prompt, agent)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return ToolOutput(f"the sub-agent failed: {type(error).__name__}: {error}", is_error=True)
        return ToolOutput(answer)
