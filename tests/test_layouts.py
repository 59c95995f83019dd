"""Every layout in the README's "Datasets" table is recognised without configuration; others take a mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.core.dataset.layout import detect_layout, parse_mapping
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dataset.writing import write_dataset
from piqa_tui.core.errors import LayoutError

from .conftest import PIQA_VALID, SAMPLES, XCOPA_TA_TEST


@pytest.mark.parametrize(
    "columns,name,prompt,solutions,label,id_col",
    [
        (["goal", "sol1", "sol2", "label", "Domain", "Locale"], "piqa", "goal", ("sol1", "sol2"), "label", None),
        (
            ["id", "prompt", "solution0", "solution1", "label", "dialect"],
            "global-piqa",
            "prompt",
            ("solution0", "solution1"),
            "label",
            "id",
        ),
        (
            ["prompt", "solution0", "solution1", "solution2", "solution3", "label"],
            "global-piqa",
            "prompt",
            ("solution0", "solution1", "solution2", "solution3"),
            "label",
            None,
        ),
        (
            ["premise", "choice1", "choice2", "question", "label", "idx", "changed"],
            "copa",
            "premise",
            ("choice1", "choice2"),
            "label",
            "idx",
        ),
        (
            ["ID", "First Statement", "Option A", "Option B", "Option C", "Answer Key", "Country"],
            "culture",
            "First Statement",
            ("Option A", "Option B", "Option C"),
            "Answer Key",
            "ID",
        ),
    ],
)
def test_known_layouts(
    columns: list[str], name: str, prompt: str, solutions: tuple[str, ...], label: str, id_col: str | None
) -> None:
    layout = detect_layout(columns)
    assert (layout.name, layout.prompt, layout.solutions, layout.label, layout.id) == (
        name,
        prompt,
        solutions,
        label,
        id_col,
    )


def test_real_files_are_recognised() -> None:
    piqa = load_dataset(PIQA_VALID)
    assert piqa.layout.labels_file == "valid-labels.lst"
    assert sum(1 for i in piqa.items if i.label == 0) == 910 and sum(1 for i in piqa.items if i.label == 1) == 928
    xcopa = load_dataset(XCOPA_TA_TEST)
    assert xcopa.items[0].question in ("cause", "effect") and xcopa.items[0].id == "0"
    assert "changed" in xcopa.meta_columns


def test_letter_labels_read_and_written_as_letters(tmp_path: Path) -> None:
    path = tmp_path / "culture.csv"
    path.write_text(
        "id,premise,option_a,option_b,option_c,answer,country\n"
        "1,في العرس,يقدمون الكسكس,يقدمون السمك,يقدمون الخبز,A,Algeria\n"
        "2,في العيد,نلبس الجديد,نلبس القديم,نلبس الأسود,c,Morocco\n",
        encoding="utf-8",
    )
    ds = load_dataset(path)
    assert [i.label for i in ds.items] == [0, 2] and len(ds.items[0].solutions) == 3
    changed = [ds.items[0].with_changes(label=1), ds.items[1]]
    write_dataset(ds, changed, tmp_path / "out.csv")
    assert [line.split(",")[5] for line in (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()[1:]] == [
        "B",
        "c",
    ]


def test_explicit_mapping_and_one_based_labels(tmp_path: Path) -> None:
    path = tmp_path / "custom.jsonl"
    rows = [{"uid": "q1", "text": "boil an egg", "a": "in water", "b": "in sand", "gold": 1}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    mapping = parse_mapping("prompt=text,solutions=a|b,label=gold,id=uid,label_base=1")
    ds = load_dataset(path, mapping)
    assert ds.items[0].id == "q1" and ds.items[0].label == 0 and ds.items[0].solutions == ("in water", "in sand")
    write_dataset(ds, ds.items, tmp_path / "out.jsonl")
    assert json.loads((tmp_path / "out.jsonl").read_text())["gold"] == 1


def test_bad_mappings_are_explained() -> None:
    with pytest.raises(LayoutError, match="bad column mapping"):
        parse_mapping("prompt")
    with pytest.raises(LayoutError, match="not in the file"):
        detect_layout(["x", "y", "z"], {"prompt": "x", "solutions": "y|nope"})
    with pytest.raises(LayoutError, match="at most 4"):
        detect_layout(list("pabcde"), {"prompt": "p", "solutions": "a|b|c|d|e"})


def test_unknown_columns_are_kept_in_order(tmp_path: Path) -> None:
    path = tmp_path / "extra.tsv"
    path.write_text("zeta\tgoal\tsol1\talpha\tsol2\tlabel\nz\tg\ta b\tq\ta c\t1\n", encoding="utf-8")
    ds = load_dataset(path)
    assert ds.meta_columns == ["zeta", "alpha"] and ds.items[0].meta == {"zeta": "z", "alpha": "q"}
    write_dataset(ds, ds.items, tmp_path / "out.tsv")
    assert (tmp_path / "out.tsv").read_text().splitlines()[0] == "zeta\tgoal\tsol1\talpha\tsol2\tlabel"


def test_loading_pauses_the_cyclic_gc_and_gives_it_back() -> None:
    """load_dataset/Project.open run with the cyclic GC paused (bulk building) and leave it as they found it,
    also when loading fails."""
    import gc

    from piqa_tui.core.errors import InputError
    from piqa_tui.core.gcpause import gc_paused
    from piqa_tui.core.workspace.project import Project

    assert gc.isenabled()
    Project.open(SAMPLES / "tamil.tsv", create=False)
    assert gc.isenabled()
    with pytest.raises(InputError):
        Project.open(SAMPLES / "no-such-file.tsv", create=False)
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # nested inside a caller's pause: still paused afterwards
    finally:
        gc.enable()
