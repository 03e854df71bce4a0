"""Settings: merged from the file, the environment and flags; previewed cheaply; validated strictly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.cli import EXIT_USAGE, main
from tui_assist.session.config_source import ConfigError, ConfigSource


def write_config(folder: Path, text: str) -> Path:
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_environment_overrides_the_file_and_flags_override_both(tmp_path, monkeypatch) -> None:
    path = write_config(tmp_path, 'model = "from-file"\nrounds = 4\ntheme = "tui-light"\n')
    monkeypatch.setenv("TUI_ASSIST_ROUNDS", "6")
    monkeypatch.setenv("TUI_ASSIST_MODEL", "from-env")

    settings = ConfigSource.read({"model": "from-flag", "theme": None}, path=path).settings()

    assert (settings.model, settings.rounds, settings.theme) == ("from-flag", 6, "tui-light")


def test_the_preview_agrees_with_validation_on_well_formed_values(tmp_path, monkeypatch) -> None:
    path = write_config(tmp_path, f'refine = true\nrounds = 5\ntheme = "tui-light"\nworkdir = "{tmp_path}"\n')
    monkeypatch.setenv("TUI_ASSIST_PROVIDER", "ollama")
    source = ConfigSource.read(path=path)

    preview, settings = source.preview(), source.settings()

    assert preview.theme == settings.theme == "tui-light"
    assert preview.refine is settings.refine is True
    assert preview.rounds == settings.rounds == 5
    assert preview.model == settings.resolved_model == "ollama"
    assert preview.workdir == settings.workdir == tmp_path.resolve()


def test_a_malformed_value_previews_as_its_default_and_fails_validation_by_name(tmp_path) -> None:
    path = write_config(tmp_path, 'rounds = "many"\nrefine = 1\n')
    source = ConfigSource.read(path=path)

    preview = source.preview()
    assert (preview.rounds, preview.refine) == (3, False)
    with pytest.raises(
        ConfigError, match=r"invalid setting rounds = 'many': .*\(fix rounds in .*config\.toml\)"
    ):
        source.settings()


def test_a_bad_value_names_the_flag_or_variable_it_came_from(tmp_path, monkeypatch) -> None:
    path = write_config(tmp_path, "rounds = 2\n")
    with pytest.raises(ConfigError, match=r"invalid setting rounds = 0: .* \(fix --rounds\)"):
        ConfigSource.read({"rounds": 0}, path=path).settings()
    monkeypatch.setenv("TUI_ASSIST_ROUNDS", "0")
    with pytest.raises(ConfigError, match=r"\(fix TUI_ASSIST_ROUNDS\)"):
        ConfigSource.read(path=path).settings()


def test_an_unreadable_file_is_reported_when_validated_so_the_tui_can_still_open(tmp_path) -> None:
    path = write_config(tmp_path, "rounds = [\n")
    source = ConfigSource.read(path=path)
    assert source.preview().rounds == 3
    with pytest.raises(ConfigError, match="is not valid TOML"):
        source.settings()


def test_the_workdir_must_be_a_directory(tmp_path) -> None:
    source = ConfigSource.read({"workdir": str(tmp_path / "missing")}, path=tmp_path / "none.toml")
    with pytest.raises(ConfigError, match="is not a directory"):
        source.settings()


def test_headless_commands_stop_on_invalid_settings_with_exit_code_2(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("TUI_ASSIST_HOME", str(tmp_path / "data"))
    (tmp_path / "tui-assist").mkdir()
    write_config(tmp_path / "tui-assist", "rounds = 99\n")

    assert main(["history", "list"]) == EXIT_USAGE
    assert "invalid setting rounds" in capsys.readouterr().err


async def test_the_store_opens_before_validation_where_the_settings_say_even_when_they_are_invalid(
    tmp_path: Path,
) -> None:
    """The store opens from the preview's data dir (before pydantic); invalid settings keep it."""
    from tui_assist.session.chat import ChatSession

    data = tmp_path / "elsewhere"
    source = ConfigSource(
        {"rounds": "many", "data_dir": str(data), "workdir": str(tmp_path)}, tmp_path / "c.toml"
    )
    session = ChatSession(source)  # invalid settings: no provider is built
    opened: list[bool] = []

    async def after_store() -> None:
        opened.append(session.store is not None and session._settings is None)

    await session.load(after_store=after_store)
    try:
        assert opened == [True]  # the store was open, the settings not yet validated
        assert session.config_problem is not None and "rounds" in session.config_problem
        assert session.settings.data_dir == data
        assert (data / "tui_assist.db").exists()
    finally:
        await session.aclose()
