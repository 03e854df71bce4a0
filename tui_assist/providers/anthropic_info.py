"""What the app needs to know about Anthropic without importing the SDK.

`import anthropic` costs seconds (thousands of modules), so the CLI's credential check, the
default model id and the tools' versioned type names live here, and only
`tui_assist.providers.anthropic` imports the SDK itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from tui_assist.core.model import ThinkingSetting  # (the config reads this module before the first frame)

DEFAULT_MODEL: Final = "claude-sonnet-4-6"
"""A current Claude Sonnet id that anthropic 2.14.0 does not list as deprecated."""

BASH_TOOL_NAME: Final = "bash"
BASH_TOOL_TYPE: Final = "bash_20250124"
"""The SDK's only versioned bash tool type (`ToolBash20250124Param`); its name must be `bash`."""

TEXT_EDITOR_TOOL_NAME: Final = "str_replace_based_edit_tool"
TEXT_EDITOR_TOOL_TYPE: Final = "text_editor_20250728"
"""The newest text editor type in anthropic 2.14.0 (`view`, `create`, `str_replace`, `insert`).

The SDK also has `text_editor_20250429` (same name, no `max_characters`) and
`text_editor_20250124` (named `str_replace_editor`, with `undo_edit`; Claude 3.7 only).
"""

NATIVE_TOOL_TYPES: Final[Mapping[str, str]] = {
    BASH_TOOL_NAME: BASH_TOOL_TYPE,
    TEXT_EDITOR_TOOL_NAME: TEXT_EDITOR_TOOL_TYPE,
}
"""Tool name -> the versioned Anthropic tool type to put in `ToolSpec.native_type`."""

MISSING_CREDENTIALS_HINT: Final = (
    "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
    "or run offline with --provider scripted --script FILE"
)
"""The one line the CLI prints when `anthropic_credentials_available()` is false."""


def supports_native_tools(model: str) -> bool:
    """Whether `model` accepts the versioned types in `NATIVE_TOOL_TYPES`.

    Claude 4 and later do; Claude 3.x models lack `text_editor_20250728`, so tools are sent to
    them as custom tools instead.

    Args:
        model: A model id such as `claude-sonnet-4-6`.

    Returns:
        False for `claude-3*` ids, True otherwise.
    """
    return not model.startswith("claude-3")


AUTO_THINKING_BUDGET: Final = 8000
"""Tokens of thinking `thinking = "auto"` allows a call (on top of its answer's `max_tokens`)."""

INTERLEAVED_THINKING_BETA: Final = "interleaved-thinking-2025-05-14"
"""The `anthropic-beta` value that lets Claude 4 models think between tool calls
(`AnthropicBetaParam` in anthropic 2.14.0). Adaptive thinking interleaves without it."""

_ADAPTIVE_MODELS: Final = ("claude-opus-4-6",)
"""Models for which anthropic 2.14.0 deprecates `thinking.type=enabled` in favour of `adaptive`
(its `MODELS_TO_WARN_WITH_THINKING_ENABLED`)."""


def supports_thinking(model: str) -> bool:
    """Whether `model` can think: Claude 3.7 Sonnet and every Claude 4 and later model.

    Args:
        model: A model id such as `claude-sonnet-4-6`.

    Returns:
        False for older Claude 3 ids and for ids that are not Claude's.
    """
    if model.startswith("claude-3"):
        return model.startswith("claude-3-7")
    return model.startswith("claude-")


ThinkingPlan = tuple[Literal["adaptive"], int] | tuple[Literal["enabled"], int]
"""How a call thinks: `("adaptive", room)` lets the model decide, `("enabled", budget)` caps
it; the number is the tokens added to the call's `max_tokens` for the thinking."""


def thinking_plan(setting: ThinkingSetting, model: str) -> ThinkingPlan | None:
    """How a call of `model` thinks under `setting`; None: it does not think.

    `auto` thinks only where the model supports it (adaptively where the SDK prefers that); a
    number is sent as asked, so a model that cannot think says so in the API's own words.

    Args:
        setting: `off`, `auto`, or a budget in tokens.
        model: The model id.

    Returns:
        The plan, or None.
    """
    if setting == "off":
        return None
    if setting == "auto":
        if not supports_thinking(model):
            return None
        if model.startswith(_ADAPTIVE_MODELS):
            return ("adaptive", AUTO_THINKING_BUDGET)
        return ("enabled", AUTO_THINKING_BUDGET)
    return ("enabled", setting)


def _anthropic_config_dir() -> Path:
    # Mirrors anthropic.lib.credentials._constants._config_dir (2.14.0).
    env = os.environ.get("ANTHROPIC_CONFIG_DIR")
    if env:
        return Path(env)
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        base = Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
        return base / "Anthropic"
    return Path.home() / ".config" / "anthropic"


def anthropic_credentials_available() -> bool:
    """Whether the SDK will find credentials on its own, checked without importing it.

    Follows the SDK's resolution order: `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`,
    `ANTHROPIC_PROFILE`, workload-identity variables, then an active profile on disk. A profile
    that exists but is broken still counts as available; the SDK reports that one itself.

    Returns:
        True when some credential source is configured.
    """
    env = os.environ
    if env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN") or env.get("ANTHROPIC_PROFILE"):
        return True
    if (
        env.get("ANTHROPIC_FEDERATION_RULE_ID")
        and env.get("ANTHROPIC_ORGANIZATION_ID")
        and (env.get("ANTHROPIC_IDENTITY_TOKEN") or env.get("ANTHROPIC_IDENTITY_TOKEN_FILE"))
    ):
        return True
    config_dir = _anthropic_config_dir()
    try:
        pointer = (config_dir / "active_config").read_text(encoding="utf-8").strip()
    except OSError:
        pointer = ""
    return bool(pointer) or (config_dir / "configs" / "default.json").is_file()
