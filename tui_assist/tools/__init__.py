"""Tools offered to the model: `bash`, `str_replace_based_edit_tool`, `agent`, and MCP servers' tools.

Import the modules themselves (`tui_assist.tools.registry`, ...): this package re-exports
nothing, so reading the settings (which need `tools.mcp`'s config model) stays cheap.
"""
