"""The suggestion store (``core/workspace/suggestions``): a model's values wait for a person; accepting one is an
ordinary edit that names the suggestion, rejecting one is recorded too, both undo in one step, and suggestions
and decisions travel with a merge (decided on one laptop, seen on the other) through the gate's rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from piqa_tui.core.generation.protocol import ModelSource, Provenance
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import (
    NewSuggestion,
    SuggestionError,
    accept,
    kept_rates,
    pending,
    record_suggestions,
    reject,
    suggestion_of,
    suggestions,
)
from tests.test_merge import DATA, merge

from .conftest import copy_sample

SOURCE = ModelSource("SmolLM2-135M-Instruct.Q4_1.gguf", sha256="ab" * 32, backend="local")


def provenance() -> str:
    return Provenance.now(SOURCE, by="lead", job="classify", params={"values": ["food", "home"]}).to_json()


def suggest(project: Project, *pairs: tuple[str, str]) -> list[str]:
    record_suggestions(project, [NewSuggestion(item, "meta:category", value, provenance()) for item, value in pairs])
    return [s.id for s in suggestions(project)][-len(pairs) :]


def test_accept_is_an_edit_naming_the_suggestion_and_undoes_in_one_step(tmp_path: Path) -> None:
    project = Project.open(copy_sample(DATA, tmp_path), annotator="amina")
    before = project.item("dz-001").meta["category"]
    first, second = suggest(project, ("dz-001", "food"), ("dz-002", "home"))
    assert project.item("dz-001").meta["category"] == before  # nothing reaches the item without a person
    assert [s.id for s in pending(project)] == [first, second]
    assert pending(project, "dz-001")[0].model == SOURCE.model

    kept = accept(project, first)
    assert kept.status == "accept" and kept.decided_by == "amina"
    assert project.item("dz-001").meta["category"] == "food"
    edit = project.workspace.events(["edit"])[-1]  # type: ignore[union-attr]
    assert suggestion_of(edit.note) == first and edit.new == "food"
    assert [s.id for s in pending(project)] == [second]
    with pytest.raises(SuggestionError, match="already decided"):
        reject(project, first)

    assert project.undo() == "dz-001"  # the edit and the decision together
    assert project.item("dz-001").meta["category"] == before
    assert [s.id for s in pending(project)] == [first, second]

    assert reject(project, second).status == "reject"
    assert project.item("dz-002").meta["category"] != "home" or before == "home"
    amended = accept(project, first, "cooking at home")
    assert amended.status == "amend" and project.item("dz-001").meta["category"] == "cooking at home"
    (rate,) = kept_rates(suggestions(project))
    assert (rate.accepted, rate.amended, rate.rejected, rate.pending) == (0, 1, 1, 0)
    assert rate.kept_share == 0.0


def test_a_bad_suggestion_records_nothing(tmp_path: Path) -> None:
    project = Project.open(copy_sample(DATA, tmp_path), annotator="amina")
    good = NewSuggestion("dz-001", "meta:category", "food", provenance())
    with pytest.raises(SuggestionError, match="no-such-item"):
        record_suggestions(project, [good, NewSuggestion("no-such-item", "meta:category", "x", provenance())])
    with pytest.raises(SuggestionError, match="names its model|provenance"):
        record_suggestions(project, [good, NewSuggestion("dz-002", "meta:category", "x", '{"source": {}}')])
    with pytest.raises(SuggestionError, match="provenance"):
        record_suggestions(project, [NewSuggestion("dz-002", "meta:category", "x", '{"a": 1, "a": 2}')])
    assert suggestions(project) == []
    with pytest.raises(SuggestionError, match="no suggestion"):
        accept(project, "nope")


def test_suggestions_and_decisions_travel_with_a_merge(tmp_path: Path) -> None:
    lead_dir, laptop_dir = tmp_path / "lead", tmp_path / "laptop"
    lead_dir.mkdir()
    copy_sample(DATA, lead_dir)
    lead = Project.open(lead_dir / DATA, annotator="lead")
    made = suggest(lead, ("dz-003", "food"), ("dz-004", "home"))
    lead.workspace.close()  # type: ignore[union-attr]
    shutil.copytree(lead_dir, laptop_dir)

    laptop = Project.open(laptop_dir / DATA, annotator="selma")
    accept(laptop, made[0])
    reject(laptop, made[1])
    laptop.workspace.close()  # type: ignore[union-attr]

    merge(lead_dir, laptop_dir)
    merged = Project.open(lead_dir / DATA, annotator="lead")
    assert [(s.id, s.status, s.decided_by) for s in suggestions(merged)] == [
        (made[0], "accept", "selma"),
        (made[1], "reject", "selma"),
    ]
    assert merged.item("dz-003").meta["category"] == "food"
