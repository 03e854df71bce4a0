"""Flows and MCP from the command palette: the grounded question (with approval) and MCP status."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from textual.widgets import Input, RadioButton, RadioSet, Static

from tui_assist.core.tree import NodeLog
from tui_assist.flows.grounded import SAMPLE_CORPUS
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.factory import SetupError
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.screens.grounded_prompt import GroundedPromptScreen
from tui_assist.ui.widgets.flow_panel import FlowPanel
from tui_assist.ui.widgets.turn_parts import Notice

from .helpers import FakeToolbox, palette_searched, screen_text, settings, wait_until

CORPUS = SAMPLE_CORPUS


def _no_provider() -> object:
    raise SetupError("offline")


def offline_app(workdir: Path) -> TuiAssistApp:
    """A real store (under the test's XDG dirs) and no model: the grounded flow runs its rules."""
    return TuiAssistApp(
        settings(workdir),
        provider_factory=_no_provider,  # type: ignore[arg-type]
        toolbox_factory=lambda: FakeToolbox(workdir),
    )


async def run_palette(pilot, title: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+p")
    await pilot.press(*title)
    await wait_until(pilot, lambda: palette_searched(pilot.app, title))
    await pilot.press("enter")


def notices(app: TuiAssistApp) -> list[str]:
    return [n.source for n in app.screen.query(Notice)]


HOTEL = "How much can I spend on a hotel per night in London?"


def docs(tmp_path: Path) -> Path:
    corpus = tmp_path / "docs"
    shutil.copytree(CORPUS, corpus)
    return corpus


async def open_form(pilot) -> GroundedPromptScreen:  # type: ignore[no-untyped-def]
    """The form, opened as the palette's "flow: grounded question" does (that path is tested above)."""
    await pilot.app.session.wait_ready()
    await pilot.app.workers.wait_for_complete()
    pilot.app.main_screen.action_ask_grounded()
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, GroundedPromptScreen))
    form = pilot.app.screen
    assert isinstance(form, GroundedPromptScreen)
    # Ready for typing once the question has the focus.
    await wait_until(pilot, lambda: getattr(pilot.app.focused, "id", None) == "grounded-question")
    return form


async def type_into(pilot, form: GroundedPromptScreen, field: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """Replace a field's text: all but the last character pasted in, the last one typed."""
    box = form.query_one(f"#grounded-{field}", Input)
    box.focus()
    await pilot.pause()  # focusing selects the old text; the paste below replaces it
    box.value = text[:-1]
    box.cursor_position = len(box.value)
    await pilot.press(text[-1])


def problem(form: GroundedPromptScreen, field: str) -> str | None:
    """The problem shown under a field, or None when none is shown."""
    error = form.query_one(f"#grounded-{field}-error", Static)
    return None if error.has_class("-hidden") else str(error.render())


async def test_grounded_question_animates_the_flow_cites_and_approves(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    shutil.copytree(CORPUS, corpus)
    app = offline_app(corpus)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        main = app.main_screen

        # A question the docs answer: the flow panel draws the run, the answer cites its chunk.
        await run_palette(pilot, "flow: grounded question")
        await wait_until(pilot, lambda: isinstance(app.screen, GroundedPromptScreen))
        assert app.screen.query_one("#grounded-corpus", Input).value == str(corpus)
        await pilot.press(*"How much can I spend on a hotel per night in London?", "enter")
        await wait_until(pilot, lambda: any("**grounded** · `answered`" in n for n in notices(app)))
        flow = main.query_one(FlowPanel)
        log: NodeLog = main.log_model
        root = log.nodes[flow.turn_id or ""]
        assert (root.kind, root.label, root.status) == ("flow", "grounded", "done")
        labels = [r.label for r in log.walk(root.node_id)]
        assert {"classify", "retrieve #1", "answer", "check citations", "release"} <= set(labels)
        answer = notices(app)[-1]
        assert "London 180 GBP" in answer and "`[handbook-travel#c0004]`" in answer
        assert "grounded" in screen_text(app)
        assert main.held_run_id is None

        # A question that drafts an email is held: nothing is sent until f8 approves it.
        await run_palette(pilot, "flow: grounded question")
        await wait_until(pilot, lambda: isinstance(app.screen, GroundedPromptScreen))
        await pilot.press(*"Draft an email to my manager asking for approval of my business travel", "enter")
        await wait_until(pilot, lambda: main.held_run_id is not None)
        held = notices(app)[-1]
        assert "`awaiting_approval`" in held and "Held for approval" in held and "**f8**" in held
        run_id = main.held_run_id
        assert run_id is not None
        await pilot.press("f8")
        await wait_until(pilot, lambda: notices(app)[-1].startswith("**approved**"))
        assert main.held_run_id is None
        approved = notices(app)[-1]
        assert "`answered`" in approved and "Subject: Business travel" in approved
        row = await app.session.store.get_flow_run(run_id)
        assert row is not None and row.outcome == "answered"
        await pilot.press("f8")  # nothing is held any more: f8 does nothing
        await pilot.pause()
        assert notices(app)[-1] == approved


async def test_mcp_palette_with_no_servers(tmp_path: Path) -> None:
    app = offline_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await run_palette(pilot, "mcp: list servers")
        await wait_until(pilot, lambda: any("MCP servers" in n for n in notices(app)))
        assert "no MCP servers configured" in notices(app)[-1]
        assert "no MCP servers configured" in screen_text(app)
        await run_palette(pilot, "mcp: restart server")
        await wait_until(pilot, lambda: any("no MCP servers" in n.message for n in app._notifications))


async def test_choosing_a_flow_panel_row_inspects_its_inputs_and_outputs(tmp_path: Path) -> None:
    from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted
    from tui_assist.ui.widgets.node_inspector import NodeInspector

    app = offline_app(tmp_path)
    async with app.run_test(size=(120, 34)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        main = app.main_screen
        inspector = main.query_one(NodeInspector)
        assert inspector.has_class("-empty")
        for event in (
            NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="agent turn", detail="list it"),
            ToolCallStarted(node_id="x", parent_id="t", call_id="c", name="bash", input={"command": "ls"}),
            ToolCallFinished(
                node_id="x", call_id="c", name="bash", output="notes.txt", is_error=False, duration=0.2
            ),
            NodeFinished(node_id="t", outcome="answered", output="One file."),
        ):
            main.apply_event(event)
        await pilot.pause()
        await pilot.click(FlowPanel, offset=(3, 1))
        await pilot.pause()
        assert inspector.node_id == "x" and not inspector.has_class("-empty")
        shown = str(inspector.render())
        assert '{"command": "ls"}' in shown and "notes.txt" in shown
        await pilot.click(FlowPanel, offset=(3, 0))
        assert inspector.node_id == "t"
        assert "list it" in str(inspector.render()) and "One file." in str(inspector.render())


async def test_the_form_shows_a_missing_corpus_inline_and_keeps_what_was_typed(tmp_path: Path) -> None:
    corpus = docs(tmp_path)
    app = offline_app(corpus)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(pilot)
        corpus_box = form.query_one("#grounded-corpus", Input)
        question_box = form.query_one("#grounded-question", Input)

        # An empty question is refused in place.
        await pilot.press("enter")
        assert app.screen is form and problem(form, "question") == "Type a question."
        assert question_box.has_class("-invalid")

        # A folder that isn't there: the error sits under the field, which gets the focus back.
        await type_into(pilot, form, "corpus", "handbooks")
        await type_into(pilot, form, "question", HOTEL)
        assert problem(form, "question") is None  # editing the question cleared its problem
        await pilot.press("enter")
        assert app.screen is form
        assert problem(form, "corpus") == f"No folder at {(corpus / 'handbooks').resolve()}."
        assert corpus_box.has_class("-invalid") and app.focused is corpus_box
        assert (corpus_box.value, question_box.value) == ("handbooks", HOTEL)
        assert "No folder at" in screen_text(app)
        assert not any("grounded question" in n for n in notices(app)) or app.screen is form

        # A file is not a folder either; enter on the field checks it at once.
        await type_into(pilot, form, "corpus", "handbook-travel.md")
        assert problem(form, "corpus") is None
        await pilot.press("enter")
        assert "is a file" in (problem(form, "corpus") or "") and app.focused is corpus_box

        # Fixed (relative paths are read from the workdir), enter moves on; enter there asks.
        await type_into(pilot, form, "corpus", ".")
        await pilot.press("enter")
        assert problem(form, "corpus") is None and app.focused is question_box
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("**grounded** · `answered`" in n for n in notices(app)))
        assert f"corpus `{corpus.resolve()}`, rules leaves" in "".join(notices(app))


async def test_an_invalid_glossary_or_an_overlong_question_is_refused_in_the_form(tmp_path: Path) -> None:
    corpus = docs(tmp_path)
    (corpus / "glossary.json").write_text(json.dumps(["not", "an", "object"]), encoding="utf-8")
    app = offline_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(pilot)
        await type_into(pilot, form, "corpus", "docs")
        form.query_one("#grounded-question", Input).value = "why? " * 1000
        form.query_one("#grounded-question", Input).focus()
        await pilot.press("enter")
        assert app.screen is form
        assert "glossary.json is invalid" in (problem(form, "corpus") or "")
        assert "the limit is 4000" in (problem(form, "question") or "")
        assert app.focused is form.query_one("#grounded-corpus", Input)  # the first problem


async def test_the_data_file_is_checked_in_the_form_then_answers_data_questions(tmp_path: Path) -> None:
    corpus = docs(tmp_path)
    (tmp_path / "notes.db").write_text("these are notes, not a database", encoding="utf-8")
    with sqlite3.connect(tmp_path / "finance.sqlite") as db:
        db.executescript(
            """
            CREATE TABLE expenses (id INTEGER PRIMARY KEY, category TEXT, amount REAL, status TEXT);
            INSERT INTO expenses (category, amount, status) VALUES
                ('travel', 420.0, 'pending'), ('meals', 38.5, 'approved'), ('meals', 19.0, 'pending');
            """
        )
    app = offline_app(corpus)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(pilot)
        await type_into(pilot, form, "data", "../missing.sqlite")
        await pilot.press("enter")
        assert problem(form, "data") == f"No file at {(tmp_path / 'missing.sqlite').resolve()}."
        await type_into(pilot, form, "data", str(tmp_path / "notes.db"))
        await type_into(pilot, form, "question", "How many expenses are pending?")
        await pilot.press("enter")
        assert app.screen is form and problem(form, "data") == "notes.db is not an SQLite database."
        assert app.focused is form.query_one("#grounded-data", Input)

        await type_into(pilot, form, "data", "../finance.sqlite")
        await pilot.press("enter")  # fine: on to the question, which is still there
        assert app.focused is form.query_one("#grounded-question", Input)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("**grounded** · `answered`" in n for n in notices(app)))
        assert "[sql#1]" in notices(app)[-1]
        assert f"data `{(tmp_path / 'finance.sqlite').resolve()}`" in "".join(notices(app))


async def test_without_a_provider_model_leaves_are_disabled_and_explained(tmp_path: Path) -> None:
    app = offline_app(docs(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(pilot)
        model = form.query_one("#leaves-model", RadioButton)
        assert model.disabled and not model.value
        assert form.query_one("#leaves-rules", RadioButton).value and form.leaves == "rules"
        note = str(form.query_one("#grounded-leaves-note", Static).render())
        assert note == "offline. Rules answer from the documents alone."
        # The keyboard can't pick the disabled choice.
        form.query_one(RadioSet).focus()
        await pilot.press("down", "enter", "up", "down", "space")
        assert not model.value and form.leaves == "rules"
        assert "model: unavailable" in screen_text(app)


async def test_model_leaves_are_offered_with_a_provider_and_rules_can_be_chosen(tmp_path: Path) -> None:
    corpus = docs(tmp_path)
    provider = ScriptedProvider(
        [
            json.dumps({"label": "docs"}),
            "London hotels are capped at 180 GBP a night [handbook-travel#c0004].",
        ],
        model="scripted-model",
    )
    app = TuiAssistApp(
        settings(corpus), provider_factory=lambda: provider, toolbox_factory=lambda: FakeToolbox(corpus)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(pilot)
        model = form.query_one("#leaves-model", RadioButton)
        # With a model, it answers by default, as a chat turn would.
        assert not model.disabled and model.value and form.leaves == "model"
        assert "model: scripted · scripted-model" in screen_text(app)
        await type_into(pilot, form, "question", HOTEL)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("**grounded** · `answered`" in n for n in notices(app)))
        assert len(provider.requests) == 2
        assert "model leaves" in "".join(notices(app))

        # Rules chosen with the keyboard: answered from the documents, no model call made.
        form = await open_form(pilot)
        form.query_one(RadioSet).focus()
        await pilot.press("up", "enter")  # from the chosen model up to rules, and press it
        assert form.leaves == "rules" and not form.query_one("#leaves-model", RadioButton).value
        await type_into(pilot, form, "question", HOTEL)
        await pilot.press("enter")
        await wait_until(pilot, lambda: sum("`answered`" in n for n in notices(app)) == 2)
        assert len(provider.requests) == 2
        assert "rules leaves" in notices(app)[-2]


async def test_a_provider_still_loading_is_offered_once_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import tui_assist.session.factory as factory

    release = threading.Event()
    provider = ScriptedProvider([], model="scripted-model")

    def slow_make(settings: object) -> ScriptedProvider:
        release.wait(10)  # built in a thread, as the Anthropic one is; held until the test says
        return provider

    monkeypatch.setattr(factory, "make_provider", slow_make)
    app = TuiAssistApp(settings(tmp_path), toolbox_factory=lambda: FakeToolbox(tmp_path))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert not app.session.ready
            app.main_screen.action_ask_grounded()
            await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "grounded-question")
            form = app.screen
            assert isinstance(form, GroundedPromptScreen)
            model = form.query_one("#leaves-model", RadioButton)
            assert model.disabled and form.leaves == "rules"
            assert "still loading. Rules answer" in str(
                form.query_one("#grounded-leaves-note", Static).render()
            )

            release.set()
            await wait_until(pilot, lambda: not model.disabled)
            # Offered now, but the choice on screen is not switched under the user.
            assert form.leaves == "rules" and not model.value
            assert "model: scripted · scripted-model" in screen_text(app)
    finally:
        release.set()  # never leave the loader's thread waiting
