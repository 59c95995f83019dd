"""Backspace and Delete as a Tamil, Bengali, Hindi or Arabic typist expects them, checked in the stored text.

Backspace takes the last vowel sign, virama, nukta or haraka of the cluster
before the cursor first (the last consonant of a conjunct), then the base;
Delete takes the whole cluster after the cursor; the cursor only ever stands
between clusters.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.text.graphemes import grapheme_spans
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

from .conftest import curate, main_screen, type_text

OTHER = "x y z"


def one_item(tmp_path: Path, prompt: str, solution: str) -> Path:
    """A one-item dataset whose first solution is ``solution``."""
    path = tmp_path / "one.tsv"
    path.write_text(
        f"id\tprompt\tsolution0\tsolution1\tlabel\nx-1\t{prompt}\t{solution}\t{OTHER}\t0\n", encoding="utf-8"
    )
    return path


async def edit_solution(path: Path, keys: list[str], typed: str = "") -> tuple[str, list[int]]:
    """Open ``path``, edit solution 1 with ``keys`` (then type ``typed``), commit; the stored text and cursor stops."""
    stops: list[int] = []
    async with curate(path) as pilot:
        await pilot.press("tab", "e")
        editor = pilot.app.focused
        assert isinstance(editor, FieldEditor)
        for key in keys:
            await pilot.press(key)
            stops.append(editor.cursor)
            assert editor.cursor in {0} | {end for _, end in grapheme_spans(editor.value)}
        await type_text(pilot, typed)
        await pilot.press("enter")
        stored = main_screen(pilot).project.item("x-1").solutions[0]
    assert Project.open(path, annotator="tester").item("x-1").solutions[0] == stored  # in the workspace
    return stored, stops


@pytest.mark.parametrize(
    ("prompt", "word", "presses", "expected"),
    [
        # Tamil "வும்": the pulli, then ம, then the vowel sign ு, then வ
        ("என்ன செய்ய வேண்டும்?", "செய்யவும்", 1, "செய்யவும"),
        ("என்ன செய்ய வேண்டும்?", "செய்யவும்", 2, "செய்யவு"),
        ("என்ன செய்ய வேண்டும்?", "செய்யவும்", 3, "செய்யவ"),
        # Bengali conjunct "দ্ধ": ধ, then the virama, then দ; "সে" loses its vowel sign first
        ("ভাত কীভাবে রাঁধবেন?", "সেদ্ধ", 1, "সেদ্"),
        ("ভাত কীভাবে রাঁধবেন?", "সেদ্ধ", 2, "সেদ"),
        ("ভাত কীভাবে রাঁধবেন?", "সেদ্ধ", 4, "স"),
        # Devanagari: vowel sign of a conjunct, then the nukta of "ज़"
        ("क्या करें?", "ज़क्ति", 1, "ज़क्त"),
        ("क्या करें?", "ज़क्ति", 4, "ज़"),
        ("क्या करें?", "ज़क्ति", 5, "ज"),
        # Arabic with harakat: "مَّد" loses د, then the shadda, then the fatha, then م
        ("كيفاش؟", "مُحَمَّد", 1, "مُحَمَّ"),
        ("كيفاش؟", "مُحَمَّد", 2, "مُحَمَ"),
        ("كيفاش؟", "مُحَمَّد", 3, "مُحَم"),
    ],
)
async def test_backspace_takes_the_last_mark_first(
    tmp_path: Path, prompt: str, word: str, presses: int, expected: str
) -> None:
    path = one_item(tmp_path, prompt, "abc " + word)
    stored, _ = await edit_solution(path, ["end"] + ["backspace"] * presses)
    assert stored == "abc " + expected


@pytest.mark.parametrize(
    ("word", "typed", "fixed"),
    [
        # a wrong vowel sign is fixed without retyping the consonant
        ("செய்யவி", "ு", "செய்யவு"),
        ("সেদ্ধি", "ু", "সেদ্ধু"),
        ("करि", "ी", "करी"),
        ("شُرْبَ", "ِ", "شُرْبِ"),
    ],
)
async def test_a_vowel_is_fixed_without_retyping_the_consonant(
    tmp_path: Path, word: str, typed: str, fixed: str
) -> None:
    path = one_item(tmp_path, "?", word)
    stored, _ = await edit_solution(path, ["end", "backspace"], typed)
    assert stored == fixed


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("வும்ட", "ம்ட"),  # "வு" goes whole
        ("দ্ধি", ""),  # the whole conjunct with its vowel sign
        ("क्षित", "त"),
        ("شَّاي", "اي"),  # letter, shadda and fatha together
    ],
)
async def test_delete_removes_the_whole_cluster_after_the_cursor(tmp_path: Path, word: str, expected: str) -> None:
    path = one_item(tmp_path, "?", word + " ok")
    stored, stops = await edit_solution(path, ["home", "delete"])
    assert stored == expected + " ok"
    assert stops == [0, 0]


async def test_arrows_stop_only_between_clusters(tmp_path: Path) -> None:
    word = "সেদ্ধ ক্ষত"
    path = one_item(tmp_path, "?", word)
    _, stops = await edit_solution(path, ["home"] + ["right"] * 5)
    assert stops == [0, len("সে"), len("সেদ্ধ"), len("সেদ্ধ "), len("সেদ্ধ ক্ষ"), len(word)]
