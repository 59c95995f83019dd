"""The rules behind the list: queues, marks, search, translation columns, highlighted words (no screen)."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.text.characters import INVISIBLE
from piqa_tui.core.text.word_diff import word_spans
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.state.fields import (
    item_fields,
    label_text,
    solution_spans,
    translation_columns,
)
from piqa_tui.tui.state.listing import (
    Filters,
    Marks,
    Validation,
    filtered_positions,
    row_marks,
)
from piqa_tui.tui.state.search import SearchIndex, normalise
from piqa_tui.tui.state.session import OpenRequest, Session
from tests.conftest import SAMPLES


def ids(project: Project, positions: list[int]) -> list[str]:
    return [project.items[p].id for p in positions]


def test_queues_follow_the_workspace(darija: Path) -> None:
    session = Session.open(OpenRequest(darija, annotator="amina"))
    project = session.project
    assert len(filtered_positions(session, Filters(queue="unvoted"))) == 36
    project.vote("dz-001", "1")
    project.vote("dz-002", "skip")  # unsure still counts as voted
    project.set_flag("dz-003", "ungrammatical")
    project.swap_solutions("dz-004", 0, 1)
    assert "dz-001" not in ids(project, filtered_positions(session, Filters(queue="unvoted")))
    assert "dz-002" not in ids(project, filtered_positions(session, Filters(queue="unvoted")))
    assert ids(project, filtered_positions(session, Filters(queue="flagged"))) == ["dz-003"]
    assert ids(project, filtered_positions(session, Filters(queue="edited"))) == ["dz-004"]
    invalid = ids(project, filtered_positions(session, Filters(queue="invalid")))
    assert {"dz-012", "dz-024", "dz-033"} <= set(invalid)  # the planted problems of samples/README.md


def test_filters_combine_queue_column_and_search_order(darija: Path) -> None:
    session = Session.open(OpenRequest(darija, annotator="t"))
    project = session.project
    cooking = filtered_positions(session, Filters(column="category", value="cooking"))
    assert len(cooking) == 10 and all(project.items[p].meta["category"] == "cooking" for p in cooking)
    ranked = [30, 2, 5, 1]
    kept = filtered_positions(session, Filters(search="x"), ranked)
    assert kept == ranked  # search order is kept
    assert Filters(queue="invalid", column="category", value="health").describe() == "queue invalid, category = health"


def test_row_marks(darija: Path) -> None:
    session = Session.open(OpenRequest(darija, annotator="t"))
    project = session.project
    session.marks = Marks(duplicates={"dz-029"}, model_disagrees={"dz-007"})
    project.vote("dz-007", "0")
    project.edit("dz-007", {"prompt": project.item("dz-007").prompt + "!"})
    project.set_flag("dz-007", "culturally-wrong")
    row = row_marks(session, project.index["dz-007"], project.item("dz-007"))
    assert row == "✎✓⚑ ✗  "  # the last cell is the decision status: 1 vote of 3 needs more
    assert row_marks(session, project.index["dz-029"], project.item("dz-029"))[3] == "≈"
    assert row_marks(session, project.index["dz-012"], project.item("dz-012"))[5] == "!"


def test_validation_forgets_an_item_once_it_changes(darija: Path) -> None:
    project = Project.open(darija, annotator="t")
    validation = Validation(project)
    position = project.index["dz-024"]
    assert [p.rule for p in validation.problems(position)] == ["whitespace"]
    project.edit("dz-024", {"solution1": project.item("dz-024").solutions[1].strip()})
    assert validation.problems(position) == []


def test_search_normalises_what_annotators_type() -> None:
    assert normalise("الشَّاي") == normalise("الشاي") == "الشاي"
    assert normalise("  Le  THÉ\u200c ") == "le thé"
    assert normalise("e\u0301") == "é"  # NFC
    for invisible in INVISIBLE:  # every invisible character stored text may carry, as validate and dedup know them
        assert normalise(f"le{invisible} thé") == "le thé", f"U+{ord(invisible):04X}"


def test_search_ranks_substring_hits_before_fuzzy_ones() -> None:
    items = load_dataset(SAMPLES / "darija-algerian.tsv").items
    index = SearchIndex(items)
    result = index.search("الكسكسي")
    assert result.exact >= 1
    assert all(
        "الكسكسي" in normalise(items[p].prompt + " " + " ".join(items[p].solutions))
        for p in result.positions[: result.exact]
    )
    fuzzy = index.search("الكسكسى")  # alif maqsura for ya: no exact hit, fuzzy finds it
    assert fuzzy.exact == 0 and fuzzy.positions
    assert items[fuzzy.positions[0]].id == items[result.positions[0]].id


def test_translation_columns_are_found() -> None:
    dz = load_dataset(SAMPLES / "darija-algerian.tsv")
    assert translation_columns(dz) == {"prompt": ["msa_translation"]}
    ta = load_dataset(SAMPLES / "tamil.tsv")
    assert translation_columns(ta) == {"prompt": ["english_translation"]}
    msa = load_dataset(SAMPLES / "msa-culture.tsv")
    assert translation_columns(msa) == {}


def test_translation_columns_of_pindicqa_style_names(tmp_path: Path) -> None:
    path = tmp_path / "pindic.tsv"
    path.write_text(
        "goal\tsol1\tsol2\tlabel\tTranslated/Corrected Goal\tTranslated/Corrected Sol1\tcorrected_sol2\tDomain\n"
        "g\ta b\ta c\t0\tG\tA B\tA C\tfood\n",
        encoding="utf-8",
    )
    found = translation_columns(load_dataset(path))
    assert found == {
        "prompt": ["Translated/Corrected Goal"],
        "solution0": ["Translated/Corrected Sol1"],
        "solution1": ["corrected_sol2"],
    }


def test_differing_words_are_highlighted() -> None:
    a = "تغسل النعناع بالما البارد وتحطو فالبراد"
    b = "تغسل النعناع بالجافيل وتحطو فالبراد"
    spans = solution_spans((a, b), 0)
    assert [a[s:e] for s, e in spans] == ["بالما", "البارد"]
    assert [b[s:e] for s, e in solution_spans((a, b), 1)] == ["بالجافيل"]
    three = ("one two three", "one two four", "one five three")
    assert [three[0][s:e] for s, e in solution_spans(three, 0)] == ["two", "three"]
    assert solution_spans(("same", "same"), 0) == []
    assert word_spans(a)[0] == (0, 4)


def test_fields_and_label_text() -> None:
    msa = load_dataset(SAMPLES / "msa-culture.tsv")
    item = msa.items[0]
    assert [f.name for f in item_fields(msa, item)] == [
        "prompt",
        "solution0",
        "solution1",
        "solution2",
        "label",
        "note",
        "meta:country",  # tab reaches every metadata column after the note (issue 37: metadata is editable)
        "meta:region",
        "meta:topic",
        "meta:subtopic",
    ]
    assert label_text(msa, item) == "1 (option_a)"
    assert label_text(msa, item.with_changes(label=None)) == "none"
