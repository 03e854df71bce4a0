"""Reading what a hook said: its exit status and Claude Code's JSON hook output, folded per event."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_assist.core.hooks import HookPermission
from tui_assist.core.text import clip


@dataclass(slots=True)
class HookReply:
    """What the hooks of one event said together, from their exit statuses and Claude Code's JSON.

    JSON on a hook's stdout (exit 0) is read as Claude Code's hook output: `continue: false` with
    `stopReason`, `systemMessage` (a warning line), `suppressOutput` (the tree shows no stdout),
    `decision: "block"` with `reason`, and `hookSpecificOutput` (`permissionDecision`,
    `permissionDecisionReason`, `updatedInput`, `additionalContext`, and `PermissionRequest`'s
    `decision.behavior`).
    """

    said: list[str] = field(default_factory=lambda: list[str]())
    """Plain stdout of the hooks that exited 0."""
    context: list[str] = field(default_factory=lambda: list[str]())
    """Their `additionalContext`."""
    blocked: str | None = None
    """Why the first hook that blocked did (exit 2, `decision: "block"`, `permissionDecision: "deny"`)."""
    stop: str | None = None
    """Why a hook said `"continue": false`."""
    permission: Literal["allow", "ask"] | None = None
    updated_input: dict[str, Any] | None = None
    """In Claude Code's field names."""
    answer: HookPermission | None = None
    """A `PermissionRequest` hook's allow or deny."""

    @property
    def settled(self) -> bool:
        """Whether no later hook of the event need run."""
        return (
            self.blocked is not None
            or self.stop is not None
            or (self.answer is not None and not self.answer.allowed)
        )

    def everything_said(self) -> str:
        """Plain stdout and `additionalContext` together (what becomes context for the model)."""
        return "\n".join(part for part in (*self.said, *self.context) if part.strip())

    def fold_json(self, event: str, command: str, data: Mapping[str, Any]) -> None:
        """Fold one hook's JSON output in (its `systemMessage` is the caller's to show)."""
        default = f"blocked by a {event} hook ({clip(command, 60)})"
        if data.get("continue") is False:
            self.stop = text_of(data, "stopReason") or f"a {event} hook said not to continue"
            return
        match data.get("decision"):
            case "block":
                self.blocked = text_of(data, "reason") or default
                return
            case "approve" if self.permission is None:  # the older spelling of `allow`
                self.permission = "allow"
            case _:
                pass
        specific = data.get("hookSpecificOutput")
        if not isinstance(specific, Mapping):
            return
        specific_map: Mapping[str, Any] = specific
        if context := text_of(specific_map, "additionalContext"):
            self.context.append(context)
        match specific_map.get("permissionDecision"):
            case "deny":
                self.blocked = text_of(specific_map, "permissionDecisionReason") or default
                return
            case "ask":
                self.permission = "ask"
            case "allow" if self.permission is None:
                self.permission = "allow"
            case _:
                pass
        updated = specific_map.get("updatedInput")
        if isinstance(updated, Mapping):
            self.updated_input = {str(k): v for k, v in updated.items()}
        decision = specific_map.get("decision")
        if event == "PermissionRequest" and isinstance(decision, Mapping):
            decision_map: Mapping[str, Any] = decision
            match decision_map.get("behavior"):
                case "allow":
                    self.answer = HookPermission(True)
                case "deny":
                    self.answer = HookPermission(False, text_of(decision_map, "message") or default)
                case _:
                    pass


def json_reply(stdout: str) -> dict[str, Any] | None:
    """The JSON object on a hook's stdout, or None when it printed something else."""
    if not stdout.startswith("{"):
        return None
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def text_of(data: Mapping[str, Any], key: str) -> str:
    """The stripped string at `key` (empty when it is missing or not a string)."""
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""
