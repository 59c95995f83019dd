"""The agreement screen shows the round's extra questions as ``agree`` does, and copies what ``agree --markdown`` prints.

A round of the Arab-culture example with four questions (yes/no, an Arabic choice, a 1–5 scale, free text) is
answered by three validators; the lead opens the agreement screen (``a``) and reads the figures, which are
compared with a hand-computed case and with ``piqa-tui agree --markdown`` run as a process of its own, then
follows an answer given in another process while the screen is open.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from piqa_tui.core.round.questions import record_answer
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.screens.agreement import AgreementScreen
from tests.test_questions import RELEVANT, doc_questions
from tests.test_rounds import ARAB, culture_copy, doc_round, imported
from tests.tui.conftest import curate, wait_for

CLARITY = "هل صياغة السؤال واضحة؟"  # typed by the lead: Arabic, drawn right to left
MORE_QUESTIONS = f"""
[[question]]
id = "clarity"
text = "{CLARITY}"
kind = "choice"
options = ["واضحة", "غامضة"]

[[question]]
id = "accuracy"
text = "Cultural accuracy"
kind = "number"
min = 1
max = 5

[[question]]
id = "comment"
text = "Anything else?"
kind = "text"
"""
# (question, item, annotator) → answer. The yes/no question: three answers on four items, one on a fifth
# (yes, yes, yes / yes, no, yes / no, no, no / no, yes, no). By hand: Fleiss' κ = (2/3 - 1/2) / (1 - 1/2) = 1/3;
# Krippendorff's α from the coincidences (yes-yes 4, no-no 4, yes-no 2 + 2, n = 12) = 1 - 11 · 4 / (2 · 6 · 6)
# = 7/18 = 0.389; 2 of the 4 items unanimous.
ANSWERS = {
    RELEVANT: {
        "msa-001": ("y", "y", "y"),
        "msa-002": ("y", "n", "y"),
        "msa-003": ("n", "n", "n"),
        "msa-004": ("n", "y", "n"),
        "msa-005": ("y",),
    },
    "clarity": {"msa-001": ("1", "1"), "msa-002": ("1", "2"), "msa-003": ("2", "2", "2")},
    "accuracy": {"msa-001": ("5", "4", "5"), "msa-002": ("3", "3"), "msa-004": ("1", "2", "2")},
    "comment": {"msa-001": ("fine", "ok")},
}
VALIDATORS = ("amina", "karim", "salma")
WIDTH = 240


def answered(tmp_path: Path) -> Path:
    """The round with its questions imported, and every answer of ``ANSWERS`` recorded by its validator."""
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB) + doc_questions() + MORE_QUESTIONS)
    for name_at, name in enumerate(VALIDATORS):
        project = Project.open(dataset, annotator=name)
        for qid, by_item in ANSWERS.items():
            for item_id, given in by_item.items():
                if name_at < len(given):
                    answer(project, item_id, qid, given[name_at])
    return dataset


def answer(project: Project, item_id: str, qid: str, raw: str) -> None:
    """``project``'s annotator answers question ``qid`` of the round in force on ``item_id``."""
    declared = round_in_force(project.workspace)
    assert declared is not None
    record_answer(project, item_id, declared.question(qid), raw)


def agree_markdown(dataset: Path) -> str:
    """``piqa-tui agree PATH --markdown`` as a process of its own: its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "agree", str(dataset), "--markdown"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def question_sections(markdown: str) -> dict[str, list[list[str]]]:
    """The questions section of ``agree --markdown``: question id → its table rows (measure, value, items)."""
    section = markdown.split("\n### Extra questions\n\n", 1)[1]
    parts = re.split(r"(?m)^\*\*(.*)\*\*$", section)[1:]  # heading, body, heading, body…
    found: dict[str, list[list[str]]] = {}
    for heading, body in zip(parts[::2], parts[1::2], strict=True):
        rows = [line.split(" | ")[:3] for line in body.splitlines() if line.startswith("| ")]
        found[heading.split(" — ")[0]] = [[row[0].removeprefix("| "), *row[1:]] for row in rows[2:]]  # no header
    return found


def shown(screen: AgreementScreen) -> str:
    """The agreement screen's body as the terminal draws it (wide enough that no line wraps)."""
    console = Console(file=io.StringIO(), width=WIDTH, color_system=None)
    console.print(screen.query_one("#agreement-body", Static).content)
    return console.file.getvalue()  # type: ignore[attr-defined]


def blocks(body: str, ids: list[str]) -> dict[str, str]:
    """The screen's questions part cut at each question's heading (each starts with its id, left to right)."""
    part = body[body.index("Extra questions") :]
    starts = [part.index(f"\n{qid} — ") for qid in ids] + [len(part)]
    return {qid: part[starts[n] : starts[n + 1]] for n, qid in enumerate(ids)}


async def agreement_screen(pilot: Pilot) -> AgreementScreen:
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, AgreementScreen) and pilot.app.screen.snapshot)
    screen = pilot.app.screen
    assert isinstance(screen, AgreementScreen)
    return screen


async def test_the_screen_shows_and_copies_each_questions_agreement_as_agree_prints_it(tmp_path: Path) -> None:
    dataset = answered(tmp_path)
    printed = agree_markdown(dataset)
    from_cli = question_sections(printed)
    assert list(from_cli) == [RELEVANT, "clarity", "accuracy", "comment"]
    relevant = {row[0]: row[1:3] for row in from_cli[RELEVANT]}
    assert relevant["Fleiss' κ"] == ["0.333", "4"] and relevant["% unanimous"] == ["50.0%", "4"]  # by hand
    assert relevant["Krippendorff's α (nominal)"] == ["0.389", "4"]
    async with curate(dataset, annotator="hala", reviewer=True) as pilot:
        screen = await agreement_screen(pilot)
        body = shown(screen)
        assert body.index("Extra questions") > body.index("Fleiss")  # below the label agreement
        for qid, part in blocks(body, list(from_cli)).items():
            lines = part.splitlines()
            for measure, value, items in from_cli[qid]:  # the same figures, on the measure's own line of its table
                assert any(measure in line and value in line and f" {items} " in line for line in lines), (qid, measure)
        assert "free text: no agreement statistic" in blocks(body, list(from_cli))["comment"]
        heading = f"clarity — {CLARITY} (choice, policy majority): 7 answers, 3 items with 2+ answers"
        assert layout(heading, WIDTH, BidiMode.APP)[0].text in body  # through the bidi display: shaped, reordered
        assert CLARITY not in body  # not in the logical order a terminal without bidi would show backwards

        await pilot.press("y")
        assert pilot.app.clipboard + "\n" == printed  # print's own newline
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TextPrompt))
        await pilot.press("enter")  # the suggested name, beside the dataset
        saved = dataset.with_name(f"{dataset.stem}.agreement.md")
        await wait_for(pilot, saved.exists)
    assert saved.read_text(encoding="utf-8") + "\n" == printed


async def test_an_answer_given_elsewhere_changes_the_figures_on_the_open_screen(tmp_path: Path) -> None:
    dataset = answered(tmp_path)
    async with curate(dataset, annotator="hala", reviewer=True) as pilot:
        screen = await agreement_screen(pilot)
        assert f"{RELEVANT} — " in shown(screen) and ": 13 answers, 4 items" in shown(screen)
        answer(Project.open(dataset, annotator="karim"), "msa-005", RELEVANT, "n")  # another process's answer
        await wait_for(pilot, lambda: ": 14 answers, 5 items" in shown(screen))
        await pilot.press("y")
        assert pilot.app.clipboard + "\n" == agree_markdown(dataset)


async def test_without_questions_the_screen_and_its_markdown_have_no_questions_section(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    async with curate(dataset, annotator="hala", reviewer=True) as pilot:
        screen = await agreement_screen(pilot)
        assert "Extra questions" not in shown(screen)
        await pilot.press("y")
        assert "Extra questions" not in pilot.app.clipboard
        assert pilot.app.clipboard + "\n" == agree_markdown(dataset)
