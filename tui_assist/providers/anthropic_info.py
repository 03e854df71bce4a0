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
from typing import Final

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
