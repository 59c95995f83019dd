"""Text from the data where a lead compares texts, drawn by the bidi display adapter, and never obeyed.

With ``--bidi app`` the Q dialog's question, the three versions in the C conflict dialog, the question quoted
in the guidelines reply dialog, the validation warning under the item and the status line's adjudication
reason must each draw what the adapter draws for the same Arabic text: shaped, in reading order (issue 37).
What is compared is what the widget draws (its lines as text) against ``core.text.bidi.layout``.

And a control character in such text is shown, never sent (issue 36): an RLO in a guideline question cannot
turn the app's own ``[open]`` into ``[nepo]``, and the warning line never draws a raw U+202E, whether the app
or the terminal does bidi.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widgets import Static

from piqa_tui.core.round.guidelines import ask_part, guideline_questions
from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.text.direction import Direction
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import TITLE_CELLS, TextPrompt
from piqa_tui.tui.dialogs.questions import AnswerDialog
from piqa_tui.tui.screens.guidelines import GuidelinesScreen
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from tests.test_rounds import ARAB, culture_copy, doc_round, imported

from .conftest import curate, drawn_lines, main_screen, type_text, wait_for
from .test_adjudication_conflicts_tui import adjudicated_on_two_machines
from .test_merge_conflicts_tui import edited_on_two_machines, open_dialog

QUESTION = "هل يعرف هذا الشيء كل الناس في بلدك؟"
REASON = "الما بارد خير من الما السخون"
RLO = "\u202e"
BIG = (120, 50)


def adapter_lines(text: str, width: int, direction: Direction = Direction.AUTO) -> list[str]:
    """What the adapter draws for ``text`` at ``width`` in app mode, line by line (alignment aside)."""
    return [line.text for line in layout(text, width, BidiMode.APP, direction=direction)]


def assert_drawn_by_the_adapter(static: Static, text: str, direction: Direction = Direction.AUTO) -> None:
    """Every line the adapter makes of ``text`` at the widget's width is on the widget, and the text as stored
    (logical order, unshaped) is not."""
    drawn = drawn_lines(static)
    for line in adapter_lines(text, static.size.width, direction):
        assert line in drawn, (line, drawn)
    assert text not in drawn


async def go_to(pilot: Pilot, item_id: str) -> None:
    await pilot.press("colon")
    await type_text(pilot, item_id)
    await pilot.press("enter")
    await pilot.pause()


async def test_the_q_dialog_draws_an_arabic_question_as_the_adapter_does(tmp_path: Path) -> None:
    question = f'[[question]]\nid = "known"\ntext = "{QUESTION}"\nkind = "yes/no"\n'
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB) + question)
    async with curate(dataset, annotator="karim", bidi_mode=BidiMode.APP) as pilot:
        await pilot.press("Q")  # one question: its answer dialog at once, titled with the question
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        await pilot.pause()
        title = pilot.app.screen.query_one(Vertical).border_title  # what the border draws
        assert title == adapter_lines(QUESTION, TITLE_CELLS)[0] and title != QUESTION


async def test_the_c_dialog_draws_both_versions_and_the_base_as_the_adapter_does(darija: Path) -> None:
    base, amina, yacine = edited_on_two_machines(darija)
    async with curate(darija, size=BIG, annotator="lead", bidi_mode=BidiMode.APP) as pilot:
        dialog = await open_dialog(pilot)
        await pilot.pause()
        message = dialog.query_one(".dialog-help", Static)
        for version in (base, amina, yacine):
            assert_drawn_by_the_adapter(message, version)


async def test_the_c_dialog_of_two_decisions_draws_the_chosen_texts_as_the_adapter_does(darija: Path) -> None:
    amina, yacine = adjudicated_on_two_machines(darija)
    async with curate(darija, size=BIG, annotator="lead", reviewer=True, bidi_mode=BidiMode.APP) as pilot:
        dialog = await open_dialog(pilot)
        await pilot.pause()
        message = dialog.query_one(".dialog-help", Static)
        for version in (amina, yacine):
            assert_drawn_by_the_adapter(message, version)
        assert "amina's reason" in drawn_lines(message)


async def test_the_reply_dialog_quotes_the_question_as_the_adapter_draws_it(darija: Path) -> None:
    asker = Project.open(darija, annotator="amina")
    asker.record([ask_part("dz-001", QUESTION)])
    asker.workspace.close()  # type: ignore[union-attr]
    async with curate(darija, size=BIG, annotator="lead", reviewer=True, bidi_mode=BidiMode.APP) as pilot:
        await pilot.press("W")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, GuidelinesScreen))
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TextPrompt))
        await pilot.pause()
        assert_drawn_by_the_adapter(pilot.app.screen.query_one(".dialog-help", Static), QUESTION)


async def test_the_warning_under_the_item_is_drawn_as_the_adapter_does(darija: Path) -> None:
    async with curate(darija, size=BIG, bidi_mode=BidiMode.APP) as pilot:
        screen = main_screen(pilot)
        await go_to(pilot, "dz-033")
        session = screen.session
        position = next(n for n, item in enumerate(session.project.items) if item.id == "dz-033")
        (problem,) = [p for p in session.validation.problems(position) if p.rule == "too-many-differences"]
        line = f"⚠ {problem.detail}  [{problem.rule}]"
        widget = screen.item_view.query_one("#problems", Static)
        drawn = drawn_lines(widget)
        for shown in adapter_lines(line, widget.size.width, Direction.LTR):
            assert shown in drawn, (shown, drawn)
        assert problem.detail not in drawn  # the Arabic words quoted are shaped, in reading order
        assert drawn.startswith("⚠ solution 1 and solution 2 differ by")  # on the app's left-to-right line


async def test_the_status_line_draws_the_adjudication_reason_as_the_adapter_does(darija: Path) -> None:
    lead = Project.open(darija, annotator="lead")
    for who, choice in (("amina", "0"), ("karim", "1")):
        Project.open(darija, annotator=who).vote("dz-007", choice)
    lead.adjudicate("dz-007", 1, REASON)
    lead.workspace.close()  # type: ignore[union-attr]
    async with curate(darija, size=BIG, annotator="lead", reviewer=True, bidi_mode=BidiMode.APP) as pilot:
        await go_to(pilot, "dz-007")
        status = drawn_lines(main_screen(pilot).item_view.query_one(VotePanel)).splitlines()[1]
        assert status.startswith("status  adjudicated → 2 by lead: ")
        assert status.rstrip().endswith(adapter_lines(REASON, 200)[0])
        assert REASON not in status


@pytest.mark.parametrize("mode", [BidiMode.APP, BidiMode.TERMINAL])
async def test_an_rlo_in_a_guideline_question_leaves_open_as_it_is(darija: Path, mode: BidiMode) -> None:
    asker = Project.open(darija, annotator="amina")
    asker.record([ask_part("dz-001", f"why {RLO}is this so")])
    asker.workspace.close()  # type: ignore[union-attr]
    async with curate(darija, size=BIG, annotator="lead", reviewer=True, bidi_mode=mode) as pilot:
        await pilot.press("W")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, GuidelinesScreen))
        await pilot.pause()
        assert guideline_questions(pilot.app.session.project.workspace)[0].open
        drawn = drawn_lines(pilot.app.screen.query_one("#guidelines-questions", Static))
        line = next(line for line in drawn.splitlines() if "amina" in line)
        assert line.rstrip().endswith("[open]") and "[nepo]" not in line
        assert RLO not in line and "why \\u202eis this so" in line  # shown as stdout shows it


@pytest.mark.parametrize("mode", [BidiMode.APP, BidiMode.TERMINAL])
async def test_the_warning_line_never_draws_a_raw_rlo(darija: Path, mode: BidiMode) -> None:
    project = Project.open(darija, annotator="setup")
    words = " ".join(f"{RLO}word{n}" for n in range(6))
    project.edit("dz-001", {"solution1": f"{project.item('dz-001').solutions[0]} {words}"})
    project.workspace.close()  # type: ignore[union-attr]
    async with curate(darija, size=BIG, bidi_mode=mode) as pilot:
        await pilot.pause()
        drawn = drawn_lines(main_screen(pilot).item_view.query_one("#problems", Static))
        assert "differ by" in drawn and terminal_safe(RLO) in drawn
        assert RLO not in drawn
