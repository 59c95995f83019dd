"""A suggestion on one item: the request each job makes, its answer as word-level proposals, and the person's
decision recorded through the suggestion store (all taken: accept; some: amend; none: reject)."""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.authoring.job_templates import shipped_job_templates
from piqa_tui.core.authoring.suggesting import SuggestError, Target, decide, proposals, suggestion_request
from piqa_tui.core.generation.protocol import ModelSource, Provenance
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import suggestions

from .conftest import copy_sample

PROVENANCE = Provenance.now(ModelSource("SmolLM2-135M-Instruct.Q4_1.gguf", sha256="ab" * 32), "amina", "correct")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.open(copy_sample("darija-moroccan.tsv", tmp_path), annotator="amina")


def test_a_correction_is_proposed_per_changed_field_and_held_to_the_items_solutions(project: Project) -> None:
    item = project.items[0]
    template = shipped_job_templates()["correct"]
    request = suggestion_request(template, Target(item), "Darija")
    solutions = request.schema["properties"]["solutions"]  # type: ignore[index]
    assert solutions["minItems"] == solutions["maxItems"] == len(item.solutions)
    assert item.prompt in request.messages[-1].content
    fixed = item.solutions[1].replace("الما", "الماء")
    found = proposals(template, Target(item), {"goal": item.prompt, "solutions": [item.solutions[0], fixed]})
    assert [p.field for p in found] == ["solution1"] and [c.new for c in found[0].changes] == ["الماء"]
    with pytest.raises(SuggestError, match="does not give the item's 2 solutions"):
        proposals(template, Target(item), {"goal": "x", "solutions": ["one"]})


def test_a_distractor_replaces_the_wrong_solution_and_needs_a_label(project: Project) -> None:
    item = project.items[0]
    template = shipped_job_templates()["distractor"]
    right = item.solutions[item.label]  # type: ignore[index]
    assert right in suggestion_request(template, Target(item), "Darija").messages[-1].content
    (found,) = proposals(template, Target(item), {"solution": "شلل أتاي بالحليب"})
    assert found.field == f"solution{1 - item.label}"  # type: ignore[operator]
    unlabelled = item.with_changes(label=None)
    with pytest.raises(SuggestError, match="no gold label yet"):
        suggestion_request(template, Target(unlabelled), "Darija")


def test_a_fill_suggests_the_empty_translation_column(project: Project) -> None:
    item = project.items[0].with_changes(meta={**project.items[0].meta, "msa_translation": ""})
    template = shipped_job_templates()["fill"]
    request = suggestion_request(template, Target(item, "meta:msa_translation", "prompt"), "MSA")
    assert "msa_translation" in request.messages[-1].content and item.prompt in request.messages[-1].content
    (found,) = proposals(template, Target(item, "meta:msa_translation"), {"text": "كيف تعد الشاي؟"})
    assert (found.field, found.old, found.new) == ("meta:msa_translation", "", "كيف تعد الشاي؟")


def test_taken_changes_are_edits_naming_their_suggestion(project: Project) -> None:
    item = project.items[0]
    template = shipped_job_templates()["correct"]
    new_goal = item.prompt.replace("كتوجد", "كتصاوب") + " دابا"
    found = proposals(
        template,
        Target(item),
        {"goal": new_goal, "solutions": [item.solutions[0] + " مزيان", item.solutions[1] + " بزاف"]},
    )
    assert [p.field for p in found] == ["prompt", "solution0", "solution1"] and len(found[0].changes) == 2
    done = decide(project, item.id, found, [{0}, {0}, set()], PROVENANCE.to_json())
    assert done.changed == ["prompt", "solution0"] and done.rejected == 1
    now = project.item(item.id)
    assert now.prompt == found[0].result({0}) != new_goal  # only the change taken
    assert now.solutions == (item.solutions[0] + " مزيان", item.solutions[1])
    status = {s.field: s.status for s in suggestions(project)}
    assert status == {"prompt": "amend", "solution0": "accept", "solution1": "reject"}
    assert {s.model for s in suggestions(project)} == {"SmolLM2-135M-Instruct.Q4_1.gguf"}
    project.undo()  # the reject of solution1
    project.undo()  # solution0's accept, undone like any edit
    assert project.item(item.id).solutions[0] == item.solutions[0]
