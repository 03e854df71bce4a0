"""Settings of a sync."""

import tomllib
from dataclasses import dataclass


@dataclass
class Options:
    source: str
    target: str
    delete: bool = False


def load_options(path):
    """Read the TOML settings file at `path`."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return Options(**data)
