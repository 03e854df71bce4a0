"""Named endpoints for the OpenAI-compatible provider, without importing the `openai` SDK.

Local model servers (Ollama, vLLM, llama.cpp's `llama-server`) all speak the Chat Completions
API, each on its own default port. A *profile* names one such endpoint, so `--provider ollama
--model qwen2.5-coder` is all a user types. Built-in profiles cover the usual local servers and
OpenAI itself; profiles from the config file (`[profiles.NAME]`) add to them or override them.

Resolution, in `resolve_endpoint`:

- `--provider openai`: `--base-url` if given (a URL, or the name of a profile), else the SDK's own
  default (`OPENAI_BASE_URL`, then `https://api.openai.com/v1`).
- `--provider NAME` for a profile NAME: the profile's URL, unless `--base-url` overrides it.

The API key comes from the profile's `api_key_env` variable, else `OPENAI_API_KEY`; local servers
need none, so a placeholder is sent when no key is set (the SDK refuses to start without one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_assist.core.model import DEFAULT_REQUEST_TIMEOUT

if TYPE_CHECKING:
    from tui_assist.providers.openai_compat import OpenAICompatProvider

OPENAI_PROVIDER: Final = "openai"
"""The provider name that selects the OpenAI-compatible provider without a profile."""

NO_KEY_PLACEHOLDER: Final = "no-key"
"""Sent as the API key when none is configured: local servers ignore it, the SDK needs one."""

MaxTokensParam = Literal["max_tokens", "max_completion_tokens", "none"]
"""How a request's output limit is sent: most servers read `max_tokens`; OpenAI's reasoning
models require `max_completion_tokens`; `none` sends no limit (vLLM rejects a limit that does not
fit the model's context next to the prompt)."""


class OpenAIProfile(BaseModel):
    """One named OpenAI-compatible endpoint (a `[profiles.NAME]` table in config.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1)
    """The API root including `/v1`, e.g. `http://localhost:11434/v1`."""
    model: str | None = None
    """The model used when neither `--model` nor the config's `model` names one."""
    api_key_env: str | None = None
    """The environment variable holding the key; None: `OPENAI_API_KEY`, else no key."""
    max_tokens_param: MaxTokensParam = "max_tokens"
    """Which request field carries the output limit."""


BUILTIN_PROFILES: Final[Mapping[str, OpenAIProfile]] = {
    "ollama": OpenAIProfile(base_url="http://localhost:11434/v1"),
    "vllm": OpenAIProfile(base_url="http://localhost:8000/v1"),
    "llamacpp": OpenAIProfile(base_url="http://localhost:8080/v1"),
}
"""Profiles every user has; a config profile of the same name replaces one."""


class EndpointError(ValueError):
    """The OpenAI-compatible endpoint cannot be resolved; the message is one line for users."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how the OpenAI-compatible provider connects."""

    profile: str | None
    """The profile used, if any."""
    base_url: str | None
    """None: the SDK's default (`OPENAI_BASE_URL`, else api.openai.com)."""
    model: str
    api_key: str
    max_tokens_param: MaxTokensParam = "max_tokens"


def merged_profiles(user: Mapping[str, OpenAIProfile] | None = None) -> dict[str, OpenAIProfile]:
    """The built-in profiles with the user's on top.

    Args:
        user: Profiles from the settings (`Settings.profiles`).

    Returns:
        Name -> profile; a user profile replaces a built-in one of the same name.
    """
    return {**BUILTIN_PROFILES, **(user or {})}


def is_openai_compatible(provider: str, profiles: Mapping[str, OpenAIProfile] | None = None) -> bool:
    """Whether `provider` selects the OpenAI-compatible provider (`openai` or a profile name).

    Args:
        provider: The configured provider name.
        profiles: User profiles from the settings.

    Returns:
        True for `openai` and for any built-in or user profile name.
    """
    return provider == OPENAI_PROVIDER or provider in merged_profiles(profiles)


def resolve_endpoint(
    provider: str,
    *,
    model: str | None,
    base_url: str | None = None,
    profiles: Mapping[str, OpenAIProfile] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """Work out the URL, model and key for an OpenAI-compatible provider.

    Args:
        provider: `openai` or a profile name.
        model: The configured model (`--model` / config); None: the profile's model.
        base_url: `--base-url` / config: a URL, or the name of a profile.
        profiles: User profiles from the settings.
        environ: Where keys are looked up; None: `os.environ`.

    Returns:
        The endpoint.

    Raises:
        EndpointError: when the provider or profile is unknown, or no model is named.
    """
    env = os.environ if environ is None else environ
    known = merged_profiles(profiles)
    name: str | None = None
    if provider != OPENAI_PROVIDER:
        if provider not in known:
            names = ", ".join(sorted([OPENAI_PROVIDER, *known]))
            raise EndpointError(f"unknown OpenAI-compatible provider {provider!r}: use one of {names}")
        name = provider
    url: str | None = None
    if base_url:
        if "://" in base_url:
            url = base_url
        elif base_url in known:
            name = base_url
        else:
            raise EndpointError(
                f"--base-url {base_url!r} is neither a URL (http://host:port/v1) nor a profile "
                f"({', '.join(sorted(known))})"
            )
    profile = known[name] if name is not None else None
    if url is None and profile is not None:
        url = profile.base_url
    chosen = model or (profile.model if profile is not None else None)
    if not chosen:
        hint = f" or set model in [profiles.{name}]" if name is not None else ""
        raise EndpointError(f"--provider {provider} needs a model: pass --model NAME{hint}")
    key_env = profile.api_key_env if profile is not None and profile.api_key_env else "OPENAI_API_KEY"
    key = env.get(key_env) or NO_KEY_PLACEHOLDER
    return Endpoint(
        profile=name,
        base_url=url.rstrip("/") if url else None,
        model=chosen,
        api_key=key,
        max_tokens_param=profile.max_tokens_param if profile is not None else "max_tokens",
    )


def make_openai_provider(
    provider: str,
    *,
    model: str | None,
    base_url: str | None = None,
    profiles: Mapping[str, OpenAIProfile] | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> OpenAICompatProvider:
    """Build the OpenAI-compatible provider the settings ask for (imports the SDK).

    Args:
        provider: `openai` or a profile name (`Settings.provider`).
        model: `Settings.model`.
        base_url: `Settings.base_url` (a URL or a profile name).
        profiles: `Settings.profiles`.
        request_timeout: `Settings.request_timeout`: seconds a response may take to begin, and
            a stream may stay silent.

    Returns:
        A provider whose client is created on first use.

    Raises:
        EndpointError: see `resolve_endpoint`.
    """
    endpoint = resolve_endpoint(provider, model=model, base_url=base_url, profiles=profiles)
    from tui_assist.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(
        endpoint.model,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        max_tokens_param=endpoint.max_tokens_param,
        request_timeout=request_timeout,
    )
