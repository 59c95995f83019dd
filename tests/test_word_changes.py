"""A suggestion as word-level changes taken one by one: none gives the old text, all give the suggestion."""

from __future__ import annotations

import itertools

import pytest

from piqa_tui.core.text.word_changes import apply_changes, word_changes

PAIRS = [
    ("the cat sat on mat", "the dog sat on the mat"),
    ("put the pot in the fridge", "put the pot on the stove"),
    ("a b c", "a c"),
    ("a b c", "a b"),
    ("x", "x y z"),
    ("", "new text"),
    ("one two", ""),
    ("شلل أَتَاي بشوية ديال الزيت السخون", "شلل أتاي بشوية ديال الما السخون عاد"),  # harakat dropped: a change
    ("அரிசிக்கு ஏற்ற அளவு தண்ணீர்", "அரிசிக்கு சரியான அளவு தண்ணீர்"),
]


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_every_subset_of_changes_gives_a_text_between_the_two(old: str, new: str) -> None:
    changes = word_changes(old, new)
    assert apply_changes(old, changes, []) == old
    assert apply_changes(old, changes, range(len(changes))) == new
    for size in range(len(changes) + 1):
        for taken in itertools.combinations(range(len(changes)), size):
            text = apply_changes(old, changes, taken)
            assert "  " not in text and text == text.strip()
            # every change taken is in the text, every one left is not
            for k, change in enumerate(changes):
                if change.new and k in taken:
                    assert change.new in text


def test_a_run_of_changed_words_is_one_change_and_case_counts() -> None:
    changes = word_changes("Put the pot in the fridge", "put the pot on the stove")
    assert [(c.old, c.new, c.kind) for c in changes] == [
        ("Put", "put", "replace"),
        ("in", "on", "replace"),
        ("fridge", "stove", "replace"),
    ]
    assert apply_changes("Put the pot in the fridge", changes, [1]) == "Put the pot on the fridge"


def test_the_offsets_are_logical_for_right_to_left_text() -> None:
    old = "كيفاش كتوجد أتاي بالنعناع"
    (change,) = word_changes(old, "كيفاش كتصاوب أتاي بالنعناع")
    assert old[change.start : change.end] == "كتوجد" == change.old
