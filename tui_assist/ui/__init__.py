"""The Textual app. `tui_assist.ui.app.run(settings)` is the entry point."""
