"""The core knows nothing of Textual, and nothing heavy loads before it is needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

NON_UI = [
    "tui_assist.turns.agent",
    "tui_assist.turns.refine",
    "tui_assist.core.critic",
    "tui_assist.session.headless",
    "tui_assist.providers.scripted",
    "tui_assist.providers.anthropic_info",
    "tui_assist.tools.registry",
    "tui_assist.store.db",
    "tui_assist.workflow",
    "tui_assist.workflow.prompt",
    "tui_assist.flows.helpdesk",
    "tui_assist.flows.docs.policies",
    "tui_assist.cli.flows",
    "tui_assist.session.config",
    "tui_assist.session.chat",
    "tui_assist.session.factory",
    "tui_assist.cli",
]


def _loaded(module: str) -> set[str]:
    code = f"import sys, {module}; print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.parametrize("module", NON_UI)
def test_non_ui_modules_never_load_textual(module: str) -> None:
    assert "textual" not in _loaded(module)


@pytest.mark.parametrize(
    "module",
    [
        "tui_assist.core",
        "tui_assist.turns.refine",
        "tui_assist.cli",
        "tui_assist.tools.registry",
        "tui_assist.session.chat",
    ],
)
def test_core_does_not_load_the_anthropic_sdk(module: str) -> None:
    assert "anthropic" not in _loaded(module)


@pytest.mark.parametrize(
    "module",
    ["tui_assist.tools.lsp", "tui_assist.tools.registry", "tui_assist.session.parts", "tui_assist.ui.app"],
)
def test_the_language_server_client_loads_only_when_a_server_starts(module: str) -> None:
    loaded = _loaded(module)
    assert "pygls" not in loaded
    assert "lsprotocol" not in loaded


@pytest.mark.parametrize(
    "module", ["tui_assist.session.controller", "tui_assist.session.chat", "tui_assist.store.db"]
)
def test_connecting_a_session_does_not_load_pydantic(module: str) -> None:
    # A resumed conversation's newest turns are read and drawn once the screen has its controller
    # and the store is open, before the settings are validated: pydantic loads after them.
    assert "pydantic" not in _loaded(module)
