"""Keys typed ahead: a burst of keys, all in the app's queue before it handles the first (as a slow SSH link
delivers them), lands where the user was typing, in order: editing keys act where they were typed, the text
after a tab goes to the next field, and the text after the key that opens a dialog or the new-item form goes
into it. Each test sends its keys in one burst and reads back what the workspace recorded."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from textual import events

from piqa_tui.core.round.guidelines import guideline_questions
from piqa_tui.core.round.stages import stage_of
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.main import MainScreen

from .conftest import burst, curate, current_id, main_screen, wait_for
from .test_guidelines_tui import recorded

# Arabic as a keyboard may send it: alef then a combining hamza above (NFC: أ), and harakat after each letter.
ARABIC_TYPED = "سا\u0654ل الو\u064eلد\u064f عن الطريق"
ARABIC_SOLUTION = "ا\u0653خذ الخريطة معه"  # alef + combining madda: NFC آ


def at_rest(pilot) -> bool:
    """Back on the main screen with the list focused: every key of the burst has been handled."""
    screen = pilot.app.screen
    return isinstance(screen, MainScreen) and pilot.app.focused is screen.item_list


async def test_editing_keys_act_where_they_were_typed(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        burst(pilot, "e", "<ctrl+u>", "abX", "<backspace>", "c", "<enter>")
        await wait_for(pilot, lambda: screen.project.item("dz-001").prompt == "abc" and at_rest(pilot))
    assert Project.open(darija, annotator="tester").item("dz-001").prompt == "abc"


async def test_text_typed_after_a_tab_lands_in_the_next_field(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        burst(pilot, "e", "<ctrl+u>", "the goal", "<tab>", "<ctrl+u>", "first way", "<tab>", "<ctrl+u>", "second way")
        burst(pilot, "<enter>", "j")  # and the key after the last field's enter moves in the list
        await wait_for(pilot, lambda: at_rest(pilot) and current_id(pilot) == "dz-002")
        item = screen.project.item("dz-001")
        assert (item.prompt, item.solutions) == ("the goal", ("first way", "second way"))
    item = Project.open(darija, annotator="tester").item("dz-001")
    assert (item.prompt, item.solutions) == ("the goal", ("first way", "second way"))


async def test_the_new_item_form_takes_what_is_typed_after_the_key_that_opens_it(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        screen = main_screen(pilot)
        before = len(screen.project.items)
        burst(pilot, "I", "keep rice from sticking", "<tab>", "rinse the rice", "<tab>")
        burst(pilot, events.Paste("rinse the pot"), "<tab>", "2", "<enter>")  # two solution columns: gold next
        await wait_for(pilot, lambda: len(screen.project.items) == before + 1 and at_rest(pilot))
        new = screen.project.items[-1]
    written = Project.open(tamil, annotator="tester")
    item = written.item(new.id)
    assert (item.prompt, item.solutions, item.label) == (
        "keep rice from sticking",
        ("rinse the rice", "rinse the pot"),
        1,
    )
    assert stage_of(written, new.id) == "draft"


async def test_arabic_typed_ahead_is_stored_nfc_in_logical_order(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        burst(pilot, "e", "<ctrl+u>", ARABIC_TYPED, "<tab>", "<ctrl+u>", ARABIC_SOLUTION, "<enter>")
        stored = unicodedata.normalize("NFC", ARABIC_SOLUTION)
        await wait_for(pilot, lambda: screen.project.item("dz-001").solutions[0] == stored and at_rest(pilot))
    item = Project.open(darija, annotator="tester").item("dz-001")
    assert item.prompt == unicodedata.normalize("NFC", ARABIC_TYPED) == "سأل الوَلدُ عن الطريق"
    assert item.solutions[0] == unicodedata.normalize("NFC", ARABIC_SOLUTION) == "آخذ الخريطة معه"


async def test_dialogs_opened_and_typed_into_in_one_burst(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        screen = main_screen(pilot)
        # go to an id, flag it (a reason, then tab to the note), then search for a word of another item
        burst(pilot, ":", "ta-005", "<enter>", "f", "2", "<tab>", "why not", "<enter>")
        await wait_for(pilot, lambda: bool(screen.project.state.flags.get("ta-005")) and at_rest(pilot))
        assert current_id(pilot) == "ta-005"
        assert dict(screen.project.state.flags["ta-005"]) == {"culturally-wrong": "why not"}
        burst(pilot, "/", "குக்கரில்", "<enter>")
        await wait_for(pilot, lambda: current_id(pilot) == "ta-002" and at_rest(pilot))
    flags = Project.open(tamil, annotator="tester").state.flags
    assert dict(flags["ta-005"]) == {"culturally-wrong": "why not"}


async def test_a_metadata_value_typed_ahead_lands_in_its_dialog(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        burst(pilot, *["<tab>"] * 7, "e", "<ctrl+u>", "cafe\u0301 notes", "<enter>", "j")
        await wait_for(pilot, lambda: at_rest(pilot) and current_id(pilot) == "dz-002")
        assert screen.project.item("dz-001").meta["source"] == "caf\u00e9 notes"
    assert Project.open(darija, annotator="tester").item("dz-001").meta["source"] == "caf\u00e9 notes"


async def test_keys_after_a_save_wait_for_it_instead_of_finding_the_edit_keys_off(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        burst(pilot, "<ctrl+s>", "e", "<ctrl+u>", "after the save", "<enter>")
        await wait_for(pilot, lambda: screen.project.item("dz-001").prompt == "after the save" and at_rest(pilot))
    assert Project.open(darija, annotator="tester").item("dz-001").prompt == "after the save"


async def test_a_key_after_a_search_moves_among_its_results(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        burst(pilot, "/", "باش", "<enter>", "j")  # j: the second hit, not the second item before the search
        await wait_for(
            pilot,
            lambda: screen.filtering.search_result is not None and at_rest(pilot) and screen.item_list.cursor == 1,
        )
        hits = screen.filtering.search_result.positions
        assert len(hits) > 2 and screen.item_list.position == hits[1]


async def test_keys_typed_during_a_long_save_wait_for_it(darija: Path) -> None:
    """A save of a large file takes a while, and the edit keys are off meanwhile: what is typed behind a key that
    came during the save waits for it, then edits. The screen is held busy here as a save holds it (its edit keys
    greyed out), for as long as the test needs."""
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        screen.host.set_busy("saving")
        burst(pilot, "j", "e", "<ctrl+u>", "typed while saving", "<enter>")
        await wait_for(pilot, lambda: current_id(pilot) == "dz-002")  # moving works during a save
        await pilot.pause(0.5)
        assert screen.editing is None and screen.project.item("dz-002").prompt != "typed while saving"
        screen.host.set_busy("")
        await wait_for(pilot, lambda: screen.project.item("dz-002").prompt == "typed while saving" and at_rest(pilot))


async def test_a_question_to_the_lead_typed_ahead_from_the_main_screen(tmp_path: Path, tamil: Path) -> None:
    data = recorded(tamil)
    async with curate(data, annotator="kavi") as pilot:
        first = current_id(pilot)
        burst(pilot, "W", "a", "Is a festival dish specific to one country?", "<enter>")
        workspace = pilot.app.session.project.workspace
        await wait_for(pilot, lambda: guideline_questions(workspace))
        (question,) = guideline_questions(workspace)
        assert (question.item_id, question.text, question.asked_by) == (
            first,
            "Is a festival dish specific to one country?",
            "kavi",
        )
