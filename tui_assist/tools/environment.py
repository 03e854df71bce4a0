"""What of this program's environment a command it starts may see: no secrets.

One filter (`without_secrets`) serves bash, hooks and MCP servers. With approval off, a model
could simply `echo $ANTHROPIC_API_KEY`, and the key would be stored in the history; a hook or an
MCP server from a project is someone else's code. A variable is left out when:

- its **name** looks like a secret (`is_secret_variable`: `ANTHROPIC_*`, `OPENAI_*`, `*KEY*`,
  `*SECRET*`, `*TOKEN*`, `*PASSWORD*`), or it is a **provider's key variable** as configured (a
  profile's `api_key_env`, e.g. `LLM_CRED`), unless the user lists it in `[tools.bash] pass_env`;
- its **value is a provider's key** (a copy under another name), whatever the name, unless
  `pass_env` names that very variable;
- it is a **URL with a password** (`scheme://user:pass@host`, e.g. `DATABASE_URL`), unless listed
  in `pass_env`.

MCP servers get only what their config gives them (and a few harmless variables): there the
filter drops only a value that is a provider's key, since the user named those variables for the
server on purpose.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["PROVIDER_KEY_VARIABLES", "is_secret_variable", "key_values", "without_secrets"]

PROVIDER_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")
"""Where the providers read their keys when no profile names another variable."""

_SECRET_PREFIXES = ("ANTHROPIC_", "OPENAI_")
_SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD")
_URL_WITH_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@")
_MIN_KEY_CHARS = 8
"""A shorter value is not compared: `1` or `true` would match ordinary variables."""


def is_secret_variable(name: str) -> bool:
    """Whether an environment variable's name says it may hold a secret.

    Args:
        name: The variable's name.

    Returns:
        True for `ANTHROPIC_*` and `OPENAI_*`, and for any name containing `KEY`, `SECRET`,
        `TOKEN` or `PASSWORD`, all case-insensitively.
    """
    upper = name.upper()
    return upper.startswith(_SECRET_PREFIXES) or any(word in upper for word in _SECRET_WORDS)


def key_values(key_variables: Iterable[str], environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The values of the providers' key variables (`PROVIDER_KEY_VARIABLES` and `key_variables`)."""
    env = os.environ if environ is None else environ
    names = {*PROVIDER_KEY_VARIABLES, *key_variables}
    return frozenset(value for name in names if len(value := env.get(name, "")) >= _MIN_KEY_CHARS)


def without_secrets(
    environ: Mapping[str, str],
    *,
    pass_env: Iterable[str] = (),
    key_variables: Iterable[str] = (),
    by_name: bool = True,
) -> dict[str, str]:
    """`environ` without its secrets (see the module's docstring).

    Args:
        environ: The variables to filter (e.g. `os.environ`).
        pass_env: Variables kept although their names look like secrets (`[tools.bash] pass_env`).
        key_variables: The providers' configured key variables (every profile's `api_key_env`).
        by_name: False: drop only values that are a provider's key (an MCP server's own env).

    Returns:
        A new dict.
    """
    passed = frozenset(pass_env)
    named = frozenset(key_variables)
    keys = key_values(named, os.environ) | key_values(named, environ)
    kept: dict[str, str] = {}
    for name, value in environ.items():
        if name not in passed:
            if value in keys:
                continue
            if by_name and (name in named or is_secret_variable(name) or _URL_WITH_PASSWORD.search(value)):
                continue
        kept[name] = value
    return kept
