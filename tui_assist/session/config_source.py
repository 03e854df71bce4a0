"""The settings' sources merged but not yet validated: what the TUI paints its first frame from.

Validating (`tui_assist.session.config`, pydantic) costs imports and schema building, as much as
a large part of a bare Textual app's time to first paint. Reading the TOML file, the environment
and the flags costs next to nothing, so the TUI starts from a `ConfigSource`, draws its first frame
from the source's best-effort `preview`, and validates right after (`ChatSession.load`). The
headless commands validate at once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_assist.paths import config_file
from tui_assist.providers.anthropic_info import DEFAULT_MODEL

if TYPE_CHECKING:
    from tui_assist.session.config import Settings

DEFAULT_THEME = "tui-dark"
DEFAULT_ROUNDS = 3
MAX_ROUNDS = 20

ENV_VARIABLES = {
    "TUI_ASSIST_PROVIDER": "provider",
    "TUI_ASSIST_MODEL": "model",
    "TUI_ASSIST_BASE_URL": "base_url",
    "TUI_ASSIST_THEME": "theme",
    "TUI_ASSIST_ROUNDS": "rounds",
    "TUI_ASSIST_REFINE": "refine",
    "TUI_ASSIST_WORKDIR": "workdir",
    "TUI_ASSIST_THINKING": "thinking",
}
"""Environment variables that override the file, by setting name."""

_TRUE_WORDS = frozenset({"1", "on", "t", "true", "y", "yes"})


class ConfigError(Exception):
    """The settings are invalid; the message is one line for users."""


def resolve_model(provider: str, model: str | None) -> str:
    """The model to use: the one asked for, else the provider's default."""
    return model or (DEFAULT_MODEL if provider == "anthropic" else provider)


def checked_workdir(path: Path) -> Path:
    """`path`, absolute.

    Raises:
        ConfigError: when it is not a directory.
    """
    if not path.is_dir():
        raise ConfigError(f"workdir {path} is not a directory")
    return path.resolve()


@dataclass(frozen=True, slots=True)
class ConfigPreview:
    """What the first frame shows before validation; the validated `Settings` replace it."""

    theme: str
    refine: bool
    rounds: int
    model: str
    workdir: Path
    data_dir: Path | None

    @classmethod
    def of(cls, settings: Settings | ConfigSource) -> ConfigPreview:
        """The preview of settings, validated or not."""
        if isinstance(settings, ConfigSource):
            return settings.preview()
        return cls(
            settings.theme,
            settings.refine,
            settings.rounds,
            settings.resolved_model,
            settings.workdir,
            settings.data_dir,
        )


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """The config file, then `TUI_ASSIST_*` environment variables, then flags, merged."""

    data: Mapping[str, Any]
    path: Path
    origins: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    """Where each top-level key's value came from (`--rounds`, `TUI_ASSIST_ROUNDS`, ...); the file
    otherwise."""
    problem: str | None = None
    """Why the file could not be read (then only the environment and flags are used)."""

    @classmethod
    def read(cls, overrides: Mapping[str, Any] | None = None, *, path: Path | None = None) -> ConfigSource:
        """Merge the file, the environment and `overrides` (flags by setting name; None skipped).

        Never raises: a file that can't be read is a `problem` that `settings` reports, so the TUI
        can still open and say so.
        """
        path = path or config_file()
        data: dict[str, Any] = {}
        problem: str | None = None
        text: str | None = None
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            problem = f"{path} is a folder, not a settings file (move it away)"
        except UnicodeDecodeError as exc:
            problem = f"{path} is not UTF-8 text: byte {exc.start} can't be read (save it as UTF-8)"
        except OSError as exc:
            problem = f"cannot read {path}: {exc.strerror or exc} (check its permissions)"
        if text is not None:
            import tomllib  # only for a file: most people have none, and the TUI reads this first

            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                problem = f"{path} is not valid TOML: {exc} (fix that line)"
        origins: dict[str, str] = {}
        for variable, key in ENV_VARIABLES.items():
            if (value := os.environ.get(variable)) is not None:
                data[key] = value
                origins[key] = variable
        for key, value in (overrides or {}).items():
            if value is not None:
                data[key] = value
                origins[key] = "--" + key.replace("_", "-")
        return cls(data, path, origins, problem)

    def origin(self, key: str) -> str:
        """Where the value of the top-level setting `key` came from, for error messages."""
        return self.origins.get(key) or f"{key} in {self.path}"

    def settings(self) -> Settings:
        """Validate (imports pydantic): the settings, with the workdir checked and made absolute.

        Raises:
            ConfigError: when the file can't be read, a value is invalid, or the workdir is not a
                directory.
        """
        from tui_assist.session.config import validate

        if self.problem is not None:
            raise ConfigError(self.problem)
        settings = validate(self)
        try:
            workdir = checked_workdir(settings.workdir)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (fix {self.origin('workdir')})") from exc
        return settings.model_copy(update={"workdir": workdir})

    def preview(self) -> ConfigPreview:
        """Best-effort values for the first frame: a value of the wrong shape shows its default."""
        data = self.data
        provider = _text(data.get("provider")) or "anthropic"
        data_dir = _text(data.get("data_dir"))
        return ConfigPreview(
            theme=_text(data.get("theme")) or DEFAULT_THEME,
            refine=_flag(data.get("refine")),
            rounds=_rounds(data.get("rounds")),
            model=resolve_model(provider, _text(data.get("model"))),
            workdir=Path(_text(data.get("workdir")) or Path.cwd()).resolve(),
            data_dir=Path(data_dir) if data_dir else None,
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().lower() in _TRUE_WORDS


def _rounds(value: object) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ROUNDS:
        return value
    return DEFAULT_ROUNDS
