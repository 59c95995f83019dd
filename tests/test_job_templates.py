"""Generation jobs as TOML templates: the shipped ones, a team's own, and the one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.authoring.examples import similar_items
from piqa_tui.core.authoring.job_templates import JOB_FIELDS, find_job_template, job_catalog, shipped_job_templates
from piqa_tui.core.authoring.repetition import RepetitionGate
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.templates import shipped_templates
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

TEAM = """
description = "Darija drafts by taxonomy"
job = "draft"
examples = 2
prompt = "Write in {language} about {meta:category} in {meta:dialect}:\\n{examples}"
example = "{goal} / {solution0} / {solution1}"
[schema]
type = "object"
required = ["goal", "solutions"]
"""


def test_one_shipped_template_per_job_each_with_an_answer_schema() -> None:
    shipped = shipped_job_templates()
    assert {t.job for t in shipped.values()} == set(JOB_FIELDS)
    assert all(t.schema["type"] == "object" and len(t.digest) == 64 for t in shipped.values())
    assert not set(shipped) & set(shipped_templates())  # the scoring catalog does not read jobs/


def test_a_teams_template_by_path_renders_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "darija.toml"
    path.write_text(TEAM, encoding="utf-8")
    template = find_job_template(str(path), "draft", job_catalog())
    assert template.meta_columns() == ["category", "dialect"]
    template.check_columns(["dialect", "category", "source"], "darija.tsv")
    _, user = template.render(
        {"language": "Darija", "examples": "E", "metadata": ""}, {"category": "cooking", "dialect": "Moroccan"}
    )
    assert user == "Write in Darija about cooking in Moroccan:\nE"
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "draft.toml").write_text(TEAM, encoding="utf-8")  # a user's file of a shipped name replaces it
    assert job_catalog(folder)["draft"].meta_columns() == ["category", "dialect"]


def test_a_template_asking_for_a_column_the_dataset_lacks_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "darija.toml"
    path.write_text(TEAM, encoding="utf-8")
    template = find_job_template(str(path), "draft", job_catalog())
    with pytest.raises(TemplateError, match=r"asks for column 'dialect', which tamil.tsv lacks") as caught:
        template.check_columns(["category", "source"], "tamil.tsv")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (TEAM.replace('job = "draft"', 'job = "vote"'), "job must be one of"),
        (TEAM.replace("{examples}", "{label}"), "unknown placeholder {label}"),
        (TEAM.replace('required = ["goal", "solutions"]', 'required = ["goal"]'), "reads 'solutions'"),
        (TEAM.replace("examples = 2", "examples = 99"), "examples must be a whole number"),
        ("label = 1\n" + TEAM, "unknown key 'label'"),
        ("job = ", "not valid TOML"),
    ],
)
def test_bad_templates_are_one_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError, match=said) as caught:
        find_job_template(str(path), "draft", job_catalog())
    assert "\n" not in str(caught.value)


def test_a_template_of_another_job_or_an_unknown_name_is_refused() -> None:
    with pytest.raises(TemplateError, match="is a translate job, not draft"):
        find_job_template("translate", "draft", job_catalog())
    with pytest.raises(TemplateError, match="the draft templates are draft"):
        find_job_template("nope", "draft", job_catalog())


def test_examples_are_the_items_sharing_most_metadata(tmp_path: Path) -> None:
    project = Project.open(copy_sample("darija-moroccan.tsv", tmp_path), create=False)
    found = similar_items(project.items, {"category": "cleaning", "dialect": "Moroccan"}, 3)
    assert len(found) == 3 and all(item.meta["category"] == "cleaning" for item in found)


def item(n: int, goal: str, a: str, b: str) -> Item:
    return Item(str(n), goal, (a, b), None, n, {})


def test_near_copies_of_the_dataset_or_of_earlier_drafts_are_rejected(tmp_path: Path) -> None:
    project = Project.open(copy_sample("darija-moroccan.tsv", tmp_path), create=False)
    gate = RepetitionGate(project.items)
    first = project.items[0]
    copy = item(100, first.prompt, first.solutions[0], first.solutions[1] + ".")
    fresh = item(101, "To dry wet shoes quickly", "stuff them with newspaper", "stuff them with ice")
    again = item(102, "To dry wet shoes quickly", "stuff them with newspaper", "stuff them with snow")
    assert gate.admit([copy, fresh, again]) == [False, True, False]
    assert gate.admit([item(103, "To dry wet shoes quickly!", "stuff them with newspaper", "stuff them with ice")]) == [
        False
    ]
    assert gate.rejected == {"lexical": 3, "semantic": 0}  # no embedder given: lexical only
