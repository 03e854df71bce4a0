"""Loads the settings for the current environment."""

import os
import tomllib


def settings():
    env = os.environ.get("APP_ENV", "dev")
    merged = {}
    for name in ("base", env):
        with open(f"config/{name}.toml", "rb") as f:
            merged.update(tomllib.load(f))
    return merged
