"""A release's ``tasks/``: lm-evaluation-harness, loading them with its own ``TaskManager``, renders exactly the
contexts and continuations piqa-tui scores, for every item and every shipped template that applies.

Each task is built by the harness (its YAML loader, ``!function`` and Jinja, its ``fewshot_context`` and
``construct_requests``) from the release folder alone; the requests it would send a model are compared, as
exact strings, with piqa-tui's ``Template.request`` for the same item: an Arabic culture set (every shipped
template, metadata translated) and English PIQA (its labels file, no metadata: the templates without
``{meta:…}``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from piqa_tui.core.release.manifest import file_sha256
from piqa_tui.core.release.tasks import applicable, task_name
from piqa_tui.core.scoring.templates import Template, shipped_templates
from piqa_tui.core.workspace.project import Project
from tests.conftest import SAMPLES
from tests.test_rounds import cli

lm_eval_tasks = pytest.importorskip("lm_eval.tasks", reason="lm-eval is in the test extras")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
PIQA_EN = Path(__file__).parent / "data" / "piqa-en"


def arabic(folder: Path) -> Path:
    return Path(shutil.copy(SAMPLES / "msa-culture.tsv", folder / "msa-culture.tsv"))


def english(folder: Path) -> Path:
    shutil.copytree(PIQA_EN, folder / "piqa")
    return folder / "piqa" / "valid.jsonl"


def release(dataset: Path, folder: Path) -> Path:
    code, _, err = cli("export", dataset, "--release", folder, "--name", "Test", "--license", "cc-by-4.0")
    assert code == 0, err
    return folder


def harness_tasks(folder: Path) -> dict[str, object]:
    """The release's tasks as lm-eval builds them from the folder (its own tasks left out: faster, no clash)."""
    manager = lm_eval_tasks.TaskManager(include_path=str(folder / "tasks"), include_defaults=False)
    names = [entry["task"] for entry in json.loads((folder / "manifest.json").read_text())["tasks"]]
    return dict(manager.load(names)["tasks"])


@pytest.mark.parametrize("make", [arabic, english], ids=["arabic-culture", "english-piqa"])
def test_the_harness_renders_what_piqa_tui_scores_for_every_item_and_template(tmp_path: Path, make) -> None:
    dataset = make(tmp_path)
    folder = release(dataset, tmp_path / "v1")
    project = Project.open(dataset, create=False)
    items = [item for item in project.items if item.label is not None]
    shipped = shipped_templates()
    want = sorted(name for name, t in shipped.items() if applicable(t, items, project.dataset.columns))
    if make is arabic:
        assert want == sorted(shipped)  # the culture protocols, all three location contexts, both languages
    else:
        assert "piqa" in want and "bare" in want and not any("region" in name for name in want)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert sorted(entry["template"] for entry in manifest["tasks"]) == want
    for entry in manifest["tasks"]:
        assert manifest["files"][entry["file"]]["sha256"] == file_sha256(folder / entry["file"])
    tasks = harness_tasks(folder)
    assert len(tasks) == len(want)
    for entry in manifest["tasks"]:
        compare(tasks[entry["task"]], shipped[entry["template"]], items)


def compare(task: object, template: Template, items: list) -> None:
    """Every doc of ``task`` gives the requests piqa-tui sends for the item in its place, and its label."""
    docs = list(task.test_docs())
    assert len(docs) == len(items)
    for k, (doc, item) in enumerate(zip(docs, items)):
        requests = task.construct_requests(doc, task.fewshot_context(doc, 0), metadata=(task.config.task, k, 1))
        want = template.request(item)
        got = [r.arguments for r in requests]
        assert got == [(want.context, c) for c in want.continuations], (template.name, item.id)
        assert task.doc_to_target(doc) == item.label, (template.name, item.id)


def test_the_card_names_the_command_of_each_template_and_the_tasks_work_from_anywhere(tmp_path: Path) -> None:
    folder = release(arabic(tmp_path), tmp_path / "culture-v1")
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "lm_eval --model hf --model_args pretrained=MODEL --tasks TASK --include_path tasks" in card
    for name in shipped_templates():
        assert f"template `{name}`: `--tasks {task_name('culture-v1', name)}`" in card
    moved = tmp_path / "elsewhere" / "culture-v1"
    shutil.copytree(folder, moved)
    shutil.rmtree(folder)  # the copy reads its own data/, wherever it lies
    task = harness_tasks(moved)[task_name("culture-v1", "piqa")]
    assert len(list(task.test_docs())) == 30


def test_a_template_the_harness_would_misread_or_cannot_render_gets_no_task(tmp_path: Path) -> None:
    """``bare`` on a prompt of digits gives a context the harness reads as a number; the culture protocols
    need ``country`` and ``region`` columns: neither gets a task, the others do and still render exactly."""
    dataset = tmp_path / "digits.tsv"
    dataset.write_text(
        "id\tprompt\tsolution0\tsolution1\tlabel\n"
        "a\t2024\tA leap year\tNot a leap year\t0\n"
        "b\tOpen a jar\tTwist the lid\tHit the jar\t0\n",
        encoding="utf-8",
    )
    folder = release(dataset, tmp_path / "digits-v1")
    manifest = json.loads((folder / "manifest.json").read_text())
    written = {entry["template"] for entry in manifest["tasks"]}
    assert "bare" not in written and {"piqa", "mcq"} <= written
    assert not any(name.startswith("arab-culture") and "none" not in name for name in written)
    project = Project.open(dataset, create=False)
    tasks = harness_tasks(folder)
    for entry in manifest["tasks"]:
        compare(tasks[entry["task"]], shipped_templates()[entry["template"]], list(project.items))
