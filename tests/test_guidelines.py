"""The round's guidelines and the annotators' questions about them, as a lead records, reads and answers them."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from piqa_tui.core.errors import InputError
from piqa_tui.core.round.guidelines import (
    MAX_GUIDELINES_BYTES,
    GuidelinesError,
    ask_part,
    guideline_questions,
    guideline_versions,
    guidelines_in_force,
    items_asked_about,
    read_guidelines_file,
)
from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.card import CardOptions, dataset_card
from tests.conftest import copy_sample
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported

GUIDE_V1 = "# Guidelines\n\nVote for the solution a person from the item's country would choose.\n"
GUIDE_V2 = GUIDE_V1 + "\n## Country relevance\n\nAnswer *yes* when people in other countries do the same.\n"


def markdown(folder: Path, text: str, name: str = "guide.md") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_guidelines_are_recorded_as_versions_each_with_its_sha256(tmp_path: Path) -> None:
    data = copy_sample("tamil.tsv", tmp_path)
    code, out, err = cli("round", data, "guidelines", markdown(tmp_path, GUIDE_V1), "--annotator", "lead")
    assert code == 0, err
    sha1 = hashlib.sha256(GUIDE_V1.encode()).hexdigest()
    assert f"guidelines recorded: version 1, sha256 {sha1}, recorded by lead" in out
    code, out, _ = cli("round", data, "guidelines", markdown(tmp_path, GUIDE_V1), "--annotator", "lead")
    assert "already in force; nothing recorded" in out
    code, out, _ = cli("round", data, "guidelines", markdown(tmp_path, GUIDE_V2), "--json", "--annotator", "lead")
    shown = json.loads(out)
    assert shown["recorded"] and shown["guidelines"]["version"] == 2
    assert shown["guidelines"]["sha256"] == hashlib.sha256(GUIDE_V2.encode()).hexdigest()
    project = Project.open(data)
    assert [v.version for v in guideline_versions(project.workspace)] == [1, 2]
    in_force = guidelines_in_force(project.workspace)
    assert in_force is not None and in_force.text == GUIDE_V2
    events = project.workspace.events(kinds=["guidelines"])
    assert [e.note for e in events] == [f"version 1, sha256 {sha1}", f"version 2, sha256 {in_force.sha256}"]


def test_show_names_the_version_in_force(tmp_path: Path) -> None:
    data = imported(culture_copy(tmp_path), doc_round(ARAB))
    code, out, _ = cli("round", data, "show")
    assert code == 0 and "guidelines: none recorded" in out
    cli("round", data, "guidelines", markdown(tmp_path, GUIDE_V1), "--annotator", "lead")
    code, out, _ = cli("round", data, "show")
    assert "guidelines: version 1, sha256 " + hashlib.sha256(GUIDE_V1.encode()).hexdigest() in out
    code, out, _ = cli("round", data, "show", "--json")
    assert json.loads(out)["guidelines"]["version"] == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "the guidelines file is empty"),
        (b"\xff\xfe# bad", "not UTF-8 text (byte 0)"),
        (b"#" * (MAX_GUIDELINES_BYTES + 1), "bytes is more than the"),
    ],
)
def test_a_bad_guidelines_file_is_one_line_and_records_nothing(tmp_path: Path, content: bytes, expected: str) -> None:
    data = copy_sample("tamil.tsv", tmp_path)
    path = tmp_path / "guide.md"
    path.write_bytes(content)
    code, out, err = cli("round", data, "guidelines", path)
    assert code != 0 and expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert guideline_versions(Project.open(data).workspace) == []


def test_a_fifo_or_a_folder_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "guide.md"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        read_guidelines_file(fifo)
    with pytest.raises(InputError, match="folder"):
        read_guidelines_file(tmp_path)


def test_questions_are_asked_listed_answered_and_undone(tmp_path: Path) -> None:
    data = copy_sample("tamil.tsv", tmp_path)
    annotator = Project.open(data, annotator="kavi")
    first = annotator.items[0].id
    annotator.record([ask_part(first, "Does a regional dish count as the country's?")])
    assert items_asked_about(annotator) == {first}
    code, out, _ = cli("round", data, "questions", "--json")
    (asked,) = json.loads(out)["questions"]
    assert asked["item"] == first and asked["asked_by"] == "kavi" and asked["open"]
    code, out, err = cli("round", data, "reply", asked["id"], "Yes: it is cooked there.", "--annotator", "lead")
    assert code == 0, err
    assert f"replied to {asked['id']} on item {first}: marked done" in out
    code, out, _ = cli("round", data, "questions")
    assert "1 guideline question, 0 without a reply" in out
    assert "reply by lead: Yes: it is cooked there." in out
    code, out, _ = cli("round", data, "questions", "--open", "--json")
    assert json.loads(out)["questions"] == []
    lead = Project.open(data, annotator="lead")
    assert lead.undo() == first  # the reply taken back: open again
    assert [q.open for q in guideline_questions(lead.workspace)] == [True]
    annotator.refresh()
    assert annotator.undo() == first  # the question withdrawn
    assert guideline_questions(annotator.workspace) == []
    assert items_asked_about(annotator) == frozenset()


def test_only_the_lead_sees_everyone_s_questions_by_item(tmp_path: Path) -> None:
    """Another annotator's question may say what they think of an item: outside reviewer mode, your own alone."""
    data = copy_sample("tamil.tsv", tmp_path)
    Project.open(data, annotator="kavi").record([ask_part("ta-001", "Which spelling?")])
    mine = Project.open(data, annotator="meena")
    mine.record([ask_part("ta-002", "Is this dish regional?")])
    assert items_asked_about(mine) == {"ta-001", "ta-002"}
    assert items_asked_about(mine, "meena") == {"ta-002"}
    assert items_asked_about(mine, "kavi") == {"ta-001"}


def test_a_reply_to_an_unknown_question_is_one_line(tmp_path: Path) -> None:
    data = copy_sample("tamil.tsv", tmp_path)
    Project.open(data, annotator="kavi").record([ask_part("ta-001", "Which spelling?")])
    code, out, err = cli("round", data, "reply", "q-nope", "text")
    assert code != 0 and "no guideline question 'q-nope' (open: q-" in err and "Traceback" not in err
    code, out, err = cli("round", data, "reply", "q-nope")
    assert code != 0 and "give the question's id and the reply" in err


def test_an_empty_or_control_character_question_is_refused() -> None:
    with pytest.raises(GuidelinesError, match="empty"):
        ask_part("x", "   ")
    with pytest.raises(GuidelinesError, match="control character"):
        ask_part("x", "see \x1b]52;c;aGk=\x07 here")


def test_guidelines_and_questions_travel_with_a_merge(tmp_path: Path) -> None:
    one = tmp_path / "one"
    two = tmp_path / "two"
    one.mkdir()
    two.mkdir()
    a = copy_sample("tamil.tsv", one)
    b = copy_sample("tamil.tsv", two)
    cli("round", a, "guidelines", markdown(tmp_path, GUIDE_V1), "--annotator", "lead")
    Project.open(b, annotator="kavi").record([ask_part("ta-001", "Is this spelling colloquial?")])
    merge_workspace(Project.open(a).workspace, Project.open(b).workspace.path)
    merged = Project.open(a)
    assert guidelines_in_force(merged.workspace).version == 1
    assert [q.text for q in guideline_questions(merged.workspace)] == ["Is this spelling colloquial?"]


def test_the_card_cites_the_round_and_the_guideline_version(tmp_path: Path) -> None:
    data = imported(culture_copy(tmp_path), doc_round(ARAB))
    cli("assign", data)
    cli("round", data, "guidelines", markdown(tmp_path, GUIDE_V1), "--annotator", "lead")
    cli("round", data, "guidelines", markdown(tmp_path, GUIDE_V2), "--annotator", "lead")
    card = dataset_card(Project.open(data), CardOptions(pseudonyms=True))
    section = card.split("### Annotation round", 1)[1].split("\n### ", 1)[0]
    sha = hashlib.sha256(GUIDE_V2.encode()).hexdigest()
    assert f"version 2 (SHA-256 `{sha}`," in section
    assert "| validator | 12 |" in section and "| writer | 12 |" in section and "| lead | 1 |" in section
    assert "validated blind by 1 validator;" in section
    assert "from the item's `country`" in section and "never the item's `author`" in section
    assert "writer-" not in section  # counts by role and attribute, no names
