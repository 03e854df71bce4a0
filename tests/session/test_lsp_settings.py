"""`[lsp.NAME]` and `lsp_wait_ms`: which language servers check the editor's writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_assist.session.config_source import ConfigError, ConfigSource
from tui_assist.session.factory import make_lsp
from tui_assist.tools.lsp import ruff_command


def settings_of(tmp_path: Path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(f'workdir = "{tmp_path}"\n{text}', encoding="utf-8")
    return ConfigSource.read(path=path).settings()


@pytest.mark.skipif(ruff_command() is None, reason="ruff is not installed")
def test_ruff_is_built_in_for_python_and_configured_servers_join_it(tmp_path: Path) -> None:
    settings = settings_of(
        tmp_path, 'lsp_wait_ms = 250\n[lsp.ts]\ncommand = ["tsls", "--stdio"]\nextensions = ["ts", ".tsx"]\n'
    )

    lsp = make_lsp(settings, print)

    assert lsp is not None
    by_name = {spec.name: spec for spec in lsp.specs}
    assert by_name["ruff"].command[-1] == "server" and by_name["ruff"].extensions == (".py", ".pyi")
    assert by_name["ts"].command == ("tsls", "--stdio") and by_name["ts"].extensions == (".ts", ".tsx")
    assert [s.name for s in lsp.specs_for(tmp_path / "a.pyi")] == ["ruff"]
    assert lsp._wait == 0.25


def test_enabled_false_turns_the_built_in_ruff_off(tmp_path: Path) -> None:
    assert make_lsp(settings_of(tmp_path, "[lsp.ruff]\nenabled = false\n"), print) is None


def test_the_ruff_command_can_be_replaced(tmp_path: Path) -> None:
    lsp = make_lsp(settings_of(tmp_path, '[lsp.ruff]\ncommand = ["my-ruff", "server"]\n'), print)

    assert lsp is not None
    assert [(s.name, s.command, s.extensions) for s in lsp.specs] == [
        ("ruff", ("my-ruff", "server"), (".py", ".pyi"))
    ]


def test_a_server_without_a_command_or_extensions_is_an_invalid_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[lsp\.ts\] needs a command"):
        settings_of(tmp_path, '[lsp.ts]\nextensions = [".ts"]\n')
    with pytest.raises(ConfigError, match=r"\[lsp\.ts\] needs the extensions it checks"):
        settings_of(tmp_path, '[lsp.ts]\ncommand = ["tsls"]\n')
    with pytest.raises(ConfigError, match=r"lsp_wait_ms"):
        settings_of(tmp_path, "lsp_wait_ms = -1\n")
