"""A validator answers the round's extra questions by key (Q, then y/n or an option's number), and undoes one."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.round.questions import answers_in_force, record_answer
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.dialogs.questions import AnswerDialog, answers_status
from tests.test_questions import RELEVANT, doc_questions
from tests.test_rounds import ARAB, culture_copy, doc_round, imported

from .conftest import curate, current_id, main_screen, wait_for

ACCURACY = '[[question]]\nid = "accuracy"\ntext = "Cultural accuracy"\nkind = "number"\nmin = 1\nmax = 5\n'


def answers(dataset: Path) -> dict[str, dict[str, dict[str, str]]]:
    return answers_in_force(Project.open(dataset, create=False).workspace).by_question


async def test_the_country_question_is_answered_by_key_and_undone(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB) + doc_questions())
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        item = current_id(pilot)
        await pilot.press("Q")  # one question: its answer dialog at once
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: answers(dataset).get(RELEVANT, {}).get(item) == {"karim": "yes"})
        await wait_for(pilot, lambda: f"? {RELEVANT}: yes" in str(screen.view.item_view.title_line.render()))
        await pilot.press("Q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        await pilot.press("n")  # a later answer replaces the earlier
        await wait_for(pilot, lambda: answers(dataset)[RELEVANT][item] == {"karim": "no"})
        await pilot.press("u")
        await wait_for(pilot, lambda: answers(dataset)[RELEVANT][item] == {"karim": "yes"})
        await pilot.press("Q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        await pilot.press("backspace")  # taken back
        await wait_for(pilot, lambda: answers(dataset)[RELEVANT][item] == {})
    assert answers(dataset)[RELEVANT][item] == {}  # what the app recorded, read back after it closed


async def test_with_two_questions_one_is_picked_by_number_and_a_scale_is_typed(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB) + doc_questions() + ACCURACY)
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        item = current_id(pilot)
        await pilot.press("Q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        await pilot.press("2")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TextPrompt))
        await pilot.press("9", "enter")  # off the scale: the dialog says so and stays
        await pilot.pause()
        assert isinstance(pilot.app.screen, TextPrompt)
        await pilot.press("backspace", "4", "enter")
        await wait_for(pilot, lambda: answers(dataset).get("accuracy", {}).get(item) == {"karim": "4"})


async def test_without_questions_q_says_how_to_declare_them(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        await pilot.press("Q")
        await wait_for(pilot, lambda: any("asks no extra questions" in n.message for n in pilot.app._notifications))
        assert not isinstance(pilot.app.screen, AnswerDialog)


def test_the_title_line_shows_others_answers_only_where_blind_mode_allows(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB) + doc_questions())
    lead = Project.open(dataset, create=False)
    relevant = round_in_force(lead.workspace).question(RELEVANT)
    record_answer(Project.open(dataset, annotator="amina"), "msa-001", relevant, "yes")
    karim = Project.open(dataset, annotator="karim")
    assert answers_status(karim, "msa-001", see_others=False) == ""
    assert answers_status(karim, "msa-001", see_others=True) == f"? {RELEVANT}: — (others: yes)"
    record_answer(karim, "msa-001", relevant, "n")
    assert answers_status(karim, "msa-001", see_others=False) == f"? {RELEVANT}: no"
