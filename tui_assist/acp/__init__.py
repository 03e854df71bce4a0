"""The Agent Client Protocol host: `tui-assist acp`, so editors drive the same sessions as the chat.

`updates.py` folds a turn's core events into ACP `session/update`s; `agent.py` is the ACP agent,
one `TurnController` per ACP session. Importing this package loads neither the ACP SDK nor Textual.
"""
