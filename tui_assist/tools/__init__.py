"""Tools offered to the model: `bash`, `str_replace_based_edit_tool` and `agent`."""

from __future__ import annotations

from tui_assist.tools.base import PathOutsideWorkdir, confine, truncate_middle
from tui_assist.tools.files import TextEditorTool
from tui_assist.tools.registry import Toolset, default_toolbox, toolbox_factory
from tui_assist.tools.shell import BashTool, ShellSession
from tui_assist.tools.subagent import AgentTool

__all__ = [
    "AgentTool",
    "BashTool",
    "PathOutsideWorkdir",
    "ShellSession",
    "TextEditorTool",
    "Toolset",
    "confine",
    "default_toolbox",
    "toolbox_factory",
    "truncate_middle",
]
