"""The application layer: settings to provider, tools and store; one persisted turn; resume, export.

Both hosts (the headless CLI and the TUI) run turns through it, and it knows nothing of either.
"""
