"""What the conversation pane says when the session has no model, in Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_assist.paths import config_file

if TYPE_CHECKING:
    from tui_assist.session.chat import ChatSession

NO_PROVIDER_HELP = """\
**No model provider is configured yet.**

Claude is reached through the Anthropic SDK, which found no credentials. Any one of these fixes it:

- set `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`) in your environment and start again;
- use a local or OpenAI-compatible server: `tui-assist --provider ollama --model NAME` (also
  `vllm`, `llamacpp`, or `--provider openai --base-url URL`; `provider` and `model` can live in
  `{config}`);
- work **offline**: `tui-assist --provider scripted --script FILE` replays FILE, a JSON list of
  assistant messages (each a list of content blocks, as in the Messages API), one per model
  request. Themes, Refine mode, the agent tree and the round review all work with it."""


INVALID_SETTINGS_HELP = """\
**Your settings are invalid:** {problem}

Until they are fixed (then restart), the model is off; history, themes and the flows that need
no model still work."""


def provider_notice(session: ChatSession) -> str | None:
    """Why there is no model and what to do, or None when the provider is up (or still loading)."""
    if session.provider_problem is None:
        return None
    if session.config_problem is not None:
        return INVALID_SETTINGS_HELP.format(problem=session.config_problem)
    if session.missing_credentials:
        return NO_PROVIDER_HELP.format(config=config_file())
    return f"**The provider can't start:** {session.provider_problem}"
