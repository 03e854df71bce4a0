"""The TUI's state file: the theme and Refine toggle chosen last time, below flags and variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.session.config_source import ConfigSource
from tui_assist.session.preferences import Preferences, for_this_run, preferences_path


def test_choices_round_trip_through_the_state_file(tmp_path: Path) -> None:
    path = preferences_path(tmp_path / "data")
    assert Preferences.load(path) == Preferences()  # never saved
    assert Preferences(theme="tui-light", refine=True).save(path)
    assert Preferences.load(path) == Preferences(theme="tui-light", refine=True)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left behind


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"theme": 3, "refine": "yes"}', ""])
def test_a_broken_state_file_is_as_good_as_none(tmp_path: Path, content: str) -> None:
    path = tmp_path / "tui-state.json"
    path.write_text(content, encoding="utf-8")
    assert Preferences.load(path) == Preferences()


def test_a_state_file_that_cannot_be_written_is_only_forgotten(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data dir should be", encoding="utf-8")
    assert not Preferences(theme="tui-light").save(preferences_path(blocker))


def test_flags_and_variables_win_over_the_saved_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = Preferences(theme="tui-light", refine=True)
    config = tmp_path / "config.toml"
    config.write_text('theme = "tui-dark"\nrefine = false\n', encoding="utf-8")

    from_file = ConfigSource.read(path=config)
    assert for_this_run(saved, from_file) == saved  # the file is older than the user's latest choice

    monkeypatch.setenv("TUI_ASSIST_THEME", "tui-high-contrast")
    flagged = ConfigSource.read({"refine": False}, path=config)
    assert for_this_run(saved, flagged) == Preferences(theme=None, refine=None)
